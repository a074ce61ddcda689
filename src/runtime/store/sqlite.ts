// The SQLite side of the store interface: the better-sqlite3 Database itself, given the dialect members `Db` adds.

import type Database from 'better-sqlite3';
import { dbOf, type Db, type Dialect, type JournalConnection, type WriteSupport } from './db';

export const SQLITE_DIALECT: Dialect = {
  lastEventSeq: null,
  indexedBy: (index) => ` INDEXED BY ${index}`,
  claimLock: '',
  forUpdate: '',
  returningSeq: '',
  seqsCanRepeat: true,
  foldsRows: true,
  insertOrder: 'rowid',
  renewLease: 'UPDATE runs SET updated_at = ?, lease_expires = ? WHERE id = ? AND lease_token = ? AND lease_epoch = ?',
  renewParams: (now, ttlMs, runId, token, epoch) => [now, now + ttlMs, runId, token, epoch],
  dataVersion: 'PRAGMA data_version',
  leaseByExpiry: false,
  notJson: (column) => `(${column} IS NOT NULL AND json_valid(${column}) = 0)`,
  notText: (column) => `typeof(${column}) <> 'text'`,
  // json_array quotes text and writes integers as JSON numbers, but reads a BLOB as SQLite's binary JSON, which could
  // make a damaged value pass for any other: a BLOB is written as `true`, which no column's guard takes, so the
  // caller reads that chunk row by row and names the damage as it would have.
  packRows: (select, columns) =>
    `SELECT json_group_array(json_array(${columns.map((c) => `iif(typeof(${c}) = 'blob', json('true'), ${c})`).join(', ')})) FROM (${select})`,
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
    leaseClock: (now: number): number => now,
    writeSupport: (): WriteSupport => sqliteWriteSupport(raw),
  };
  return Object.assign(raw, extra);
}

function sqliteWriteSupport(raw: Database.Database): WriteSupport {
  // NORMAL, never OFF: at OFF a WAL checkpoint that a lazy commit triggers would not fsync the database file
  // before the WAL restarts over the frames it copied, so a power loss could lose durable commits.
  const before = raw.prepare('PRAGMA synchronous = NORMAL');
  const after = raw.prepare('PRAGMA synchronous = FULL');
  // SQLite applies `PRAGMA synchronous = …` when the statement is compiled: preparing the two left the level at FULL,
  // and the first run of each is a no-op (the run's first lazy commit was fsynced). One run of each, now, primes them.
  before.run();
  after.run();
  return {
    lazyAround: { before, after },
    lazyInside: undefined,
    fence: undefined,
    isFenceLost: () => false,
    holdLease: () => undefined,
    dropLease: () => undefined,
  };
}

/** The better-sqlite3 Database behind a SQLite `Db`, for what only SQLite has (pragmas); throws on PostgreSQL. */
export function sqliteOf(conn: Db | JournalConnection): Database.Database {
  const db = dbOf(conn);
  if (db.kind !== 'sqlite') throw new Error(`${db.name} is a ${db.kind} journal, not a SQLite file.`);
  return db as unknown as Database.Database;
}
