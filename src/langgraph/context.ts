// The run a LangGraph invocation is driven for (runGraph sets it): its nodes' actions and the saver's journal come from it.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunApi } from 'agent-logbook';

export interface Driving {
  readonly run: RunApi;
  /** The graph's LogbookSaver, as the interrupt gate reads it. */
  readonly saver: { readonly target: string; approvalNote(runId: string, actionId: string): string | null | undefined };
}

export const driving = new AsyncLocalStorage<Driving>();

const RUN_JOURNAL = Symbol.for('agent-logbook.run-journal');

/** The journal the run being driven here is journaled in, when a run is being driven. */
export function drivingJournal(): string | undefined {
  const run = driving.getStore()?.run as { [RUN_JOURNAL]?: unknown } | undefined;
  const j = run?.[RUN_JOURNAL];
  return typeof j === 'string' ? j : undefined;
}
