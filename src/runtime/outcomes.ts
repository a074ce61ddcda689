// What a run or a compensation reports when it stops: plain data, shared by the engine, the CLI and the host API.

import type { Reconciliation, RunStatus } from './types';

/** What one attempt did: steps replayed or run, actions skipped, reconciled or executed. */
export interface AttemptStats {
  stepsReplayed: number;
  stepsRun: number;
  stepsRedone: number;
  actionsSkipped: number;
  actionsExecuted: number;
  actionsObserved: number;
  reconciled: Array<{ id: string; type: string; outcome: Reconciliation | 'needs-decision' }>;
  /** Actions this attempt left in doubt after an error from execute (the next attempt reconciles them). */
  leftInDoubt: Array<{ id: string; type: string; error: string }>;
  warnings: string[];
}

export interface CompensationReport {
  readonly runId: string;
  readonly status: RunStatus;
  /** Inverses applied by this call, newest-first. */
  readonly compensated: ReadonlyArray<{ id: string; type: string; redone: boolean }>;
  /** Inverses an earlier call already applied. */
  readonly alreadyCompensated: number;
  readonly irreversible: ReadonlyArray<{ id: string; type: string }>;
  /** In-doubt actions settled before compensating: verified, decided, or found not to have happened. */
  readonly settled: ReadonlyArray<{ id: string; type: string; outcome: string }>;
  readonly waitingOn?: { readonly actionId: string; readonly reason: string; readonly runId?: string };
  readonly error?: { readonly code?: string; readonly name: string; readonly message: string };
  /** The child runs (run.child) this compensation undid with the run, in the walk's order, and how each ended. */
  readonly children?: ReadonlyArray<{ readonly runId: string; readonly agent: string; readonly status: RunStatus; readonly compensated: number }>;
}

export interface RunOutcome {
  readonly runId: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly attempt: number;
  readonly output?: unknown;
  readonly error?: { readonly code?: string; readonly name: string; readonly message: string };
  /**
   * What the run waits for when it stopped in needs-decision or awaiting-approval. `runId` is set when the action is
   * its child's (run.child): decide or approve it there, then resume this run.
   */
  readonly waitingOn?: { readonly actionId: string; readonly reason: string; readonly runId?: string };
  /** When a run released `sleeping` is due (ms since the epoch). */
  readonly wakeAt?: number;
  /**
   * What a run released `waiting` waits for (run.waitFor): the event's name, and when the wait times out (null: never).
   * `runId` is set when the wait is its child's (run.child): send the event there, and both go on.
   */
  readonly waitingFor?: { readonly event: string; readonly until: number | null; readonly runId?: string };
  readonly stats: AttemptStats;
  readonly compensation?: CompensationReport;
}
