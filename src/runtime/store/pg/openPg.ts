// Opens a PostgreSQL journal: refuses a newer schema untouched, then migrates once under an advisory lock.

import { ErrorCodes, LogbookError } from '../../errors';
import { LATEST_VERSION } from '../migrations';
import { PG_MIGRATIONS } from './pgMigrations';
import { PgDb } from './pgDb';

/** pg_advisory_xact_lock key of schema migrations ("Logb" in ASCII): two processes starting at once migrate once. */
export const MIGRATION_LOCK = 0x4c6f6762;

const SCHEMA_TABLE = `CREATE TABLE IF NOT EXISTS logbook_schema (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`;

function installedVersion(db: PgDb): number {
  const exists = db.prepare("SELECT to_regclass('logbook_schema') IS NOT NULL").pluck().get() === true;
  return exists ? db.schemaVersion() : 0;
}

function refuseNewer(db: PgDb, version: number): void {
  if (version <= LATEST_VERSION) return;
  throw new LogbookError(
    ErrorCodes.DB_TOO_NEW,
    `The PostgreSQL journal ${db.name} has schema version ${version}, newer than this Logbook understands (${LATEST_VERSION}).`,
    'Upgrade agent-logbook to the version that wrote it; the database was not modified.',
    { db: db.name, version, supported: LATEST_VERSION },
  );
}

export function openPgJournal(url: string, opts: { readonly?: boolean } = {}): PgDb {
  const db = new PgDb(url);
  try {
    // Read before anything that writes: a newer schema must stay untouched.
    const version = installedVersion(db);
    refuseNewer(db, version);
    if (opts.readonly) {
      if (version === 0) {
        throw new LogbookError(
          ErrorCodes.DB_OPEN_FAILED,
          `There is no Logbook journal in the PostgreSQL database ${db.name}.`,
          'Start a run first (`logbook run <script> --journal <url>`), or pass --journal with the database you meant.',
          { db: db.name },
        );
      }
      // A read-only open cannot write even by mistake; a read-only role gets the same from the server.
      db.exec('SET default_transaction_read_only = on');
      return db;
    }
    if (version < LATEST_VERSION) migrate(db);
    return db;
  } catch (err) {
    try {
      db.close();
    } catch {
      // The connection error is the one to report.
    }
    throw err;
  }
}

function migrate(db: PgDb): void {
  db.transaction(() => {
    db.prepare('SELECT pg_advisory_xact_lock(?)').get(MIGRATION_LOCK);
    db.exec(SCHEMA_TABLE);
    // Under the lock: another process may have migrated (or a newer Logbook upgraded) while this one waited.
    const current = db.schemaVersion();
    refuseNewer(db, current);
    if (current === 0 && db.prepare("SELECT to_regclass('runs') IS NOT NULL").pluck().get() === true) {
      throw new LogbookError(
        ErrorCodes.DB_CORRUPT,
        `The PostgreSQL database ${db.name} holds a runs table but no Logbook schema record.`,
        'Point --journal at a database of its own for Logbook (or another schema via ?options=-csearch_path%3Dlogbook); nothing was modified.',
        { db: db.name },
      );
    }
    for (const m of PG_MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO logbook_schema (version, name) VALUES (?, ?)').run(m.version, m.name);
    }
  }).immediate();
}
