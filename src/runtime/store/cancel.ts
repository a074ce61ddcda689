// Cancelling a run (`logbook cancel`): one nobody drives is cancelled at once; a live one is asked, through its row, to stop.

import { dbOf, type Db, type JournalConnection } from './db';
import { ErrorCodes, LogbookError, runNotFound } from '../errors';
import { canCancel } from '../policy';
import type { StoredRunStatus } from '../types';
import type { JournalReader } from './reader';
import { leaseIsLive } from './owner';
import { RunRow, checked } from './rows';
import { requireTransition } from './transitions';
import { tellLocalWriters } from './writer';
import type { CancelRequest } from './cancelRequest';

export { parseCancelRequest, type CancelRequest } from './cancelRequest';

/** What a cancel did: the run is cancelled now (nobody drove it), or its live holder was asked to stop at its next boundary. */
export type CancelResult =
  | { readonly kind: 'cancelled'; readonly previous: StoredRunStatus }
  | { readonly kind: 'requested'; readonly holder: string | null; readonly status: StoredRunStatus };

/**
 * One transaction, under the run row's lock (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE), so a resume or a worker's
 * claim racing it either took the lease first (then it is asked to stop, and its first boundary stops it) or finds the
 * run cancelled (RUN_TRANSITIONS allows nothing forward from there). A refusal changes nothing.
 */
export function cancelRun(conn: Db | JournalConnection, reader: JournalReader, runId: string, req: CancelRequest): CancelResult {
  const db = dbOf(conn);
  const locked = db.prepare(`SELECT * FROM runs WHERE id = ?${db.dialect.forUpdate}`);
  let result: CancelResult | undefined;
  const tx = db.transaction(() => {
    const found = locked.get(runId);
    const row = found === undefined ? undefined : checked(RunRow, found, 'run', reader.target);
    if (!row) throw runNotFound(runId);
    if (!canCancel(row.status)) throw notCancellable(row.id, row.status);
    const now = Date.now();
    const clock = db.leaseClock(now);
    const json = JSON.stringify(req);
    const event = db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)');
    if (row.lease_token && leaseIsLive(row, clock, db.dialect.leaseByExpiry)) {
      // Its holder reads this with its next fenced write or heartbeat, and stops itself: it alone settles what it has in flight.
      db.prepare('UPDATE runs SET cancel_requested = ?, updated_at = ? WHERE id = ?').run(json, now, runId);
      event.run(runId, row.attempt, now, 'run.cancel-requested', JSON.stringify({ reason: req.reason, compensate: req.compensate, by: req.by }));
      result = { kind: 'requested', holder: row.lease_owner, status: row.status };
      return;
    }
    requireTransition(runId, row.status, 'cancelled');
    // A new epoch: a holder this process judged dead (or a stale session) can write nothing after this.
    db.prepare(
      "UPDATE runs SET status = 'cancelled', cancel_requested = ?, wake_at = NULL, updated_at = ?, lease_token = NULL, lease_expires = NULL, lease_epoch = ? WHERE id = ?",
    ).run(json, now, row.lease_epoch + 1, runId);
    event.run(runId, row.attempt, now, 'run.cancelled', JSON.stringify({ reason: req.reason, by: req.by, previousStatus: row.status }));
    result = { kind: 'cancelled', previous: row.status };
  });
  tx.immediate();
  db.changed(runId);
  if (!result) throw runNotFound(runId);
  // Committed: a session of this very process that drives the run hears it now (others read the row).
  if (result.kind === 'requested') tellLocalWriters(runId, JSON.stringify(req));
  return result;
}

export function notCancellable(runId: string, status: StoredRunStatus): LogbookError {
  const why =
    status === 'completed'
      ? `Run ${runId} already completed; there is nothing to cancel.`
      : status === 'cancelled'
        ? `Run ${runId} is already cancelled.`
        : `Run ${runId} is ${status}: it no longer goes forward, so there is nothing to cancel.`;
  const remedy = status === 'compensated' ? `See it with \`logbook show ${runId}\`.` : `Undo what it did with \`logbook compensate ${runId}\`.`;
  return new LogbookError(ErrorCodes.RUN_NOT_CANCELLABLE, why, remedy, { runId, status });
}
