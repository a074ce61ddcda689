// Journal format 2 on SQLite: what a read of a run's state rows does first, so it sees every transition its log holds.

import type { Db } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import { FOLDED_SINCE, foldBehind, foldRun } from './fold';
import { sqliteOf } from './sqlite';
import { foldByLocalWriters } from './writer';
import { openJournalDb } from './open';

/**
 * What a reader of `db` calls before it reads a run's rows: undefined where they are written at once (PostgreSQL).
 * The schema is asked until it is format 2, not once: a reader may open a journal another process is still creating
 * or migrating, and a read-only open of an older file stays older (one pragma a read, only then).
 */
export function catchUpOf(db: Db): ((runId: string, target?: string) => void) | undefined {
  if (!db.dialect.foldsRows) return undefined;
  let folded = false;
  return (runId, target) => {
    folded ||= db.schemaVersion() >= FOLDED_SINCE;
    if (folded) catchUp(db, runId, target);
  };
}

/**
 * Brings run `runId`'s rows up to its log. Where this process's writer holds the run, it knows what it has not folded
 * (`target`: the action id or `#idx` the read is about), so a lookup costs nothing; otherwise one seek of the log past
 * the run's watermark says whether there is anything to fold, and any reader folds it, as the writer would.
 */
export function catchUp(db: Db, runId: string, target?: string): void {
  // Each knows only its own writes; a fold any of them makes applies the whole log past the watermark.
  if (foldByLocalWriters(db, runId, target)) return;
  let behind: boolean;
  try {
    behind = foldBehind(db, runId);
  } catch (err) {
    // The file was put back to a schema before format 2 while this reader had it open (an older backup restored over
    // it): its rows are all there is, and there is nothing to fold.
    if (db.schemaVersion() < FOLDED_SINCE) return;
    throw err;
  }
  if (!behind) return;
  if (sqliteOf(db).readonly) foldElsewhere(db.name, runId);
  else foldRun(db, runId);
}

/** A read-only open cannot fold: a connection of its own, opened for writing only for that, does it (nothing else). */
function foldElsewhere(file: string, runId: string): void {
  let rw: Db;
  try {
    rw = openJournalDb(file);
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.DB_READONLY,
      `Run ${runId} in ${file} stopped with transitions its steps and actions do not show yet (they are folded from its log when next read), and this read-only open could not fold them: ${err instanceof Error ? err.message : String(err)}`,
      `Open the journal once with write access (\`logbook show ${runId}\` from a user who may write ${file} folds them), then read it again.`,
      { runId, file },
    );
  }
  try {
    foldRun(rw, runId);
  } finally {
    rw.close();
  }
}
