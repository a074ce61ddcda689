// Carrying out MIGRATIONS on a SQLite journal: each in its own immediate transaction, waiting out another process's
// upgrade of the same file, and keeping the views, triggers and indexes a user made on the journal's tables.

import type Database from 'better-sqlite3';
import { ErrorCodes, LogbookError } from '../errors';
import { LATEST_VERSION, MIGRATIONS, type Migration } from './migrations';

/**
 * How long an open waits for the write lock to upgrade a journal. Another process upgrading the same file holds it
 * for the whole copy (schema 10 rebuilds the journal's tables: about 5 s per million actions), longer than the busy
 * timeout an ordinary write waits; a lock held longer than this is not an upgrade, and is reported.
 */
export const MIGRATION_WAIT_MS = 2 * 60_000;

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

type SchemaObject = { type: 'view' | 'trigger' | 'index'; name: string; sql: string };

export function migrate(db: Database.Database, file: string): void {
  // A current journal is opened with reads alone: no write lock, so a writer busy (or frozen) in another process
  // does not hold up an open. Each migration checks the version again under its own write lock.
  if (version(db) >= LATEST_VERSION) return;
  let applied = false;
  for (const m of MIGRATIONS) {
    const apply = db.transaction(() => {
      const current = version(db);
      if (current >= m.version) return;
      applyMigration(db, m, file);
      db.pragma(`user_version = ${m.version}`);
      applied = true;
    });
    underWriteLock(db, file, m, () => apply.immediate());
  }
  if (applied) shrinkWal(db);
}

/**
 * A migration that rebuilds tables writes the whole journal into the WAL in one transaction (schema 10: 1.2 GB for a
 * million actions), and SQLite keeps a WAL file at the largest size it reached. Copied back into the database and
 * truncated here, it does not stay on the disk. Another process reading at this moment keeps its frames, and the
 * WAL its size until the journal size limit trims it at a later reset: nothing waits for that process.
 */
function shrinkWal(db: Database.Database): void {
  // A caller that migrates inside a transaction of its own holds the WAL: its checkpoint is a later one's to make.
  if (db.inTransaction) return;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (err) {
    // The upgrade is committed: a lock held elsewhere, or a disk too full to copy the WAL back, leaves it whole.
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !/^SQLITE_(BUSY|LOCKED|FULL)/.test(code)) throw err;
  }
}

function version(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Tries `fn` (which takes the write lock) until it gets the lock, or MIGRATION_WAIT_MS pass. */
function underWriteLock(db: Database.Database, file: string, m: Migration, fn: () => void): void {
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    try {
      fn();
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
      if (Date.now() >= deadline) {
        throw new LogbookError(
          ErrorCodes.DB_BUSY,
          `The journal ${file} must be upgraded to schema ${m.version} (${m.name}), and another process has held its write lock for ${Math.round(MIGRATION_WAIT_MS / 60_000)} minutes (schema ${version(db)} now). Nothing was changed.`,
          'If another Logbook is upgrading it, let it finish and try again; otherwise find the process that holds the file (a sqlite3 shell, a backup tool) and close it.',
          { file, version: m.version },
        );
      }
      Atomics.wait(PAUSE, 0, 0, 50);
    }
  }
}

/** The indexes the migrations themselves create: any other index on a journal table was added outside Logbook. */
const OWN_INDEXES = new Set(MIGRATIONS.flatMap((m) => [...m.sql.matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi)].map((x) => x[1])));

/**
 * Runs a migration keeping what was added to the journal outside Logbook (its own schema has no views or triggers):
 * a table a migration rebuilds is renamed and dropped on the way, which SQLite refuses while a view names it, and
 * which drops the table's triggers and indexes. Views and triggers are set aside and made again; an index of the
 * user's that the rebuild dropped is made again on the new table. One that no longer fits the new schema refuses the
 * upgrade, and the transaction leaves the journal as it was.
 */
export function applyMigration(db: Database.Database, m: Migration, file: string): void {
  const objects = db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE type IN ('view', 'trigger', 'index') AND sql IS NOT NULL ORDER BY rowid")
    .all() as SchemaObject[];
  const kept = objects.filter((o) => o.type !== 'index');
  for (const o of kept) db.exec(`DROP ${o.type === 'view' ? 'VIEW' : 'TRIGGER'} "${o.name.replaceAll('"', '""')}"`);
  db.exec(m.sql);
  const exists = db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').pluck();
  const lostIndexes = objects.filter((o) => o.type === 'index' && !OWN_INDEXES.has(o.name) && exists.get(o.name) === undefined);
  for (const o of [...lostIndexes, ...kept]) {
    try {
      db.exec(o.sql);
    } catch (err) {
      // Only a definition that no longer compiles is the object's fault; a full disk or a damaged file is not.
      if ((err as { code?: unknown }).code !== 'SQLITE_ERROR') throw err;
      throw new LogbookError(
        ErrorCodes.DB_OPEN_FAILED,
        `The journal ${file} cannot be upgraded to schema ${m.version} (${m.name}): the ${o.type} ${o.name}, which was added to it outside Logbook, does not fit the new schema (${(err as Error).message}). Nothing was changed.`,
        `Drop the ${o.type} (\`DROP ${o.type.toUpperCase()} ${o.name}\` in a sqlite3 shell) and open the journal again; recreate it afterwards to fit schema ${m.version}.`,
        { file, version: m.version, [o.type]: o.name },
      );
    }
  }
}
