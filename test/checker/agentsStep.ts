// The agents step kind: one Runner turn of the OpenAI Agents SDK, a scripted model calling the step's actions as tools.

import { Agent, Runner } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { logbookAgentsTool, logbookModelProvider } from 'agent-logbook/openai-agents';
import type { StepContext } from './steps';

/**
 * The answer is a function of the prompt only, so a call made again after a crash answers the same: first one tool
 * call per call of the step (in one response), then a text that reports what the tools returned.
 */
function answer(c: StepContext, call: LanguageModelV3CallOptions): LanguageModelV3Content[] {
  const results = call.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  if (results.length > 0) {
    // A tool error's text names the run (its key): the model reports only that the tool failed.
    const said = results.map((p) => {
      const out = 'output' in p ? (p.output as { type: string; value?: unknown }) : undefined;
      if (!out) return p.type;
      return out.type.startsWith('error') || (typeof out.value === 'string' && out.value.startsWith('The tool failed')) ? 'the tool failed' : out.value;
    });
    return [{ type: 'text', text: JSON.stringify(said) }];
  }
  return c.calls.map((k, i): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: `t${i}`, input: JSON.stringify(c.args(k.n)) }));
}

function scripted(c: StepContext): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'checker',
    modelId: 'agents-scripted-1',
    doGenerate: (call): Promise<LanguageModelV3GenerateResult> => {
      const content = answer(c, call);
      return Promise.resolve({
        content,
        finishReason: { unified: content.some((x) => x.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        response: { id: 'resp', modelId: 'agents-scripted-1', timestamp: new Date(Date.UTC(2026, 0, 1)) },
        warnings: [],
      });
    },
  });
}

export async function agentsStep(c: StepContext): Promise<unknown> {
  const tools = c.calls.flatMap((k, i) => {
    const action = c.defs[k.action];
    return action ? [logbookAgentsTool(c.run, { action, name: `t${i}`, description: `call ${action.type}` })] : [];
  });
  const model = scripted(c);
  const runner = new Runner({ modelProvider: logbookModelProvider(c.run, { getModel: () => aisdk(model) }), tracingDisabled: true });
  const agent = new Agent({ name: `step-${c.index}`, instructions: 'Make the calls.', tools, modelSettings: { parallelToolCalls: true } });
  const r = await runner.run(agent, `step ${c.index}: make the calls`, { maxTurns: 3 });
  return String(r.finalOutput);
}
