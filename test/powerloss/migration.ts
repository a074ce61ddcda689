// The power-loss scenario of a schema migration: the v1 fixture journal, taken back to schema 1, migrated by openStore under the recorder; every cut must hold one whole schema version and every row.
//
// Each migration is its own immediate transaction (store/open.ts), so a cut may stop between two of them: what it
// must never leave is a schema that is no version's (a table of one and an index of the next), or a row lost or
// changed. The expected schema of each version is the seed migrated to exactly that version, outside the recorder.

import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime/store';
import { LATEST_VERSION, MIGRATIONS } from '../../src/runtime/store/migrations';
import { SQLITE_FIXTURE } from '../migration/fixtures';
import { readLog, type Op } from './log';
import type { Shim } from './shim';

export const MIGRATION_SCENARIO = 'migration';
const FILE = 'journal.db';

/** What a migration must carry over: every row of the tables of schema 1, by their schema-1 columns. */
const TABLES: ReadonlyArray<[string, string]> = [
  ['runs', 'id'],
  ['steps', 'run_id, idx'],
  ['actions', 'run_id, id'],
  ['events', 'seq'],
];

export interface MigrationRecording {
  readonly ops: Op[];
  /** The files as they were when the recording began (the seed journal). */
  readonly initial: Map<string, Buffer>;
  /** sqlite_master of each version the seed can be at, and the digest of its rows. */
  readonly schemas: Map<number, string>;
  readonly digest: string;
}

function schemaOf(db: Database.Database): string {
  const rows = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
  return JSON.stringify(rows);
}

function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as Array<{ name: string }>).map((c) => c.name);
}

function digestOf(db: Database.Database, columns: Map<string, string[]>): string {
  const h = createHash('sha256');
  for (const [table, key] of TABLES) {
    const cols = columns.get(table) ?? [];
    for (const row of db
      .prepare(`SELECT ${cols.join(', ')} FROM ${table} ORDER BY ${key}`)
      .raw(true)
      .iterate())
      h.update(JSON.stringify(row));
  }
  return h.digest('hex');
}

/** The fixture (schema 3) taken back to schema 1: the later migrations' objects dropped, every row kept. */
function writeSeed(file: string): void {
  fs.copyFileSync(SQLITE_FIXTURE, file);
  const db = new Database(file);
  try {
    if (db.pragma('user_version', { simple: true }) !== 3) throw new Error('powerloss: the v1 fixture is not at schema 3');
    db.exec(`
      DROP INDEX runs_claimable;
      DROP TABLE workers;
      ALTER TABLE runs DROP COLUMN script_version;
      DROP INDEX actions_in_doubt_after_error;
    `);
    db.pragma('user_version = 1');
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

let schema1Columns: Map<string, string[]> | undefined;

/** The columns of schema 1, which every later version keeps. */
function v1Columns(db: Database.Database): Map<string, string[]> {
  schema1Columns ??= new Map(TABLES.map(([t]) => [t, columnsOf(db, t)]));
  return schema1Columns;
}

/** The expected schema at every version from 1 to LATEST_VERSION, by migrating copies of the seed outside the recorder. */
function expectedSchemas(seed: string, work: string): { schemas: Map<number, string>; digest: string } {
  const schemas = new Map<number, string>();
  const copy = path.join(work, 'expected.db');
  fs.copyFileSync(seed, copy);
  const db = new Database(copy);
  try {
    const digest = digestOf(db, v1Columns(db));
    schemas.set(1, schemaOf(db));
    for (const m of MIGRATIONS) {
      if (m.version <= 1) continue;
      db.exec(m.sql);
      schemas.set(m.version, schemaOf(db));
    }
    return { schemas, digest };
  } finally {
    db.close();
    fs.rmSync(copy, { force: true });
  }
}

/**
 * Records the migration of the seed: by openStore (each migration one immediate transaction), or, with `split` (the
 * negative control), each statement of each migration committed on its own, durable, as a careless migration would.
 */
export function recordMigration(shim: Shim, work: string, split = false): MigrationRecording {
  const dir = path.join(work, MIGRATION_SCENARIO + (split ? '-split' : ''));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, FILE);
  writeSeed(file);
  const initial = new Map([[FILE, fs.readFileSync(file)]]);
  const { schemas, digest } = expectedSchemas(file, work);
  const log = `${dir}.log`;
  shim.record(log, dir);
  try {
    if (split) migrateStatementByStatement(file);
    else openStore(file).close();
  } finally {
    shim.stop();
  }
  return { ops: readLog(log), initial, schemas, digest };
}

function migrateStatementByStatement(file: string): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    for (const m of MIGRATIONS) {
      if (m.version <= 1) continue;
      for (const stmt of m.sql.split(';').filter((x) => x.trim() !== '')) db.exec(stmt);
      db.pragma(`user_version = ${m.version}`);
    }
  } finally {
    db.close();
  }
}

/** The invariants' failures at a cut of the migration (empty: it holds). */
export function checkMigrationCut(dir: string, rec: MigrationRecording): string[] {
  const file = path.join(dir, FILE);
  const bad: string[] = [];
  try {
    const db = new Database(file);
    try {
      const ic = db.pragma('integrity_check', { simple: true });
      if (ic !== 'ok') bad.push(`integrity_check: ${String(ic)}`);
      const v = db.pragma('user_version', { simple: true }) as number;
      const expected = rec.schemas.get(v);
      if (expected === undefined) bad.push(`user_version ${v} is no version the migration passes through`);
      else if (schemaOf(db) !== expected) bad.push(`the schema at user_version ${v} is not version ${v}'s: a mix of two versions`);
      if (digestOf(db, v1Columns(db)) !== rec.digest) bad.push(`rows changed or lost at user_version ${v}`);
    } finally {
      db.close();
    }
    // And the cut journal opens with today's code, which finishes the migration.
    const store = openStore(file);
    try {
      if (store.schemaVersion() !== LATEST_VERSION) bad.push(`reopened, it is at version ${store.schemaVersion()}, not ${LATEST_VERSION}`);
    } finally {
      store.close();
    }
    const again = new Database(file, { readonly: true });
    try {
      if (schemaOf(again) !== rec.schemas.get(LATEST_VERSION)) bad.push('reopened, its schema is not the latest version');
      if (digestOf(again, v1Columns(again)) !== rec.digest) bad.push('reopened and migrated, rows changed or lost');
    } finally {
      again.close();
    }
  } catch (err) {
    bad.push(`checking the cut threw: ${(err as { code?: string }).code ?? ''} ${err instanceof Error ? err.message : String(err)}`);
  }
  return bad;
}

export interface DiskFullResult {
  /** The writes at which the disk filled, one upgrade each. */
  readonly points: number;
  /** Upgrades refused with LB_DB_DISK_FULL (the rest opened: the disk filled after the last migration committed). */
  readonly refused: number;
  /** Upgrades that left a schema of no version (the negative control's measure). */
  readonly mixed: number;
  readonly violations: string[];
}

/**
 * The upgrade of the seed with the disk full from its n-th write on, for `count` values of n spread over the writes
 * the whole upgrade makes. The open must fail with LB_DB_DISK_FULL, or succeed once every migration committed, and
 * leave the journal as a power cut must (checkMigrationCut: one whole version, every row), which then opens and
 * upgrades once the disk has room. With `split` (the negative control) each statement commits on its own.
 */
export function diskFullMigration(shim: Shim, work: string, rec: MigrationRecording, count: number, split = false): DiskFullResult {
  const writes = rec.ops.filter((op) => op.kind === 'write').length;
  const points = [...new Set(Array.from({ length: count }, (_, i) => 1 + Math.round((i * (writes - 1)) / Math.max(1, count - 1))))];
  const violations: string[] = [];
  let refused = 0;
  let mixed = 0;
  for (const n of points) {
    const dir = path.join(work, `${MIGRATION_SCENARIO}-full${split ? '-split' : ''}-${n}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, FILE);
    writeSeed(file);
    shim.record(`${dir}.log`, dir);
    shim.failWrites(n);
    let failure: { code?: unknown; message: string } | undefined;
    try {
      if (split) migrateStatementByStatement(file);
      else openStore(file).close();
    } catch (err) {
      failure = { code: (err as { code?: unknown }).code, message: err instanceof Error ? err.message : String(err) };
    } finally {
      shim.failWrites(0);
      shim.stop();
    }
    if (failure && !split && failure.code !== 'LB_DB_DISK_FULL')
      violations.push(`disk full from write ${n} of ${writes}: the open failed with ${String(failure.code)}, not LB_DB_DISK_FULL: ${failure.message}`);
    if (failure) refused++;
    const bad = checkMigrationCut(dir, rec);
    if (bad.some((b) => b.includes('a mix of two versions'))) mixed++;
    violations.push(...bad.map((b) => `disk full from write ${n} of ${writes}: ${b}`));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(`${dir}.log`, { force: true });
  }
  return { points: points.length, refused, mixed, violations };
}
