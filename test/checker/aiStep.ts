// The ai step kind: one model turn through agent-logbook/ai, a scripted mock model calling the step's actions as tools.

import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { logbookModel, logbookTools, type ToolEntry } from 'agent-logbook/ai';
import type { StepContext } from './steps';

/**
 * The model's answer is a function of its prompt only, so a call made again after a crash answers the same: first the
 * tool calls (one per call of the step, in one response, which the SDK runs in parallel), then a text that reports
 * what the tools returned, as a model telling its user would.
 */
function answer(c: StepContext, call: LanguageModelV3CallOptions): LanguageModelV3Content[] {
  const results = call.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  if (results.length > 0) {
    // An error's text names the run (its key): the model reports only that the tool failed, as the same words every run.
    const said = results.map((p) => ('output' in p ? (p.output.type.startsWith('error') ? 'the tool failed' : p.output) : p.type));
    return [{ type: 'text', text: JSON.stringify(said) }];
  }
  return c.calls.map((k, i): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: `t${i}`, input: JSON.stringify(c.args(k.n)) }));
}

function scripted(c: StepContext): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'checker',
    modelId: 'scripted-1',
    doGenerate: (call): Promise<LanguageModelV3GenerateResult> => {
      const content = answer(c, call);
      return Promise.resolve({
        content,
        finishReason: { unified: content.some((x) => x.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        response: { id: 'resp', modelId: 'scripted-1', timestamp: new Date(Date.UTC(2026, 0, 1)) },
        warnings: [],
      });
    },
  });
}

export async function aiStep(c: StepContext): Promise<unknown> {
  const entries: Record<string, ToolEntry> = {};
  c.calls.forEach((k, i) => {
    const action = c.defs[k.action];
    if (action) entries[`t${i}`] = { action, description: `call ${action.type}` };
  });
  const r = await generateText({
    model: logbookModel(c.run, scripted(c), { reportReplays: false }),
    tools: logbookTools(c.run, entries),
    prompt: `step ${c.index}: make the calls`,
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  return r.text;
}
