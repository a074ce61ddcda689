// The ai step kind: one model turn through agent-logbook/ai, a scripted mock model calling the step's actions as tools.

import { generateText, stepCountIs } from 'ai';
import { logbookModel, logbookTools, type ToolEntry } from 'agent-logbook/ai';
import { scriptedModel, type ToolResultPart } from './scriptedModel';
import type { StepContext } from './steps';

// An error's text names the run (its key): the model reports only that the tool failed, as the same words every run.
const said = (p: ToolResultPart): unknown => ('output' in p ? (p.output.type.startsWith('error') ? 'the tool failed' : p.output) : p.type);

export async function aiStep(c: StepContext): Promise<unknown> {
  const entries: Record<string, ToolEntry> = {};
  c.calls.forEach((k, i) => {
    const action = c.defs[k.action];
    if (action) entries[`t${i}`] = { action, description: `call ${action.type}` };
  });
  const r = await generateText({
    model: logbookModel(c.run, scriptedModel(c, 'scripted-1', said), { reportReplays: false }),
    tools: logbookTools(c.run, entries),
    prompt: `step ${c.index}: make the calls`,
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  return r.text;
}
