// Opens a journal file: refuses newer or foreign files untouched, then WAL + synchronous=FULL (read back) + migrations.

import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCodes, LogbookError, describe } from '../errors';
import { LATEST_VERSION } from './migrations';
import { migrate } from './migrate';
import { readonlyRemedy, storageError } from './storageError';
import type { Db } from './db';
import { sqliteDb } from './sqlite';

export type { Db } from './db';
type SqliteDatabase = Database.Database;

export const DEFAULT_DB = path.join('.logbook', 'journal.db');
const BUSY_TIMEOUT_MS = 5000;
/** Bytes of WAL kept after a checkpoint resets it (see openJournalDb). */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

export interface OpenOptions {
  readonly readonly?: boolean;
}

function corrupt(file: string, err: unknown): LogbookError {
  return new LogbookError(
    ErrorCodes.DB_CORRUPT,
    `${file} is not a readable Logbook journal (${describe(err)}).`,
    'Point --journal at the right file, or move this one aside to start a fresh journal; it was not modified.',
    { file },
  );
}

const SHIPPED_NODES: Record<string, number> = { '115': 20, '127': 22, '137': 24 };

function nativeUnsupported(cause: string): LogbookError {
  const shipped = Object.values(SHIPPED_NODES).join(', ');
  return new LogbookError(
    ErrorCodes.NATIVE_UNSUPPORTED,
    `SQLite (better-sqlite3) cannot load in Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}): ${cause}.`,
    `Run Logbook on Node ${shipped} (set logbook.runtimeExecutable, or runtimeExecutable in launch.json, to one of them), or rebuild it for this Node with \`npm rebuild better-sqlite3\`.`,
    { node: process.version, abi: process.versions.modules },
  );
}

/** A packaged install ships builds per Node ABI in dist/native/; a source checkout uses better-sqlite3's own build. */
function shippedBinding(): string | undefined {
  const dir = path.join(__dirname, 'native');
  if (!fs.existsSync(dir)) return undefined;
  const file = path.join(dir, `node-v${process.versions.modules}-${process.platform}-${process.arch}`, 'better_sqlite3.node');
  if (fs.existsSync(file)) return file;
  throw nativeUnsupported(
    `this package ships builds only for ${fs.readdirSync(dir).join(', ')} (Node ${Object.values(SHIPPED_NODES).join(', ')} on the platform it was packaged for)`,
  );
}

/** Opens (creating if needed) the journal at `file`; every open sets synchronous=FULL and reads it back. */
export function openJournalDb(file: string, opts: OpenOptions = {}): Db {
  return sqliteDb(openSqlite(file, opts));
}

function openSqlite(file: string, opts: OpenOptions): SqliteDatabase {
  const abs = path.resolve(file);
  if (opts.readonly && !fs.existsSync(abs)) {
    throw new LogbookError(
      ErrorCodes.DB_OPEN_FAILED,
      `There is no journal at ${abs}.`,
      'Start a run first (`logbook run <script>`), or pass --journal with the journal you meant.',
      { file: abs },
    );
  }
  checkStorage(abs, opts.readonly === true);
  let db: SqliteDatabase;
  const nativeBinding = shippedBinding();
  try {
    db = new Database(abs, { readonly: opts.readonly === true, ...(nativeBinding ? { nativeBinding } : {}) });
  } catch (err) {
    if (/NODE_MODULE_VERSION|ERR_DLOPEN_FAILED|invalid ELF|Could not locate the bindings|better_sqlite3\.node/.test(describe(err)))
      throw nativeUnsupported(describe(err));
    throw new LogbookError(ErrorCodes.DB_OPEN_FAILED, `Could not open the journal ${abs}: ${describe(err)}.`, 'Check the path and its permissions.', {
      file: abs,
    });
  }
  try {
    // Before the first read: another process creating this journal at the same moment holds its lock a few
    // milliseconds (SQLite's default is to fail at once, which took a journal being born for a busy one).
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Read the version before anything that writes (WAL switch, migrations): a newer file must stay untouched. The
    // version and the tables are read in one read transaction, one snapshot: another process may be creating the
    // journal meanwhile, and a version read before its first migration commits with tables read after it would take a
    // journal being born for a file that is not a journal.
    let version: number;
    let tables: { readonly runs: boolean; readonly any: boolean };
    try {
      ({ version, tables } = db
        .transaction(() => {
          const v = db.pragma('user_version', { simple: true }) as number;
          db.pragma('schema_version', { simple: true });
          return { version: v, tables: { runs: hasTable(db, 'runs'), any: hasAnyTable(db) } };
        })
        .deferred());
    } catch (err) {
      // Not a database at all is LB_DB_CORRUPT; a locked, read-only or failing disk is a storage error of its own.
      const code = (err as { code?: unknown }).code;
      if (opts.readonly && code === 'SQLITE_CANTOPEN' && !writable(path.dirname(abs))) throw readonlyFolder(abs);
      throw (
        (code === 'SQLITE_NOTADB' || (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT'))
          ? undefined
          : storageError(err, abs, 'opening the journal')) ?? corrupt(abs, err)
      );
    }
    if (version > LATEST_VERSION) {
      throw new LogbookError(
        ErrorCodes.DB_TOO_NEW,
        `The journal ${abs} has schema version ${version}, newer than this Logbook understands (${LATEST_VERSION}).`,
        'Upgrade agent-logbook to the version that wrote it; the file was not modified.',
        { file: abs, version, supported: LATEST_VERSION },
      );
    }
    if (version > 0 && !tables.runs) throw corrupt(abs, new Error(`user_version ${version} but no runs table`));
    if (version === 0 && tables.any) throw corrupt(abs, new Error('it holds tables but is not a Logbook journal'));
    if (!opts.readonly) {
      const mode = walMode(db);
      if (mode !== 'wal')
        throw new LogbookError(
          ErrorCodes.DB_DURABILITY,
          `${abs} refused WAL mode (got ${String(mode)}).`,
          'Put the journal on a local disk that supports shared memory (not a network share).',
        );
    }
    setFullSync(db, abs);
    // SQLite leaves a WAL file at the largest size it ever reached (a 1 MB checkpoint, a migration's copy of every
    // table); with a limit, each reset of the WAL after a checkpoint trims it back. Well above what the automatic
    // checkpoint lets an ordinary WAL reach (1,000 pages), so the hot path never truncates.
    if (!opts.readonly) db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    db.pragma('foreign_keys = ON');
    if (!opts.readonly) migrate(db, abs);
    return db;
  } catch (err) {
    db.close();
    throw storageError(err, abs, 'opening the journal') ?? err;
  }
}

/** Reading a WAL journal needs its -shm file, which SQLite cannot create in a read-only folder. */
function readonlyFolder(abs: string): LogbookError {
  return new LogbookError(
    ErrorCodes.DB_READONLY,
    `The journal ${abs} cannot be opened: its folder ${path.dirname(abs)} is read-only, and SQLite must create the journal's -shm file beside it even to read it. The journal itself was not touched.`,
    'Make the folder writable for this user (or remount the volume read-write), or copy the journal with its -wal file to a writable folder and pass --journal with the copy; do not delete the original (it holds in-doubt state).',
    { file: abs },
  );
}

function writable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * What can be told before SQLite opens the file, each with its own code: an empty file is no journal (SQLite would
 * call it an empty database and fail later with "no such table"), and a journal or folder that cannot be written is
 * read-only storage, not a damaged journal (moving it aside would lose its in-doubt state).
 */
function checkStorage(abs: string, readonly: boolean): void {
  let size: number | undefined;
  try {
    size = fs.statSync(abs).size;
  } catch {
    size = undefined;
  }
  if (readonly && size === 0) {
    throw new LogbookError(
      ErrorCodes.DB_EMPTY,
      `The journal ${abs} is an empty file (0 bytes): it holds no runs.`,
      'Pass --journal with the journal you meant; a run started with `logbook run` turns this file into a journal. (A journal copied while in use needs its -wal file copied with it.)',
      { file: abs },
    );
  }
  if (readonly) return;
  const dir = path.dirname(abs);
  try {
    privateFolder(dir);
  } catch (err) {
    throw storageError(err, abs, "creating the journal's folder") ?? err;
  }
  const blocked = [size === undefined ? undefined : abs, dir].find((p) => p !== undefined && !writable(p));
  if (blocked !== undefined) {
    throw new LogbookError(
      ErrorCodes.DB_READONLY,
      `The journal ${abs} cannot be written: ${blocked === abs ? 'the file is read-only' : `its folder ${dir} is read-only`} for this user (SQLite also writes its -wal and -shm files beside it). Nothing was written.`,
      readonlyRemedy(),
      { file: abs },
    );
  }
  if (size === undefined) privateFile(abs);
}

/** What git is told about a journal folder Logbook made: its contents (every run's inputs and results) stay out. */
const GITIGNORE = "# Made by Agent Logbook: this folder holds the journal (every run's inputs and results). Keep it out of git.\n*\n";

/**
 * The journal holds every run's inputs and results, so a folder Logbook creates for it is private to this user (0700)
 * and tells git to ignore it. A folder that already exists is left as its owner set it, .gitignore and all.
 */
function privateFolder(dir: string): void {
  if (fs.mkdirSync(dir, { recursive: true, mode: 0o700 }) === undefined) return;
  try {
    fs.writeFileSync(path.join(dir, '.gitignore'), GITIGNORE, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * A new journal file is created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the mode of the
 * database file, so they are private too. An existing journal keeps the mode its owner gave it.
 */
function privateFile(abs: string): void {
  try {
    fs.closeSync(fs.openSync(abs, 'wx', 0o600));
  } catch (err) {
    // Another process created it first: it is theirs to have made, and SQLite opens it as it is.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw storageError(err, abs, 'creating the journal') ?? err;
  }
}

/** better-sqlite3 reopens WAL files at NORMAL; durability needs FULL, checked after setting. */
export function setFullSync(db: SqliteDatabase, file: string): void {
  db.pragma('synchronous = FULL');
  const got = db.pragma('synchronous', { simple: true });
  if (got !== 2) {
    throw new LogbookError(
      ErrorCodes.DB_DURABILITY,
      `${file}: synchronous reads back as ${String(got)}, not FULL (2).`,
      'Report this with your SQLite build; Logbook will not write without durable commits.',
    );
  }
}

/** For the short sleeps between tries of walMode (Atomics.wait on a buffer nothing else touches). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Puts the file in WAL mode (it stays so: a journal already in WAL is only read). Another process switching the same
 * new file at the same moment makes SQLite refuse with SQLITE_BUSY at once, without its busy handler: tried again for
 * up to the busy timeout, so a journal that processes create together opens in each of them.
 */
function walMode(db: SqliteDatabase): unknown {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      const mode = db.pragma('journal_mode', { simple: true });
      return mode === 'wal' ? mode : db.pragma('journal_mode = WAL', { simple: true });
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      Atomics.wait(PAUSE, 0, 0, 5 + Math.random() * 20);
    }
  }
}

function hasTable(db: SqliteDatabase, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(name) !== undefined;
}

function hasAnyTable(db: SqliteDatabase): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' LIMIT 1").get() !== undefined;
}
