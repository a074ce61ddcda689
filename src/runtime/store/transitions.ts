// The store's side of the run status table: every status it writes is checked against policy.ts's RUN_TRANSITIONS.

import { ErrorCodes, LogbookError } from '../errors';
import { transitionAllowed } from '../policy';
import type { StoredRunStatus } from '../types';

/** Refuses, before anything is written, a status change the table does not allow (LB_ILLEGAL_TRANSITION). */
export function requireTransition(runId: string, from: StoredRunStatus, to: StoredRunStatus): void {
  if (transitionAllowed(from, to)) return;
  throw new LogbookError(
    ErrorCodes.ILLEGAL_TRANSITION,
    `Run ${runId} would go from ${from} to ${to}, which no step of a run's life allows; nothing was written, and the run is left ${from}.`,
    `This is a bug in Logbook: report it with the output of \`logbook show ${runId} --json\`.`,
    { runId, from, to },
  );
}
