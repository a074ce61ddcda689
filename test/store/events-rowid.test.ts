// Schema 11: events without AUTOINCREMENT (a journal transaction no longer rewrites the counter's page), and seqs that
// still never go back: not through a migration, not after the newest run is deleted.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { ChangeTracker } from '../../src/reader/watch';
import { tmpDir } from '../helpers';
import { journalAt } from './journalAt';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';

const agent = defineAgent({
  name: 'events-rowid',
  input: z.object({ n: z.number() }),
  run: async (run, input) => run.step('one', () => input.n),
});

async function aRun(store: Store, n: number): Promise<string> {
  const out = await startRun(store, agent, { script: 'events-rowid.ts', input: { n }, log: () => undefined });
  assert.equal(out.status, 'completed');
  return out.runId;
}

/** The columns events had at schema 10 (format 2 adds `fold`, null in rows written before it). */
const V10 = 'seq, run_id, attempt, at, kind, step_idx, action_id, data';

const maxSeq = (db: Database.Database): number => db.prepare('SELECT COALESCE(MAX(seq), 0) FROM events').pluck().get() as number;
const seqsOf = (db: Database.Database, runId: string): number[] =>
  db.prepare('SELECT seq FROM events WHERE run_id = ? ORDER BY seq').pluck().all(runId) as number[];

describe('schema 11: events without AUTOINCREMENT (SQLite)', () => {
  it('a new journal has no AUTOINCREMENT table, so no transition writes sqlite_sequence', async () => {
    const file = path.join(tmpDir(), 'j.db');
    const store = openStore(file);
    await aRun(store, 1);
    store.close();
    const db = new Database(file, { readonly: true });
    try {
      const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'").all();
      assert.deepEqual(tables, []);
      assert.deepEqual(db.prepare("SELECT * FROM sqlite_sequence WHERE name = 'events'").all(), []);
    } finally {
      db.close();
    }
  });

  it('the migration keeps every event and seq, and the counter ahead of the table as a marker the next seq passes', async () => {
    const file = path.join(tmpDir(), 'j10.db');
    const old = journalAt(file, 10);
    const ins = old.prepare('INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data) VALUES (?, 1, ?, ?, ?, ?, ?)');
    for (let i = 0; i < 40; i++)
      ins.run(i % 2 ? 'a' : 'b', 1000 + i, i % 3 ? 'step.started' : 'action.started', i, i % 3 ? null : `x${i}`, JSON.stringify({ i }));
    // The newest rows deleted, as `logbook delete` did at schema 10: AUTOINCREMENT remembers seq 40.
    old.prepare('DELETE FROM events WHERE seq > 35').run();
    const before = old.prepare(`SELECT ${V10} FROM events ORDER BY seq`).all();
    old.close();

    const store = openStore(file);
    const id = await aRun(store, 2);
    store.close();
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), LATEST_VERSION);
      assert.deepEqual(db.prepare(`SELECT ${V10} FROM events WHERE seq <= 35 AND run_id <> '' ORDER BY seq`).all(), before);
      assert.deepEqual(db.prepare("SELECT seq, kind FROM events WHERE run_id = ''").all(), [{ seq: 40, kind: 'journal.deleted' }]);
      assert.ok(seqsOf(db, id)[0]! > 40, `the new run's first seq ${seqsOf(db, id)[0]} is past the 40 the old counter had handed out`);
      assert.equal(db.prepare('SELECT COUNT(*) FROM pragma_index_list(?) WHERE name = ?').pluck().get('events', 'events_by_run'), 1);
    } finally {
      db.close();
    }
  });

  it('a damaged counter (text, or past what a JS number holds) is not carried over, and the migration keeps every event', () => {
    for (const damaged of ["'forty'", '9223372036854775807']) {
      const file = path.join(tmpDir(), 'j10.db');
      const old = journalAt(file, 10);
      const ins = old.prepare("INSERT INTO events (run_id, attempt, at, kind) VALUES ('a', 1, 1, 'step.started')");
      for (let i = 0; i < 5; i++) ins.run();
      old.exec(`UPDATE sqlite_sequence SET seq = ${damaged} WHERE name = 'events'`);
      const before = old.prepare(`SELECT ${V10} FROM events ORDER BY seq`).all();
      old.close();
      openStore(file).close();
      const db = new Database(file, { readonly: true });
      try {
        assert.deepEqual(db.prepare(`SELECT ${V10} FROM events ORDER BY seq`).all(), before, damaged);
        assert.equal(maxSeq(db), 5, damaged);
      } finally {
        db.close();
      }
    }
  });

  it('deleting the newest run keeps the largest seq, so a change feed past it sees the next run', async () => {
    const file = path.join(tmpDir(), 'j.db');
    const store = openStore(file);
    const first = await aRun(store, 1);
    const newest = await aRun(store, 2);
    const db = new Database(file, { readonly: true });
    // Another connection, as the sidebar's reader is: SQLite's data_version moves only for other connections' commits.
    const watcher = openStore(file, { readonly: true });
    const tracker = new ChangeTracker(watcher);
    try {
      const high = maxSeq(db);
      assert.equal(seqsOf(db, newest).at(-1), high);
      store.deleteRun(newest);
      assert.equal(maxSeq(db), high, 'the largest seq stays after its run is deleted');
      tracker.poll();
      const next = await aRun(store, 3);
      assert.ok(seqsOf(db, next)[0]! > high, 'no seq is handed out twice');
      const notice = tracker.poll();
      assert.deepEqual(notice?.runs, [next], 'the feed names the new run, and not the marker');
      // Deleting again keeps one marker, at the newest deleted seq.
      const high2 = maxSeq(db);
      store.deleteRun(next);
      store.deleteRun(first);
      assert.deepEqual(db.prepare("SELECT seq FROM events WHERE run_id = ''").pluck().all(), [high2]);
    } finally {
      db.close();
      watcher.close();
      store.close();
    }
  });

  it('control: a plain DELETE of the newest rows hands their seqs out again, which is what the marker prevents', async () => {
    const file = path.join(tmpDir(), 'j.db');
    const store = openStore(file);
    await aRun(store, 1);
    const newest = await aRun(store, 2);
    const db = new Database(file);
    try {
      const high = maxSeq(db);
      db.prepare('DELETE FROM events WHERE run_id = ?').run(newest);
      const next = await aRun(store, 3);
      assert.ok(seqsOf(db, next)[0]! <= high, 'without the marker, the next run reuses a deleted seq');
    } finally {
      db.close();
      store.close();
    }
  });
});
