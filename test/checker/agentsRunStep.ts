// The agents-run kind: a checker step driven by logbookRunAgent, its gated calls pausing the Agents SDK's run (kept in
// the journal as the SDK's RunState) until the schedule's person answers; then the segment resumed from that state.

import { Agent, Runner } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import type { LanguageModelV3CallOptions, LanguageModelV3Content } from '@ai-sdk/provider';
import { logbookAgentsTool, logbookModelProvider, logbookRunAgent } from 'agent-logbook/openai-agents';
import { scriptedModel } from '../ai/mock';
import type { StepContext } from './steps';

/**
 * A function of the prompt only, so a call made again after a crash answers the same: one tool call per call of the
 * step (in one response), then a text saying what each tool answered (a rejection's words, a failure as such).
 */
function answer(c: StepContext, call: LanguageModelV3CallOptions): LanguageModelV3Content[] {
  const results = call.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  if (results.length === 0)
    return c.calls.map((k, i): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: `t${i}`, input: JSON.stringify(c.args(k.n)) }));
  const said = results.map((p) => {
    const out = 'output' in p ? (p.output as { type: string; value?: unknown }) : undefined;
    if (!out) return p.type;
    // A tool error's text names the run (its key): only that the tool failed is reported.
    return out.type.startsWith('error') || (typeof out.value === 'string' && out.value.startsWith('The tool failed')) ? 'the tool failed' : out.value;
  });
  return [{ type: 'text', text: JSON.stringify(said) }];
}

/** Runs the step's calls as an Agents SDK run of its own steps (`<name>`, `<name>: approval`, `<name>: resume 1`). */
export async function agentsRunSteps(c: StepContext, name: string): Promise<unknown> {
  const tools = c.calls.flatMap((k, i) => {
    const action = c.defs[k.action];
    // A gated action is the SDK's needsApproval: the SDK pauses its run there, and the journal keeps the state.
    return action
      ? [logbookAgentsTool(c.run, { action, name: `t${i}`, description: `call ${action.type}`, ...(action.approval ? { needsApproval: true } : {}) })]
      : [];
  });
  const { model } = scriptedModel((call) => answer(c, call), 'agents-run-1');
  const runner = new Runner({ modelProvider: logbookModelProvider(c.run, { getModel: () => aisdk(model) }), tracingDisabled: true });
  const agent = new Agent({ name: `step-${c.index}`, instructions: 'Make the calls.', tools, modelSettings: { parallelToolCalls: true } });
  const out = await logbookRunAgent(c.run, runner, agent, `step ${c.index}: make the calls`, { name, maxTurns: 3 });
  return String(out.finalOutput);
}
