// The SQLite side of the store interface: the better-sqlite3 Database itself, given the dialect members `Db` adds.

import type Database from 'better-sqlite3';
import type { Db, Dialect } from './db';

export const SQLITE_DIALECT: Dialect = {
  lastEventSeq: null,
  indexedBy: (index) => ` INDEXED BY ${index}`,
  claimLock: '',
  forUpdate: '',
  returningSeq: '',
  insertOrder: 'rowid',
  renewLease: 'UPDATE runs SET updated_at = ?, lease_expires = ? WHERE id = ? AND lease_token = ? AND lease_epoch = ?',
  renewParams: (now, ttlMs, runId, token, epoch) => [now, now + ttlMs, runId, token, epoch],
  dataVersion: 'PRAGMA data_version',
  leaseByExpiry: false,
  notJson: (column) => `(${column} IS NOT NULL AND json_valid(${column}) = 0)`,
};

/**
 * No wrapper object: statements stay better-sqlite3's own, so the SQLite hot path is one direct call as before.
 * The added members are plain properties on the Database instance.
 */
export function sqliteDb(raw: Database.Database): Db {
  const extra = {
    kind: 'sqlite' as const,
    dialect: SQLITE_DIALECT,
    now: Date.now,
    changed: (): void => undefined,
    schemaVersion: (): number => Number(raw.pragma('user_version', { simple: true })),
  };
  return Object.assign(raw, extra);
}

/** The better-sqlite3 Database behind a SQLite `Db`, for what only SQLite has (pragmas); throws on PostgreSQL. */
export function sqliteOf(db: Db): Database.Database {
  if (db.kind !== 'sqlite') throw new Error(`${db.name} is a ${db.kind} journal, not a SQLite file.`);
  return db as unknown as Database.Database;
}
