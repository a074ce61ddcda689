// Format v2 step 1 on SQLite (docs/journal-format.md): where an action's values live once the log carries them.
//
// `tsx bench/rawValues.ts [--n N] [--rounds R]` writes the same brackets into two journals of today's schema, in raw
// SQL: the hot path appends only events, each carrying its value (args on `action.started`, the result on
// `action.committed`), and a lazy transaction every 16 brackets materialises the action rows, either
// - twice: the row holds its own copy of args and result, as format 1's rows do; or
// - pointer: the row holds the seqs of the two events, and replay reads the values through them.
// Format 1's bracket (rawBracket.ts) runs in the same rounds. It prints, per action and per result size, the journal's bytes after a WAL checkpoint, the bracket as F (a 4 KiB
// overwrite + fsync, same directory; the batch's cost spread over its brackets), and replay's read of a step's
// actions (its eight columns, a page of 256 rows at a time, as replay reads them), warm.

import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore, type Store } from '../src/runtime/store';
import { sqliteOf } from '../src/runtime/store/sqlite';
import { FsyncFloor } from './floor';
import { mean, median, nowUs } from './measure';
import { RawBracket, fencedTransaction } from './rawBracket';

const BATCH = 16;
const PAGE = 256;
const RUN = 'raw';

type Variant = 'twice' | 'pointer';

/** One journal of today's schema, plus what step 1 adds: events.value, and for the pointer the rows' event seqs. */
class Journal {
  readonly db: Database.Database;
  private readonly store: Store;
  private readonly q;
  private readonly tx: (durable: boolean, fn: () => void) => void;
  private pending: Array<{ id: string; seq: number; args: string; result: string; startedAt: number; committedAt: number }> = [];
  private n = 0;

  constructor(
    file: string,
    readonly variant: Variant,
  ) {
    this.store = openStore(file);
    const db = sqliteOf(this.store.db);
    this.db = db;
    db.exec('ALTER TABLE events ADD COLUMN value TEXT');
    if (variant === 'pointer') db.exec('ALTER TABLE actions ADD COLUMN args_at INTEGER; ALTER TABLE actions ADD COLUMN result_at INTEGER');
    db.prepare(
      `INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at, lease_token, lease_epoch) VALUES ('${RUN}', 'raw', 'raw', 'running', 1, 0, 0, 't', 1)`,
    ).run();
    const insert =
      variant === 'twice'
        ? "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, ended_at, commit_seq) VALUES (?, ?, ?, 0, 'bench.send', 1, 'non-idempotent', ?, 'committed', ?, 1, 1, 0, 0, ?)"
        : "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, ended_at, commit_seq, args_at, result_at) VALUES (?, ?, ?, 0, 'bench.send', 1, 'non-idempotent', '', 'committed', NULL, 1, 1, 0, 0, ?, ?, ?)";
    const read =
      variant === 'twice'
        ? 'SELECT id, seq, type, version, args, status, result, attempt FROM actions INDEXED BY actions_by_step WHERE run_id = ? AND step_idx = 0 AND seq > ? ORDER BY seq LIMIT ?'
        : 'SELECT a.id, a.seq, a.type, a.version, s.value, a.status, c.value, a.attempt FROM actions a INDEXED BY actions_by_step ' +
          'LEFT JOIN events s ON s.seq = a.args_at LEFT JOIN events c ON c.seq = a.result_at WHERE a.run_id = ? AND a.step_idx = 0 AND a.seq > ? ORDER BY a.seq LIMIT ?';
    this.q = {
      holds: db.prepare(`SELECT 1 FROM runs WHERE id = '${RUN}' AND lease_token = 't' AND lease_epoch = 1`).pluck(),
      event: db.prepare(`INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data, value) VALUES ('${RUN}', 1, 0, ?, 0, ?, ?, ?)`),
      insert: db.prepare(insert),
      read: db.prepare(read).raw(true),
    };
    this.tx = fencedTransaction(db, this.q.holds);
  }

  /** started (durable), committed (durable), and every BATCH brackets the lazy materialisation. */
  bracket(result: string): void {
    const n = ++this.n;
    const id = `send:${RUN}:user${n}@example.com`;
    const args = JSON.stringify({ to: `user${n}@example.com`, body: 'Hello' });
    let startedAt = 0;
    let committedAt = 0;
    this.tx(true, () => {
      startedAt = Number(this.q.event.run('action.started', id, '{"type":"bench.send","effect":"non-idempotent","version":1}', args).lastInsertRowid);
    });
    this.tx(true, () => {
      committedAt = Number(this.q.event.run('action.committed', id, '{"executions":1}', result).lastInsertRowid);
    });
    this.pending.push({ id, seq: n, args, result, startedAt, committedAt });
    if (this.pending.length >= BATCH) this.materialise();
  }

  private materialise(): void {
    const rows = this.pending;
    this.pending = [];
    this.tx(false, () => {
      for (const r of rows) {
        if (this.variant === 'twice') this.q.insert.run(RUN, r.id, r.seq, r.args, r.result, r.committedAt);
        else this.q.insert.run(RUN, r.id, r.seq, r.committedAt, r.startedAt, r.committedAt);
      }
    });
  }

  /** µs per action to read the step's actions a page at a time, values included. */
  readAll(): number {
    let after = 0;
    let rows = 0;
    const t0 = nowUs();
    for (;;) {
      const page = this.q.read.all(RUN, after, PAGE) as unknown[][];
      rows += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1]![1] as number;
    }
    return (nowUs() - t0) / rows;
  }

  /** Bytes of the database file per action, after the WAL is checkpointed into it. */
  bytesPerAction(): number {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const size = this.db.pragma('page_size', { simple: true }) as number;
    return ((pages - free) * size) / this.n;
  }

  close(): void {
    this.store.close();
  }
}

function main(): void {
  const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } } });
  const n = Number(values.n);
  const rounds = Number(values.rounds);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raw-values-'));
  const floor = new FsyncFloor(dir);
  try {
    for (const bytes of [100, 4096]) {
      const result = JSON.stringify({ messageId: 'm', pad: 'x'.repeat(Math.max(0, bytes - 30)) });
      const journals = (['twice', 'pointer'] as const).map((v) => new Journal(path.join(dir, `${v}-${bytes}.db`), v));
      const f: number[] = [];
      const per = new Map<Variant, number[]>(journals.map((j) => [j.variant, []]));
      // Format 1's bracket in the same rounds, for the small values only (its result is a few bytes).
      const raw = bytes === 100 ? new RawBracket(dir, 1) : undefined;
      const v1: number[] | undefined = raw ? [] : undefined;
      for (let r = 0; r < rounds; r++) {
        f.push(floor.sample(50));
        if (raw) v1?.push(mean(raw.samples(n / rounds, false)));
        // Alternating, a whole batch at a time, so each variant's mean counts the bracket that paid for its batch.
        for (const j of journals) {
          const t0 = nowUs();
          for (let i = 0; i < n / rounds; i++) j.bracket(result);
          per.get(j.variant)!.push((nowUs() - t0) / (n / rounds));
        }
      }
      const F = median(f);
      if (v1) console.log(`format 1's two transactions, same run (rawBracket.ts, small values): bracket ${(median(v1) / F).toFixed(2)} F`);
      raw?.close();
      // Alternating too, many times: one read of a few thousand rows takes milliseconds, and this machine is noisy.
      const reads = new Map<Variant, number[]>(journals.map((j) => [j.variant, []]));
      for (let i = 0; i < 21; i++) for (const j of journals) reads.get(j.variant)!.push(j.readAll());
      for (const j of journals) {
        console.log(
          `${bytes} B results, ${j.variant.padEnd(7)}: ${(j.bytesPerAction() / 1024).toFixed(2)} KiB per action; bracket ${(median(per.get(j.variant)!) / F).toFixed(2)} F; replay read ${median(reads.get(j.variant)!).toFixed(2)} µs per action`,
        );
        j.close();
      }
      console.log(`  (F = ${F.toFixed(0)} µs)`);
    }
  } finally {
    floor.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
