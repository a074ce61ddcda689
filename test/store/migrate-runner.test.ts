// The migration runner (store/migrate.ts) against what a journal in use holds: a user's views and triggers on the
// tables a migration rebuilds, and another process holding the write lock, as one upgrading the same file does.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/runtime';
import { dbOf } from '../../src/runtime/store/db';
import { WAL_SIZE_LIMIT } from '../../src/runtime/store/open';
import { applyMigration } from '../../src/runtime/store/migrate';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { tmpDir } from '../helpers';
import { errorOf, journalAt } from './journalAt';

/** A journal left at schema `version` by an older Logbook, with one run. */
function journalWithRun(file: string, version: number): Database.Database {
  const db = journalAt(file, version);
  db.prepare("INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at) VALUES ('r', 'a', 's.ts', 'running', 1, 1, 1)").run();
  return db;
}

describe('the migration runner (SQLite)', () => {
  it("keeps a user's view, trigger and indexes on the tables schema 10 rebuilds, all working after it", () => {
    const file = path.join(tmpDir(), 'j.db');
    const db = journalWithRun(file, 9);
    db.exec(`
      CREATE VIEW "step ""report""" AS SELECT run_id, COUNT(*) AS n FROM steps GROUP BY run_id;
      CREATE TABLE audit (what TEXT);
      CREATE TRIGGER steps_audit AFTER INSERT ON steps BEGIN INSERT INTO audit VALUES (NEW.name); END;
      CREATE INDEX steps_by_name ON steps(name);
      CREATE UNIQUE INDEX "actions by type" ON actions(run_id, type, id);
    `);
    const userIndexes = (d: Database.Database): unknown[] =>
      d.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE name IN ('steps_by_name', 'actions by type') ORDER BY name").all();
    const indexesBefore = userIndexes(db);
    assert.equal(indexesBefore.length, 2);
    db.prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('r', 0, 'before', 'completed', 1, 1)").run();
    db.close();

    openStore(file).close();

    const after = new Database(file);
    try {
      assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
      assert.equal(after.prepare("SELECT sql FROM sqlite_master WHERE name = 'steps'").pluck().get()?.toString().includes('WITHOUT ROWID'), false);
      after.prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('r', 1, 'after', 'completed', 1, 1)").run();
      assert.deepEqual(after.prepare('SELECT what FROM audit ORDER BY rowid').pluck().all(), ['before', 'after']);
      assert.deepEqual(after.prepare('SELECT run_id, n FROM "step ""report"""').all(), [{ run_id: 'r', n: 2 }]);
      assert.deepEqual(userIndexes(after), indexesBefore);
      const plan = after.prepare("EXPLAIN QUERY PLAN SELECT * FROM steps WHERE name = 'after'").all() as { detail: string }[];
      assert.ok(
        plan.some((p) => p.detail.includes('steps_by_name')),
        JSON.stringify(plan),
      );
    } finally {
      after.close();
    }
  });

  it("does not make again an index of Logbook's own that a migration drops on purpose", () => {
    const file = path.join(tmpDir(), 'j.db');
    const db = journalWithRun(file, 10);
    db.exec('CREATE INDEX mine ON runs(agent)');
    const dropsOwn = { version: 99, name: 'a test migration', sql: 'DROP INDEX runs_by_parent; DROP INDEX mine;' };
    db.transaction(() => applyMigration(db, dropsOwn, file)).immediate();
    const names = db.prepare("SELECT name FROM sqlite_master WHERE name IN ('runs_by_parent', 'mine') ORDER BY name").pluck().all();
    // The user's index comes back (the migration dropped it, as a rebuild of its table would); Logbook's stays dropped.
    assert.deepEqual(names, ['mine']);
    db.close();
  });

  it('refuses an upgrade a trigger no longer fits, naming it, and the transaction leaves the journal as it was', () => {
    const file = path.join(tmpDir(), 'j.db');
    const db = journalWithRun(file, 10);
    db.exec(`
      CREATE TABLE scratch (v TEXT);
      CREATE TRIGGER scratch_audit AFTER INSERT ON scratch BEGIN SELECT 1; END;
    `);
    const schema = (): unknown[] => db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    const before = schema();
    // A migration that drops the table the trigger is on: SQLite cannot create the trigger again.
    const dropsScratch = { version: 99, name: 'a test migration', sql: 'DROP TABLE scratch;' };
    const err = errorOf(() => db.transaction(() => applyMigration(db, dropsScratch, file)).immediate());
    assert.equal(err?.code, 'LB_DB_OPEN_FAILED');
    assert.match(err?.message ?? '', /the trigger scratch_audit, which was added to it outside Logbook, does not fit the new schema/);
    assert.match(err?.message ?? '', /Nothing was changed\./);
    assert.deepEqual(schema(), before);
    db.close();
  });

  it('leaves no WAL the size of the copy after an upgrade that rebuilt the tables, and every row kept', () => {
    const file = path.join(tmpDir(), 'j.db');
    const db = journalWithRun(file, 9);
    db.prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('r', 0, 's', 'running', 1, 1)").run();
    const add = db.prepare(
      "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, attempt, started_at) VALUES ('r', ?, ?, 0, 't', 1, 'idempotent', ?, 'committed', 1, 1)",
    );
    const args = JSON.stringify({ pad: 'x'.repeat(4000) });
    db.transaction(() => {
      for (let i = 0; i < 4000; i++) add.run(`a${i}`, i + 1, args);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const before = fs.statSync(file).size;
    const store = openStore(file);
    assert.equal(store.schemaVersion(), LATEST_VERSION);
    const wal = fs.statSync(`${file}-wal`).size;
    // The copy of 4,000 actions of 4 KB wrote about 16 MB of WAL; checkpointed and truncated, none of it stays.
    assert.ok(before > 16_000_000, `the journal holds ${before} bytes`);
    assert.equal(wal, 0, `the WAL is ${wal} bytes after the upgrade`);
    const q = dbOf(store.db);
    assert.equal(q.prepare("SELECT count(*) FROM actions WHERE run_id = 'r' AND args = ?").pluck().get(args), 4000);
    assert.equal(q.prepare('PRAGMA journal_size_limit').pluck().get(), WAL_SIZE_LIMIT);
    store.close();
  });

  it("waits out another process's write lock held past the busy timeout, as an upgrade of a big journal holds it", async function () {
    this.timeout(60_000);
    const file = path.join(tmpDir(), 'j.db');
    journalWithRun(file, 9).close();
    // A second process takes the write lock and holds it for 6.5 s: longer than an ordinary write waits (5 s).
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.exec('BEGIN IMMEDIATE');
         process.stdout.write('held\\n');
         setTimeout(() => { db.exec('COMMIT'); process.stdout.write('committed ' + Date.now() + '\\n'); db.close(); }, 6500);`,
        file,
      ],
      { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    holder.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => resolve());
      void exited.then(() => reject(new Error(`the lock holder exited first: ${out}`)));
    });
    const store = openStore(file);
    const openedAt = Date.now();
    assert.equal(store.schemaVersion(), LATEST_VERSION);
    store.close();
    await exited;
    const committedAt = Number(/committed (\d+)/.exec(out)?.[1]);
    assert.ok(committedAt > 0, out);
    assert.ok(openedAt >= committedAt, 'the open went on only once the other process let the lock go');
  });
});
