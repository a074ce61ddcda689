// Baseline B: the action bracket's transactions in raw SQL on the journal's own schema, without Logbook's code, so a
// figure can be split into what SQLite and the disk cost and what the runtime adds. Format 2 (the engine's writes
// since schema 12) or format 1 (the rows written at once, for the comparisons of bench/rawV2.ts and rawValues.ts).

import * as path from 'node:path';
import { newRunId, openStore, type Store } from '../src/runtime';
import { journaledSend } from './workload';
import { nowUs } from './measure';
import type Database from 'better-sqlite3';
import { sqliteOf } from '../src/runtime/store/sqlite';
import { FOLD_EVERY } from '../src/runtime/store/writer';
import { CARRIED_RAW } from '../src/runtime/store/rowOps';

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
  /** A run id as the engine makes them (newRunId), so every row and index entry is as long as the engine's. */
  private readonly runId = newRunId();
  private readonly run: (durable: boolean, fn: () => void) => void;
  private readonly q;
  private n = 0;
  private step = 0;
  /** Format 2: the row writes the committed events carry, applied by the next fold, and how many there are. */
  private unfolded: Array<() => void> = [];
  private foldedTo = 0;

  constructor(
    dir: string,
    readonly format: 1 | 2 = 2,
  ) {
    // openStore: the same file setup as the runtime (WAL, synchronous=FULL read back, migrations).
    this.store = openStore(path.join(dir, `raw-bracket-${format}.db`));
    const db = sqliteOf(this.store.db);
    db.prepare(
      `INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at, lease_token, lease_epoch) VALUES ('${this.runId}', 'raw', 'raw', 'running', 1, 0, 0, 't', 1)`,
    ).run();
    this.q = {
      holds: db.prepare(`SELECT 1 FROM runs WHERE id = '${this.runId}' AND lease_token = 't' AND lease_epoch = 1`).pluck(),
      event: db.prepare(`INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data) VALUES ('${this.runId}', 1, ?, ?, 0, ?, ?)`),
      insert: db.prepare(
        `INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, attempt, started_at) VALUES ('${this.runId}', ?, ?, 0, 'bench.send', 1, 'non-idempotent', ?, 'started', 1, ?)`,
      ),
      executing: db.prepare(`UPDATE actions SET executions = executions + 1 WHERE run_id = '${this.runId}' AND id = ?`),
      commit: db.prepare(`UPDATE actions SET status = 'committed', result = ?, ended_at = ?, commit_seq = ? WHERE run_id = '${this.runId}' AND id = ?`),
      stepInsert: db.prepare(`INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('${this.runId}', ?, ?, 'started', 1, ?)`),
      stepEnd: db.prepare(`UPDATE steps SET status = 'completed', result = ?, error = NULL, ended_at = ? WHERE run_id = '${this.runId}' AND idx = ?`),
      stepEvent: db.prepare(`INSERT INTO events (run_id, attempt, at, kind, step_idx, data) VALUES ('${this.runId}', 1, ?, ?, ?, ?)`),
      // Format 2: the event carries its writes (store/rowOps.ts's encoding, written out here by hand).
      folded: db.prepare(`INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data, fold) VALUES ('${this.runId}', 1, ?, ?, ?, ?, ?, ?)`),
      // The fold reads the writes back past the watermark, applies them, and moves the watermark.
      pending: db.prepare(`SELECT seq, fold FROM events WHERE run_id = '${this.runId}' AND seq > ? AND fold IS NOT NULL ORDER BY seq`).raw(true),
      mark: db.prepare(`UPDATE runs SET folded_seq = ? WHERE id = '${this.runId}'`),
    };
    this.run = fencedTransaction(db, this.q.holds);
    // Cycle the WAL once, as a long run has.
    for (let i = 0; i < 120; i++) this.once(true);
  }

  /**
   * One transition: format 1 writes its event and its row at once; format 2 writes the event with its writes (`fold`,
   * as text) and leaves the row to the fold. `row` gets the event's seq.
   */
  private transition(now: number, kind: string, stepIdx: number, id: string | null, data: string | null, fold: string, row: (seq: number) => void): void {
    if (this.format === 1) {
      row(Number((id === null ? this.q.stepEvent.run(now, kind, stepIdx, data) : this.q.event.run(now, kind, id, data)).lastInsertRowid));
      return;
    }
    const seq = Number(this.q.folded.run(now, kind, stepIdx, id, data, fold).lastInsertRowid);
    this.unfolded.push(() => row(seq));
  }

  /** A durable or lazy transaction of transitions, then format 2's fold once FOLD_EVERY writes wait, lazy, as the writer's. */
  private tx(durable: boolean, fn: () => void): void {
    this.run(durable, fn);
    if (this.unfolded.length < FOLD_EVERY) return;
    const todo = this.unfolded;
    this.unfolded = [];
    this.run(false, () => {
      const read = this.q.pending.all(this.foldedTo) as Array<[number, string]>;
      for (const apply of todo) apply();
      this.foldedTo = read.at(-1)?.[0] ?? this.foldedTo;
      this.q.mark.run(this.foldedTo);
    });
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
    for (let i = 0; i < n; i++) {
      const id = `model:1.${++this.n}`;
      const now = Date.now();
      const t0 = nowUs();
      const args = JSON.stringify({
        call: id,
        model: 'bench/bench-1',
        params: { prompt: [{ role: 'user', content: [{ type: 'text', text: `Customer ${this.n} asks for a refund.` }] }] },
      });
      const result = JSON.stringify({
        content: [{ type: 'text', text: 'The refund is on its way.' }],
        finishReason: { unified: 'stop' },
        usage: { inputTokens: { total: 40 }, outputTokens: { total: 8 } },
      });
      const n = this.n;
      this.tx(true, () => {
        this.started(now, id, n, 'model.generate', 'idempotent', args);
        this.settled(now, id, result);
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
      this.tx(true, () => {
        this.transition(now, 'step.started', idx, null, JSON.stringify({ name: `state ${idx}` }), `[["stepStart",${idx},"state ${idx}",1,${now}]]`, () =>
          q.stepInsert.run(idx, `state ${idx}`, now),
        );
        // A long value rides after the writes as it is.
        const fold =
          result.length >= CARRIED_RAW
            ? `[["stepEnd",${idx},"completed",{"$":"raw"},null,${now}]]\n${result}`
            : `[["stepEnd",${idx},"completed",${JSON.stringify(result)},null,${now}]]`;
        this.transition(now, 'step.completed', idx, null, JSON.stringify({ bytes: result.length }), fold, () => q.stepEnd.run(result, now, idx));
      });
      times.push(nowUs() - t0);
    }
    return times;
  }

  private once(group: boolean): void {
    const n = ++this.n;
    const { id, args, result } = journaledSend(this.runId, n);
    const now = Date.now();
    this.tx(true, () => this.started(now, id, n, 'bench.send', 'non-idempotent', args));
    // The count of the call goes in with its end (RunWriter.actionExecuting): two transactions, as the engine's.
    this.tx(!group, () => this.settled(now, id, result));
  }

  /** An action's `started`: its row inserted (format 2: carried by the event). */
  private started(now: number, id: string, n: number, type: string, effect: string, args: string): void {
    this.transition(
      now,
      'action.started',
      0,
      id,
      `{"type":"${type}","effect":"${effect}","version":1,"inverse":false}`,
      `[["actionInsert",${JSON.stringify(id)},${n},0,"${type}",1,"${effect}",${JSON.stringify(args)},"started",1,${now},null]]`,
      () => this.q.insert.run(id, n, args, now),
    );
  }

  /** The count of the call and `committed`, in the same transaction. */
  private settled(now: number, id: string, result: string): void {
    this.transition(now, 'action.executing', 0, id, null, `[["actionExecuting",${JSON.stringify(id)}]]`, () => this.q.executing.run(id));
    this.transition(now, 'action.committed', 0, id, null, `[["actionCommit",${JSON.stringify(id)},${JSON.stringify(result)},${now},null]]`, (seq) =>
      this.q.commit.run(result, now, seq, id),
    );
  }

  close(): void {
    this.store.close();
  }
}
