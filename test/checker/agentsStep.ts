// The agents step kind: one Runner turn of the OpenAI Agents SDK, a scripted model calling the step's actions as tools.

import { Agent, Runner } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { logbookAgentsTool, logbookModelProvider } from 'agent-logbook/openai-agents';
import { scriptedModel, type ToolResultPart } from './scriptedModel';
import type { StepContext } from './steps';

// A tool error's text names the run (its key): the model reports only that the tool failed.
function said(p: ToolResultPart): unknown {
  const out = 'output' in p ? (p.output as { type: string; value?: unknown }) : undefined;
  if (!out) return p.type;
  return out.type.startsWith('error') || (typeof out.value === 'string' && out.value.startsWith('The tool failed')) ? 'the tool failed' : out.value;
}

export async function agentsStep(c: StepContext): Promise<unknown> {
  const tools = c.calls.flatMap((k, i) => {
    const action = c.defs[k.action];
    return action ? [logbookAgentsTool(c.run, { action, name: `t${i}`, description: `call ${action.type}` })] : [];
  });
  const model = scriptedModel(c, 'agents-scripted-1', said);
  const runner = new Runner({ modelProvider: logbookModelProvider(c.run, { getModel: () => aisdk(model) }), tracingDisabled: true });
  const agent = new Agent({ name: `step-${c.index}`, instructions: 'Make the calls.', tools, modelSettings: { parallelToolCalls: true } });
  const r = await runner.run(agent, `step ${c.index}: make the calls`, { maxTurns: 3 });
  return String(r.finalOutput);
}
