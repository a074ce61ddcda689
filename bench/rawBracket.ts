// Baseline B: the action bracket's transactions in raw SQL on the journal's own schema, without Logbook's code, so a
// figure can be split into what SQLite and the disk cost and what the runtime adds.

import * as path from 'node:path';
import { openStore, type Store } from '../src/runtime';
import { nowUs } from './measure';
import type Database from 'better-sqlite3';
import { sqliteOf } from '../src/runtime/store/sqlite';

/**
 * The writer's transaction in raw SQL: immediate, the lease read first; durable, or lazy (synchronous=NORMAL for it,
 * as RunWriter's lazy commits).
 */
export function fencedTransaction(db: Database.Database, holds: Database.Statement): (durable: boolean, fn: () => void) => void {
  const lazy = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const t = db.transaction((fn: () => void) => fn());
  return (durable, fn) => {
    if (!durable) lazy.run();
    try {
      t.immediate(() => {
        holds.get();
        fn();
      });
    } finally {
      if (!durable) full.run();
    }
  };
}

export class RawBracket {
  private readonly store: Store;
  private readonly run: (durable: boolean, fn: () => void) => void;
  private readonly q;
  private n = 0;
  private step = 0;

  constructor(dir: string) {
    // openStore: the same file setup as the runtime (WAL, synchronous=FULL read back, migrations).
    this.store = openStore(path.join(dir, 'raw-bracket.db'));
    const db = sqliteOf(this.store.db);
    db.prepare(
      "INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at, lease_token, lease_epoch) VALUES ('raw', 'raw', 'raw', 'running', 1, 0, 0, 't', 1)",
    ).run();
    this.q = {
      holds: db.prepare("SELECT 1 FROM runs WHERE id = 'raw' AND lease_token = 't' AND lease_epoch = 1").pluck(),
      event: db.prepare("INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data) VALUES ('raw', 1, ?, ?, 0, ?, ?)"),
      insert: db.prepare(
        "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, attempt, started_at) VALUES ('raw', ?, ?, 0, 'bench.send', 1, 'non-idempotent', ?, 'started', 1, ?)",
      ),
      executing: db.prepare("UPDATE actions SET executions = executions + 1 WHERE run_id = 'raw' AND id = ?"),
      commit: db.prepare("UPDATE actions SET status = 'committed', result = ?, ended_at = ?, commit_seq = ? WHERE run_id = 'raw' AND id = ?"),
      stepInsert: db.prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('raw', ?, ?, 'started', 1, ?)"),
      stepEnd: db.prepare("UPDATE steps SET status = 'completed', result = ?, error = NULL, ended_at = ? WHERE run_id = 'raw' AND idx = ?"),
      stepEvent: db.prepare("INSERT INTO events (run_id, attempt, at, kind, step_idx, data) VALUES ('raw', 1, ?, ?, ?, ?)"),
    };
    this.run = fencedTransaction(db, this.q.holds);
    // Cycle the WAL once, as a long run has.
    for (let i = 0; i < 120; i++) this.once(true);
  }

  /** started (durable), then the count of the call and committed (durable, or lazy in group mode): µs per bracket. */
  samples(n: number, group: boolean): number[] {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = nowUs();
      this.once(group);
      times.push(nowUs() - t0);
    }
    return times;
  }

  /** A journaled model call's one transaction: started, executing and committed written together, durable. µs each. */
  oneCommitSamples(n: number): number[] {
    const times: number[] = [];
    const q = this.q;
    for (let i = 0; i < n; i++) {
      const id = `model:raw.${++this.n}`;
      const now = Date.now();
      const t0 = nowUs();
      this.run(true, () => {
        q.insert.run(
          id,
          this.n,
          JSON.stringify({
            call: id,
            model: 'bench/bench-1',
            params: { prompt: [{ role: 'user', content: [{ type: 'text', text: `Customer ${this.n} asks for a refund.` }] }] },
          }),
          now,
        );
        q.event.run(now, 'action.started', id, '{"type":"model.generate","effect":"idempotent","version":1,"inverse":false}');
        q.executing.run(id);
        q.event.run(now, 'action.executing', id, null);
        const seq = Number(q.event.run(now, 'action.committed', id, null).lastInsertRowid);
        q.commit.run(
          JSON.stringify({
            content: [{ type: 'text', text: 'The refund is on its way.' }],
            finishReason: { unified: 'stop' },
            usage: { inputTokens: { total: 40 }, outputTokens: { total: 8 } },
          }),
          now,
          seq,
          id,
        );
      });
      times.push(nowUs() - t0);
    }
    return times;
  }

  /**
   * A step checkpoint's one durable transaction: the step's start (written behind into it), its result of `bytes`
   * and the two events, as the writer makes them. µs each.
   */
  checkpointSamples(n: number, bytes: number): number[] {
    const times: number[] = [];
    const q = this.q;
    for (let i = 0; i < n; i++) {
      const idx = ++this.step;
      const result = JSON.stringify({ step: idx, pad: 'x'.repeat(Math.max(0, bytes - 30)) });
      const now = Date.now();
      const t0 = nowUs();
      this.run(true, () => {
        q.stepInsert.run(idx, `state ${idx}`, now);
        q.stepEvent.run(now, 'step.started', idx, JSON.stringify({ name: `state ${idx}` }));
        q.stepEnd.run(result, now, idx);
        q.stepEvent.run(now, 'step.completed', idx, JSON.stringify({ bytes: result.length }));
      });
      times.push(nowUs() - t0);
    }
    return times;
  }

  private once(group: boolean): void {
    const id = `send:raw:user${++this.n}@example.com`;
    const now = Date.now();
    const q = this.q;
    this.run(true, () => {
      q.insert.run(id, this.n, JSON.stringify({ to: `user${this.n}@example.com`, body: 'Hello' }), now);
      q.event.run(now, 'action.started', id, '{"type":"bench.send","effect":"non-idempotent","version":1,"inverse":false}');
    });
    // The count of the call goes in with its end (RunWriter.actionExecuting): two transactions, as the engine's.
    this.run(!group, () => {
      q.executing.run(id);
      q.event.run(now, 'action.executing', id, null);
      const seq = Number(q.event.run(now, 'action.committed', id, null).lastInsertRowid);
      q.commit.run(JSON.stringify({ messageId: `m-${this.n}` }), now, seq, id);
    });
  }

  close(): void {
    this.store.close();
  }
}
