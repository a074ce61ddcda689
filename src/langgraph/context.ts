// The run a LangGraph invocation is driven for (runGraph sets it): its nodes' steps and actions, and the saver's journal, come from it.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunApi, SourceLocation } from 'agent-logbook';

/** What a node's step knows of the task it runs: read off the task's config, which LangGraph builds per task. */
export interface TaskFacts {
  readonly node: string;
  readonly superstep: number;
  readonly task: string;
  /** The checkpoint the task runs from (its superstep's input). */
  readonly checkpoint: string;
  /** The task's place, the step's name: `node@superstep`, with `#i` for the i-th Send to the node. */
  readonly place: string;
}

/** What a wrapped node asks of the runGraph driving it: a step of the run for this execution of the node. */
export interface NodeStepper {
  /** Runs `body` (the node) as the run's step for this task (at the position the journal gives it on a resume). */
  nodeStep(facts: TaskFacts, body: () => Promise<unknown>, at: SourceLocation | undefined): Promise<unknown>;
}

export interface Driving {
  readonly run: RunApi;
  /** The graph's LogbookSaver, as the interrupt gate reads it. */
  readonly saver: { readonly target: string; approvalNote(runId: string, actionId: string): string | null | undefined };
  /** Set by runGraph (each root node execution is a step); absent under invokeInStep (the graph is one step). */
  readonly steps?: NodeStepper;
}

export const driving = new AsyncLocalStorage<Driving>();

const RUN_JOURNAL = Symbol.for('agent-logbook.run-journal');

/** The journal the run being driven here is journaled in, when a run is being driven. */
export function drivingJournal(): string | undefined {
  const run = driving.getStore()?.run as { [RUN_JOURNAL]?: unknown } | undefined;
  const j = run?.[RUN_JOURNAL];
  return typeof j === 'string' ? j : undefined;
}
