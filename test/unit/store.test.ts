// Store tests: durability pragmas on every open, migrations as data, refusing newer or foreign files untouched.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCodes, LogbookError, openStore } from '../../src/runtime';
import { LATEST_VERSION, MIGRATIONS } from '../../src/runtime/store/migrations';
import { fileHash, tmpDir } from '../helpers';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { dbOf } from '../../src/runtime/store/db';

function expectCode(fn: () => unknown, code: string): LogbookError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof LogbookError, String(err));
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}`);
}

describe('store', () => {
  it('opens in WAL with synchronous=FULL on every open (better-sqlite3 reopens WAL files at NORMAL)', () => {
    const file = path.join(tmpDir(), 'j.db');
    for (let i = 0; i < 2; i++) {
      const s = openStore(file);
      assert.equal(sqliteOf(s.db).pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(sqliteOf(s.db).pragma('synchronous', { simple: true }), 2);
      assert.equal(sqliteOf(s.db).pragma('user_version', { simple: true }), LATEST_VERSION);
      s.close();
    }
    const raw = new Database(file);
    assert.equal(raw.pragma('synchronous', { simple: true }), 1, 'a plain reopen would be NORMAL: the explicit pragma matters');
    raw.close();
  });

  it('applies migrations as data, each bumping user_version', () => {
    // Increasing and unique (not contiguous: a branch may hold a later version than the ones merged beside it).
    const versions = MIGRATIONS.map((m) => m.version);
    assert.deepEqual(
      versions,
      [...new Set(versions)].sort((a, b) => a - b),
    );
    const s = openStore(path.join(tmpDir(), 'j.db'));
    const tables = dbOf(s.db).prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").pluck().all();
    assert.ok(['actions', 'events', 'runs', 'steps'].every((t) => tables.includes(t)));
    s.close();
  });

  it('opens a current journal while another connection holds the write lock (an open takes none), and migrates under it', () => {
    const file = path.join(tmpDir(), 'j.db');
    openStore(file).close();
    const writer = new Database(file);
    writer.exec('BEGIN IMMEDIATE');
    try {
      // The lock is held by this thread, so an open that needed it could only fail (LB_DB_BUSY after the busy timeout).
      const s = openStore(file);
      assert.equal(sqliteOf(s.db).pragma('user_version', { simple: true }), LATEST_VERSION);
      s.close();
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
    // A journal behind the latest version is still migrated by an open (under its write lock, the lock now free).
    const old = path.join(tmpDir(), 'old.db');
    const raw = new Database(old);
    raw.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, 1)) {
      raw.exec(m.sql);
      raw.pragma(`user_version = ${m.version}`);
    }
    raw.close();
    const s = openStore(old);
    assert.equal(sqliteOf(s.db).pragma('user_version', { simple: true }), LATEST_VERSION);
    s.close();
  });

  it('refuses a journal from a newer version without modifying it', () => {
    const file = path.join(tmpDir(), 'newer.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE runs (id TEXT)');
    raw.pragma(`user_version = ${LATEST_VERSION + 1}`);
    raw.close();
    const before = fileHash(file);
    const err = expectCode(() => openStore(file), ErrorCodes.DB_TOO_NEW);
    assert.match(err.message, /newer than this Logbook understands.*Upgrade agent-logbook/);
    assert.equal(fileHash(file), before);
    assert.ok(!fs.existsSync(`${file}-wal`), 'no WAL was created');
  });

  it('refuses a corrupt or foreign file without modifying it', () => {
    const dir = tmpDir();
    const garbage = path.join(dir, 'garbage.db');
    fs.writeFileSync(garbage, Buffer.from('this is not a sqlite database at all, just some bytes'.repeat(100)));
    const before = fileHash(garbage);
    const err = expectCode(() => openStore(garbage), ErrorCodes.DB_CORRUPT);
    assert.match(err.message, /not a readable Logbook journal.*it was not modified/);
    assert.equal(fileHash(garbage), before);

    const foreign = path.join(dir, 'foreign.db');
    const raw = new Database(foreign);
    raw.exec('CREATE TABLE customers (id INTEGER)');
    raw.close();
    const h = fileHash(foreign);
    expectCode(() => openStore(foreign), ErrorCodes.DB_CORRUPT);
    assert.equal(fileHash(foreign), h);
  });

  it('validates rows read back: a hand-edited row is reported, not trusted', () => {
    const file = path.join(tmpDir(), 'j.db');
    const s = openStore(file);
    dbOf(s.db).prepare("INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at) VALUES ('x', 'a', 's', 'exploded', 1, 0, 0)").run();
    const err = expectCode(() => s.reader.run('x'), ErrorCodes.JOURNAL_INVALID);
    assert.match(err.message, /status/);
    s.close();
  });

  it('opens a new journal that several processes create at the same moment, in each of them', async function () {
    this.timeout(120_000);
    // Three processes open the same 40 new files, each file at the same millisecond in all three (a shared schedule):
    // SQLite refuses the switch to WAL at once while another process makes it, and a version read before another
    // process's first migration with tables read after it looked like a file that is not a journal.
    const dir = tmpDir('logbook-born-');
    const count = 40;
    const start = Date.now() + 5000;
    const src = `const { openStore } = require(${JSON.stringify(path.resolve(__dirname, '../../src/runtime/store'))});
      const failed = [];
      for (let i = 0; i < ${count}; i++) {
        while (Date.now() < ${start} + i * 30) {}
        try { openStore(${JSON.stringify(dir)} + '/j' + i + '.db').close(); } catch (e) { failed.push(e.code + ' ' + e.message.slice(0, 100)); }
      }
      console.log(JSON.stringify(failed));`;
    const child = (): Promise<{ code: number | null; out: string; err: string }> =>
      new Promise((resolve) => {
        const p = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', src], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('close', (code) => resolve({ code, out: out.trim(), err }));
      });
    const all = await Promise.all([child(), child(), child()]);
    for (const r of all) {
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(JSON.parse(r.out), [], 'every open succeeded');
    }
    for (let i = 0; i < count; i++) {
      const s = openStore(path.join(dir, `j${i}.db`));
      try {
        assert.equal(sqliteOf(s.db).pragma('user_version', { simple: true }), LATEST_VERSION);
        assert.equal(sqliteOf(s.db).pragma('journal_mode', { simple: true }), 'wal');
      } finally {
        s.close();
      }
    }
  });
});
