// Checker invariant `fold-differs` (journal format 2, SQLite): a run's steps and actions, as the readers left them after
// every kill, takeover and fold along the way, are exactly what folding its whole log again from nothing gives.

import Database from 'better-sqlite3';
import { isDeepStrictEqual } from 'node:util';
import { isPostgresUrl } from '../../src/runtime/store';
import { sqliteDb } from '../../src/runtime/store/sqlite';
import { foldRun } from '../../src/runtime/store/fold';
import { RowWrites } from '../../src/runtime/store/rowOps';

/** The fold's own write, as loaded: a negative control that sabotages it live must not sabotage the check's refold. */
const writes = RowWrites.prototype as unknown as { apply: unknown };
const pristineApply = writes.apply;

/** Runs whose rows come from their log alone: not forks (their inherited rows are copied) nor runs older than format 2. */
const FOLDED_ONLY =
  "SELECT id FROM runs r WHERE forked_from IS NULL AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_id = r.id AND e.fold IS NULL AND e.kind IN ('action.started', 'action.committed', 'step.started', 'step.completed'))";

/** Each differing run, with what differs; empty when every run's rows are its log's fold. */
export function foldDifferences(target: string): string[] {
  if (isPostgresUrl(target)) return [];
  const live = new Database(target, { readonly: true });
  let copy: Database.Database;
  try {
    const image = live.serialize();
    // Bytes 18-19 say WAL mode, which a database in memory cannot open in: a rollback journal's, for the copy.
    image[18] = 1;
    image[19] = 1;
    copy = new Database(image);
  } finally {
    live.close();
  }
  const out: string[] = [];
  const patched = writes.apply;
  writes.apply = pristineApply;
  try {
    const db = sqliteDb(copy);
    const rowsOf = (runId: string): unknown[] => [
      ...copy.prepare('SELECT * FROM steps WHERE run_id = ? ORDER BY idx').all(runId),
      ...copy.prepare('SELECT * FROM actions WHERE run_id = ? ORDER BY seq').all(runId),
    ];
    for (const runId of copy.prepare(FOLDED_ONLY).pluck().all() as string[]) {
      // Brought up to its log as any reader would, then folded again from its first event.
      foldRun(db, runId);
      const read = rowsOf(runId);
      copy.prepare('DELETE FROM steps WHERE run_id = ?').run(runId);
      copy.prepare('DELETE FROM actions WHERE run_id = ?').run(runId);
      copy.prepare('UPDATE runs SET folded_seq = 0 WHERE id = ?').run(runId);
      try {
        foldRun(db, runId);
      } catch (err) {
        out.push(`run ${runId}: its log does not fold again from nothing: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const again = rowsOf(runId);
      let i = 0;
      while (i < Math.max(read.length, again.length) && isDeepStrictEqual(read[i], again[i])) i++;
      if (i < Math.max(read.length, again.length))
        out.push(`run ${runId}: a row reads ${JSON.stringify(read[i] ?? null)}, but its log folds to ${JSON.stringify(again[i] ?? null)}`);
    }
  } finally {
    writes.apply = patched;
    copy.close();
  }
  return out;
}
