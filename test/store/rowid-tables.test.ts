// Schema 10's rule: no table whose rows can grow large is a WITHOUT ROWID table (SQLite reads a spilling row whole to
// compare a key against it), and the migration that made steps, actions and the LangGraph tables rowid tables keeps
// every row as it was.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/runtime';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { tmpDir } from '../helpers';
import { journalAt } from './journalAt';

/** Non-key TEXT or BLOB columns of WITHOUT ROWID tables: values that can spill onto overflow pages inside a key B-tree. */
function spillableKeyedColumns(db: Database.Database): string[] {
  const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string; sql: string }[];
  const found: string[] = [];
  for (const t of tables) {
    if (!/WITHOUT\s+ROWID/i.test(t.sql)) continue;
    const cols = db.prepare('SELECT name, type, pk FROM pragma_table_info(?)').all(t.name) as { name: string; type: string; pk: number }[];
    for (const c of cols) if (c.pk === 0 && /text|blob|char|clob/i.test(c.type)) found.push(`${t.name}.${c.name}`);
  }
  return found.sort();
}

const TABLES: Record<string, string> = {
  steps: 'run_id, idx',
  actions: 'run_id, id',
  graph_checkpoints: 'thread_id, checkpoint_ns, checkpoint_id',
  graph_blobs: 'thread_id, checkpoint_ns, channel, version',
  graph_writes: 'thread_id, checkpoint_ns, checkpoint_id, task_id, idx',
};

function rowsOf(db: Database.Database): Record<string, unknown[]> {
  return Object.fromEntries(Object.entries(TABLES).map(([t, key]) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY ${key}`).all()]));
}

describe('schema 10: no large value in a key B-tree (SQLite)', () => {
  it('a new journal has no WITHOUT ROWID table with a non-key text or blob column', () => {
    const file = path.join(tmpDir(), 'j.db');
    openStore(file).close();
    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(spillableKeyedColumns(db), []);
    } finally {
      db.close();
    }
  });

  it('control: schema 9 had them, so the check can fail', () => {
    const db = journalAt(path.join(tmpDir(), 'j9.db'), 9);
    try {
      const found = spillableKeyedColumns(db);
      for (const col of ['steps.result', 'actions.args', 'actions.result', 'graph_blobs.value', 'graph_writes.value', 'graph_checkpoints.checkpoint'])
        assert.ok(found.includes(col), `${col} in ${found.join(', ')}`);
    } finally {
      db.close();
    }
  });

  it('the migration from schema 9 keeps every row, large and small, and the indexes the reader forces', () => {
    const file = path.join(tmpDir(), 'j9.db');
    const db = journalAt(file, 9);
    const big = 'x'.repeat(300_000);
    db.prepare(
      "INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at) VALUES ('r', 'a', 's.ts', 'running', 1, 1, 1), ('q', 'a', 's.ts', 'completed', 1, 2, 2)",
    ).run();
    const step = db.prepare('INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)');
    const action = db.prepare(
      'INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions, decision, compensation, attempt, started_at, ended_at, commit_seq) ' +
        "VALUES (?, ?, ?, ?, 't', 1, 'non-idempotent', ?, ?, ?, ?, 1, ?, ?, 1, ?, ?, ?)",
    );
    for (const run of ['r', 'q']) {
      for (let i = 0; i < 40; i++) {
        step.run(
          run,
          i,
          `step ${i}`,
          i === 39 ? 'started' : 'completed',
          i % 9 === 0 ? JSON.stringify(big) : JSON.stringify({ i }),
          null,
          i,
          i === 39 ? null : i,
        );
        action.run(
          run,
          `${run}:${i}`,
          i + 1,
          i,
          JSON.stringify({ i, big: i % 13 === 0 ? big : '' }),
          i === 39 ? 'started' : 'committed',
          '{"ok":true}',
          i === 38 ? '{"message":"x"}' : null,
          null,
          null,
          i,
          i,
          i,
        );
      }
    }
    db.prepare("UPDATE actions SET status = 'started', error = '{\"message\":\"timeout\"}', decision = 'retry' WHERE id = 'r:5'").run();
    db.prepare("INSERT INTO graph_checkpoints VALUES ('t', '', 'c1', NULL, 'json', ?, 'json', X'7b7d', 5)").run(Buffer.from(big));
    db.prepare("INSERT INTO graph_blobs VALUES ('t', '', 'messages', '1', 'json', ?), ('t', '', 'empty', '1', 'empty', NULL)").run(Buffer.from(big));
    db.prepare("INSERT INTO graph_writes VALUES ('t', '', 'c1', 'task', 0, '', 'messages', 'json', ?)").run(Buffer.from('[1]'));
    const before = rowsOf(db);
    db.close();

    openStore(file).close();
    const after = new Database(file, { readonly: true });
    try {
      assert.equal(after.pragma('user_version', { simple: true }), LATEST_VERSION);
      assert.deepEqual(rowsOf(after), before);
      assert.deepEqual(spillableKeyedColumns(after), []);
      const indexes = after
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'actions' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .pluck()
        .all();
      assert.deepEqual(indexes, ['actions_by_seq', 'actions_by_step', 'actions_in_doubt_after_error']);
      // The partial index still answers the in-doubt-after-error query with the row migrated into it.
      const inDoubt = after.prepare("SELECT id FROM actions WHERE run_id = 'r' AND status = 'started' AND error IS NOT NULL ORDER BY seq").pluck().all();
      assert.deepEqual(inDoubt, ['r:5']);
      assert.equal(after.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
      assert.equal(after.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%_v9'").pluck().get(), 0);
    } finally {
      after.close();
    }
  });
});
