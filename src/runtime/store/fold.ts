// Journal format 2 on SQLite: a run's `steps` and `actions` rows are folded from its log, past the run's watermark
// (`runs.folded_seq`), by whoever reads them first: the writer every FOLD_EVERY transitions, or a reader.

import type { Db, Statement } from './db';
import { decodeRowOps, foldedAsMade, opTarget, RowWrites, type RowOp } from './rowOps';
import { ErrorCodes, LogbookError } from '../errors';
import { sqliteOf } from './sqlite';

/** The schema version from which a SQLite journal's events carry their state writes (migration 12). */
export const FOLDED_SINCE = 12;

interface FoldStatements {
  readonly behind: Statement;
  readonly pending: Statement;
  readonly top: Statement;
  readonly mark: Statement;
  readonly writes: RowWrites;
  readonly lazy: ReturnType<Db['writeSupport']>['lazyAround'];
  readonly tx: (runId: string) => number;
}

const byDb = new WeakMap<Db, FoldStatements>();

function statements(db: Db): FoldStatements {
  let s = byDb.get(db);
  if (s !== undefined) return s;
  const q = {
    // Two seeks of events_by_run: the run's last event (a watermark past it, or not an integer, is damage: compared with
    // text or past the end, it would hide the writes after it), and the first write past the watermark.
    behind: db.prepare(BEHIND).pluck(),
    pending: db.prepare('SELECT seq, fold FROM events WHERE run_id = ? AND seq > ? AND fold IS NOT NULL ORDER BY seq').raw(true),
    top: db.prepare('SELECT folded_seq, (SELECT MAX(seq) FROM events WHERE run_id = :run), typeof(folded_seq) FROM runs WHERE id = :run').raw(true),
    mark: db.prepare('UPDATE runs SET folded_seq = ? WHERE id = ?'),
    writes: new RowWrites(db, null),
    lazy: db.writeSupport().lazyAround,
  };
  // Immediate: the watermark is read under the write lock, so two folders never apply the same write twice.
  const t = db.transaction((runId: string): number => {
    const top = q.top.get({ run: runId }) as [number, number | null, string] | undefined;
    if (top === undefined) return 0;
    const [from, to, type] = top;
    if (type !== 'integer' || from < 0 || from > (to ?? 0)) throw damagedWatermark(db.name, runId, from);
    if (to === null || to <= from) return 0;
    let n = 0;
    // Read whole first: a statement iterating holds the connection, and the writes need it (at most about FOLD_EVERY rows).
    for (const [seq, text] of q.pending.all(runId, from) as Array<[number, string]>) {
      for (const op of decodeRowOps(text, { file: db.name, runId, seq }))
        if (!foldedAsMade(op, q.writes.apply(runId, seq, op))) throw unmatched(db.name, runId, seq, op);
      n++;
    }
    q.mark.run(to, runId);
    return n;
  });
  s = { ...q, tx: (runId) => t.immediate(runId) };
  byDb.set(db, s);
  return s;
}

/** Whether run `runId` has writes its rows do not show yet. */
export function foldBehind(db: Db, runId: string): boolean {
  return behind(db, statements(db), runId);
}

function behind(db: Db, s: FoldStatements, runId: string): boolean {
  const state = s.behind.get({ run: runId }) as number | undefined;
  if (state === 2) throw damagedWatermark(db.name, runId);
  return state === 1;
}

const BEHIND =
  "SELECT CASE WHEN typeof(r.folded_seq) <> 'integer' OR r.folded_seq < 0 OR r.folded_seq > COALESCE((SELECT MAX(seq) FROM events WHERE run_id = :run), 0) THEN 2 " +
  'WHEN EXISTS (SELECT 1 FROM events WHERE run_id = :run AND seq > r.folded_seq AND fold IS NOT NULL) THEN 1 ELSE 0 END FROM runs r WHERE r.id = :run';

/**
 * Brings run `runId`'s rows up to its log, in one immediate transaction, not fsynced where the engine can skip it
 * (the rows are derived: lost with a power cut, they are folded again from the same log, which the WAL keeps in
 * order ahead of them). Returns how many events it folded.
 */
export function foldRun(db: Db, runId: string): number {
  const s = statements(db);
  if (!behind(db, s, runId)) return 0;
  // Inside a caller's transaction (a fork reading its origin) the fold is a savepoint of it, at its durability.
  if (sqliteOf(db).inTransaction) return s.tx(runId);
  s.lazy?.before.run();
  try {
    return s.tx(runId);
  } finally {
    s.lazy?.after.run();
  }
}

/** A write the log carries that finds no row to change: the rows were edited or damaged (the fold is rolled back). */
function unmatched(file: string, runId: string, seq: number, op: RowOp): LogbookError {
  const what = op[0].startsWith('step') ? `step ${opTarget(op)}` : `action ${JSON.stringify(opTarget(op))}`;
  return new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `The journal ${file} holds event #${seq} of run ${runId}, which changes ${what}, but the rows hold no such ${op[0].startsWith('step') ? 'step' : 'action'} to change (the row was edited or damaged). Nothing was written.`,
    `Restore the file from a backup (do not edit journal rows by hand), or go on without the run: \`logbook delete ${runId}\`.`,
    { runId, table: op[0].startsWith('step') ? 'steps' : 'actions', seq },
  );
}

/** A watermark that is not a seq of the run's log: read as it is, it would hide writes from the rows. */
function damagedWatermark(file: string, runId: string, value?: unknown): LogbookError {
  return new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `The journal ${file} says run ${runId}'s steps and actions are folded up to ${value === undefined ? 'a point' : JSON.stringify(value)} that is not an event of its log (runs.folded_seq was edited or damaged). Nothing was written.`,
    `Restore the file from a backup (do not edit journal rows by hand), or go on without the run: \`logbook delete ${runId}\`.`,
    { runId, table: 'runs' },
  );
}
