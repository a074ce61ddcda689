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

/** A child run (run.child) the cancel of its parent reached: cancelled at once, or its live holder asked to stop. */
export interface ChildCancelled {
  readonly runId: string;
  readonly how: 'at-once' | 'requested';
}

/**
 * What a cancel did: the run is cancelled now (nobody drove it), or its live holder was asked to stop at its next
 * boundary; and the same for each of its children (and theirs) that had not ended.
 */
export type CancelResult = (
  | { readonly kind: 'cancelled'; readonly previous: StoredRunStatus }
  | { readonly kind: 'requested'; readonly holder: string | null; readonly status: StoredRunStatus }
) & { readonly children: readonly ChildCancelled[] };

/**
 * One transaction, under the run row's lock (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE), so a resume or a worker's
 * claim racing it either took the lease first (then it is asked to stop, and its first boundary stops it) or finds the
 * run cancelled (RUN_TRANSITIONS allows nothing forward from there). A refusal changes nothing.
 */
export function cancelRun(conn: Db | JournalConnection, reader: JournalReader, runId: string, req: CancelRequest): CancelResult {
  const db = dbOf(conn);
  const locked = db.prepare(`SELECT * FROM runs WHERE id = ?${db.dialect.forUpdate}`);
  let result: CancelResult | undefined;
  const told: Array<{ runId: string; json: string }> = [];
  const tx = db.transaction(() => {
    const found = locked.get(runId);
    const row = found === undefined ? undefined : checked(RunRow, found, 'run', reader.target);
    if (!row) throw runNotFound(runId);
    if (!canCancel(row.status)) throw notCancellable(row.id, row.status);
    const now = Date.now();
    const clock = db.leaseClock(now);
    const event = db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)');
    /** Cancels one run: at once when no live session drives it, else asks its holder; says which. */
    const cancelOne = (r: RunRow, q: CancelRequest): 'requested' | 'at-once' => {
      const json = JSON.stringify(q);
      if (r.lease_token && leaseIsLive(r, clock, db.dialect.leaseByExpiry)) {
        // Its holder reads this with its next fenced write or heartbeat, and stops itself: it alone settles what it has in flight.
        db.prepare('UPDATE runs SET cancel_requested = ?, updated_at = ? WHERE id = ?').run(json, now, r.id);
        event.run(r.id, r.attempt, now, 'run.cancel-requested', JSON.stringify({ reason: q.reason, compensate: q.compensate, by: q.by }));
        told.push({ runId: r.id, json });
        return 'requested';
      }
      requireTransition(r.id, r.status, 'cancelled');
      // A new epoch: a holder this process judged dead (or a stale session) can write nothing after this.
      db.prepare(
        "UPDATE runs SET status = 'cancelled', cancel_requested = ?, wake_at = NULL, updated_at = ?, lease_token = NULL, lease_expires = NULL, lease_epoch = ? WHERE id = ?",
      ).run(json, now, r.lease_epoch + 1, r.id);
      event.run(r.id, r.attempt, now, 'run.cancelled', JSON.stringify({ reason: q.reason, by: q.by, previousStatus: r.status }));
      return 'at-once';
    };
    const how = cancelOne(row, req);
    // Its children (run.child), and theirs, in the same transaction: a parent cancelled goes on with none of them. They
    // are not compensated on their own: compensating the parent undoes them, in the order of its walk.
    const children: ChildCancelled[] = [];
    const childReq: CancelRequest = { ...req, compensate: false, reason: `its parent run ${runId} was cancelled${req.reason ? `: ${req.reason}` : ''}` };
    const kids = db.prepare(`SELECT * FROM runs WHERE parent_id = ? ORDER BY parent_step${db.dialect.forUpdate}`);
    const walk = (parentId: string): void => {
      for (const k of kids.all(parentId)) {
        const c = checked(RunRow, k, 'run', reader.target);
        if (canCancel(c.status)) children.push({ runId: c.id, how: cancelOne(c, childReq) });
        walk(c.id);
      }
    };
    walk(runId);
    result =
      how === 'requested'
        ? { kind: 'requested', holder: row.lease_owner, status: row.status, children }
        : { kind: 'cancelled', previous: row.status, children };
  });
  tx.immediate();
  db.changed(runId);
  if (!result) throw runNotFound(runId);
  for (const c of result.children) db.changed(c.runId);
  // Committed: a session of this very process that drives the run (or a child of it) hears it now (others read the row).
  for (const t of told) tellLocalWriters(t.runId, t.json);
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
