// What journal.cancel and `logbook cancel` take and answer: public types kept apart from cancel.ts, which needs the store.

import type { CompensationReport } from './outcomes';
import type { RunStatus } from './types';

export interface CancelOptions {
  /** Journaled with the cancel, and shown by `logbook show`. */
  readonly reason?: string;
  /** Compensate the run's committed actions, newest first, once it has stopped. */
  readonly compensate?: boolean;
  /** Wait until a live run has stopped (and been compensated, if asked). Default true. */
  readonly wait?: boolean;
  readonly role?: string;
  /** How often a wait looks at the run (ms). */
  readonly pollMs?: number;
}

export interface CancelReport {
  readonly runId: string;
  /** `at-once`: nobody drove it; `at-boundary`: its live holder stopped; `requested`: not waited for; `finished-first`: it ended before a boundary. */
  readonly how: 'at-once' | 'at-boundary' | 'requested' | 'finished-first';
  /** The run's status when the call returned. */
  readonly status: RunStatus;
  readonly reason: string | null;
  readonly compensation?: CompensationReport;
  /** Its child runs (run.child) that had not ended: cancelled at once, or asked to stop (and waited for, unless `wait: false`). */
  readonly children?: ReadonlyArray<{ readonly runId: string; readonly how: 'at-once' | 'requested' }>;
}
