// Step kinds: how a generated step makes its calls. A new surface (a model turn, a graph node) plugs in here.

import type { ActionDefinition, RunApi } from 'agent-logbook';
import type { ActionJ, CallJ } from './spec';
import { aiStep } from './aiStep';
import { graphStep } from './graphStep';
import { agentsStep } from './agentsStep';
import { agentsRunSteps } from './agentsRunStep';

export interface StepContext {
  readonly run: RunApi;
  readonly defs: readonly ActionDefinition[];
  readonly actions: readonly ActionJ[];
  readonly args: (n: number) => { n: number; amount: number; tag: string };
  readonly calls: readonly CallJ[];
  readonly index: number;
}

export interface StepKind {
  /** What the generator may put in a step of this kind (ai steps take only actions whose errors are deterministic). */
  readonly accepts?: (a: ActionJ) => boolean;
  readonly run: (c: StepContext) => Promise<unknown>;
  /** Makes its own steps, named from the step's name, instead of running inside the one the checker makes. */
  readonly ownSteps?: (c: StepContext, name: string) => Promise<unknown>;
}

/** What an error says that does not depend on the run or the attempt: its code, else its class. */
export function errorWord(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | null;
  return typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'error';
}

async function call(c: StepContext, k: CallJ): Promise<unknown> {
  const def = c.defs[k.action];
  if (!def) throw new Error(`checker: no action ${k.action}`);
  const p = c.run.do(def, c.args(k.n));
  if (k.mode === 'use') return p;
  try {
    const r = await p;
    return k.mode === 'ignore' ? 'ignored' : r;
  } catch (err) {
    return k.mode === 'ignore' ? 'ignored' : `caught:${errorWord(err)}`;
  }
}

export const STEP_KINDS: Record<string, StepKind> = {
  /** One call after another. */
  seq: {
    run: async (c) => {
      const out: unknown[] = [];
      for (const k of c.calls) out.push(await call(c, k));
      return out;
    },
  },
  /** All calls at once (Promise.all): several actions in flight in one step. */
  all: { run: (c) => Promise.all(c.calls.map((k) => call(c, k))) },
  /** A model turn through agent-logbook/ai: a scripted model calls the step's actions as tools, then answers. */
  ai: { accepts: (a) => a.fail === 'none' || a.fail === 'definite', run: aiStep },
  /** LangGraph nodes (agent-logbook/langgraph's logbookDo), one per call: test/checker/langgraph.test.ts generates them. */
  graph: { accepts: (a) => a.fail === 'none' || a.fail === 'definite', run: (c) => graphStep(c) },
  /** The negative control of `graph`: its first node makes its effect itself, not through logbookDo. */
  'graph-raw-first': { accepts: (a) => a.fail === 'none' || a.fail === 'definite', run: (c) => graphStep(c, { rawFirst: true }) },
  /**
   * A child run (run.child) that makes the calls in a step of its own: the agent runs it outside any step (see
   * agent.ts); this body is never called there.
   */
  child: { run: () => Promise.reject(new Error('checker: a child step is made with run.child, not inside a step')) },
  /** A Runner turn of the OpenAI Agents SDK through agent-logbook/openai-agents: the step's actions as its tools. */
  agents: { accepts: (a) => a.fail === 'none' || a.fail === 'definite', run: agentsStep },
  /** An Agents SDK run through logbookRunAgent: gated calls pause it (its RunState journaled) until a person answers. */
  'agents-run': {
    accepts: (a) => a.fail === 'none' || a.fail === 'definite',
    run: () => Promise.reject(new Error('checker: agents-run makes its own steps')),
    ownSteps: agentsRunSteps,
  },
};
