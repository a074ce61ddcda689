// putBackToSchema9, the helper the checker's migration operation stands on: schema 9's tables exactly, every row kept.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/runtime';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { tmpDir } from '../helpers';
import { journalAt } from './journalAt';
import { REBUILT_SINCE_9, putBackToSchema9, rebuiltSchema } from './schema9';

/** A journal as today's Logbook leaves it (the latest schema), with rows in every table migrations 10 and 11 rebuilt. */
function journal10WithRows(file: string): void {
  openStore(file).close();
  const db = new Database(file);
  try {
    db.exec(`
      INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at) VALUES ('r', 'a', 's.ts', 'running', 1, 1, 1);
      INSERT INTO steps (run_id, idx, name, status, result, attempt, started_at, ended_at) VALUES
        ('r', 0, 'one', 'completed', '{"v":1}', 1, 1, 2), ('r', 1, 'two', 'running', NULL, 2, 3, NULL);
      INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, ended_at, commit_seq)
        VALUES ('r', 'charge:r:0', 0, 0, 'charge', 1, 'non-idempotent', '{}', 'committed', '{"ok":true}', 1, 1, 1, 2, 5),
               ('r', 'charge:r:1', 1, 1, 'charge', 1, 'non-idempotent', '{}', 'started', NULL, 1, 2, 3, NULL, NULL);
      INSERT INTO graph_checkpoints VALUES ('t', '', 'c1', NULL, 'json', x'00ff', 'json', x'7b7d', 7);
      INSERT INTO graph_blobs VALUES ('t', '', 'messages', '1', 'json', x'5b5d'), ('t', '', 'count', '2', 'json', NULL);
      INSERT INTO graph_writes VALUES ('t', '', 'c1', 'task', 0, 'p', 'messages', 'json', x'01');
      INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data) VALUES ('r', 1, 1, 'run.started', NULL, NULL, '{}'), ('r', 1, 2, 'step.started', 0, NULL, NULL);
    `);
  } finally {
    db.close();
  }
}

/** Every row of the rebuilt tables, but for format 2's column (events.fold), which schema 9 has not. */
const rows = (db: Database.Database): Record<string, unknown[]> =>
  Object.fromEntries(
    REBUILT_SINCE_9.map((t) => [
      t,
      (db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2, 3`).all() as Array<Record<string, unknown>>).map(({ fold: _, ...row }) => row),
    ]),
  );

describe('putBackToSchema9 (test helper)', () => {
  it("leaves the rebuilt tables exactly as a fresh schema-9 journal's, at user_version 9, every row kept; today's open migrates it back", () => {
    const dir = tmpDir();
    const fresh9 = journalAt(path.join(dir, 'fresh9.db'), 9);
    const want = rebuiltSchema(fresh9);
    fresh9.close();
    const file = path.join(dir, 'j.db');
    journal10WithRows(file);
    const at10 = new Database(file, { readonly: true });
    const before = rows(at10);
    // The comparison can fail: the latest definitions are not schema 9's.
    assert.notDeepEqual(rebuiltSchema(at10), want);
    at10.close();

    putBackToSchema9(file);

    const at9 = new Database(file, { readonly: true });
    try {
      assert.equal(at9.pragma('user_version', { simple: true }), 9);
      assert.deepEqual(rebuiltSchema(at9), want);
      assert.deepEqual(rows(at9), before);
      assert.equal(at9.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%_v10'").pluck().get(), 0);
    } finally {
      at9.close();
    }
    openStore(file).close();
    const again = new Database(file, { readonly: true });
    try {
      assert.equal(again.pragma('user_version', { simple: true }), LATEST_VERSION);
      assert.deepEqual(rows(again), before);
    } finally {
      again.close();
    }
  });

  it('refuses a journal that is not at the latest schema, changing nothing', () => {
    const file = path.join(tmpDir(), 'j.db');
    journalAt(file, 9).close();
    assert.throws(() => putBackToSchema9(file), new RegExp(`at schema 9, not ${LATEST_VERSION}`));
    const db = new Database(file, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), 9);
    db.close();
  });
});
