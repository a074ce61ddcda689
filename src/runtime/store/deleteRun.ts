// Deleting a run and its whole journal (steps, actions, events) in one immediate transaction, refused while it is held.

import { ErrorCodes, LogbookError, runNotFound } from '../errors';
import type { Db } from './db';
import type { JournalReader } from './reader';

export interface DeletedCounts {
  readonly steps: number;
  readonly actions: number;
  readonly events: number;
}

/** Removes run `runId` and every row of it (its LangGraph thread's too); LB_RUN_NOT_FOUND, or LB_LEASE_HELD while a live process drives it. */
export function deleteRun(db: Db, reader: JournalReader, runId: string): DeletedCounts {
  let counts: DeletedCounts = { steps: 0, actions: 0, events: 0 };
  const tx = db.transaction(() => {
    const row = reader.run(runId);
    if (!row) throw runNotFound(runId);
    if (reader.view(row).leaseLive) {
      throw new LogbookError(
        ErrorCodes.LEASE_HELD,
        `Run ${runId} is being driven by ${row.lease_owner ?? 'another process'}; it cannot be deleted now.`,
        'Stop that process (or kill the run) first, then delete it.',
        { runId },
      );
    }
    const events = deleteEvents(db, runId);
    // Events sent to it (schema version 7: every journal this process writes is migrated to it).
    db.prepare('DELETE FROM inbox WHERE run_id = ?').run(runId);
    const actions = db.prepare('DELETE FROM actions WHERE run_id = ?').run(runId).changes;
    const steps = db.prepare('DELETE FROM steps WHERE run_id = ?').run(runId).changes;
    // The LangGraph thread runGraph drove for this run (its thread id is the run id) goes with it.
    for (const t of ['graph_writes', 'graph_blobs', 'graph_checkpoints']) db.prepare(`DELETE FROM ${t} WHERE thread_id = ?`).run(runId);
    db.prepare('DELETE FROM runs WHERE id = ?').run(runId);
    counts = { steps, actions, events };
  });
  tx.immediate();
  db.changed(runId);
  return counts;
}

/**
 * Deletes the run's events. On SQLite a seq is the largest in the table plus one (migration 11), so deleting the
 * newest rows would hand their seqs out again, and a change feed already past them would miss the runs that got them:
 * the largest seq is then kept by a marker row of no run (run_id ''), the only one there is.
 */
function deleteEvents(db: Db, runId: string): number {
  if (!db.dialect.seqsCanRepeat) return db.prepare('DELETE FROM events WHERE run_id = ?').run(runId).changes;
  const newest = db.prepare('SELECT COALESCE(MAX(seq), 0) FROM events').pluck();
  const before = newest.get() as number;
  const n = db.prepare('DELETE FROM events WHERE run_id = ?').run(runId).changes;
  if ((newest.get() as number) < before) {
    db.prepare("DELETE FROM events WHERE run_id = ''").run();
    db.prepare("INSERT INTO events (seq, run_id, attempt, at, kind) VALUES (?, '', 0, ?, 'journal.deleted')").run(before, Date.now());
  }
  return n;
}
