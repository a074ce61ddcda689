// Journal format v2's write pattern in raw SQL, beside v1's (rawBracket.ts): the floor a v2 store can reach, before any runtime code is written.
//
// `tsx bench/rawV2.ts [--pg] [--n N]` prints each pattern as F-ratios of the same run (F: a 4 KiB overwrite + fsync
// in the same directory; Fpg: one autocommitted one-row INSERT on the same server) and the WAL frames each
// transaction writes. The v2 pattern (docs/journal-format.md): one append-only row per transition in a table
// clustered by (run_id, seq), no secondary index, no counter, the lease fence a read; `executing` is not a
// transaction of its own (the committed row says the effect ran); on PostgreSQL a fence-and-append function, so a
// transition is one round trip.

import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { FsyncFloor, SqliteFloor } from './floor';
import { median, nowUs } from './measure';
import { RawBracket } from './rawBracket';
import { journaledSend } from './workload';
import { newRunId } from '../src/runtime';
import type { Store } from '../src/runtime/store';
import { dbOf } from '../src/runtime/store/db';
import { sqliteOf } from '../src/runtime/store/sqlite';

const SEND_ARGS = (n: number): string => JSON.stringify({ to: `user${n}@example.com`, body: 'Hello' });
const STARTED = '{"type":"bench.send","effect":"non-idempotent","version":1,"inverse":false}';

/** The v2 layout's hot tables: the run (its lease, read as the fence) and the append-only entries. */
const V2_SCHEMA = `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY, status TEXT NOT NULL, lease_token TEXT, lease_epoch INTEGER NOT NULL, folded_seq INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE entries (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, step_idx INTEGER, action_id TEXT,
    attempt INTEGER NOT NULL, at INTEGER NOT NULL, data TEXT,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;
  -- The state kept in a table written off the hot path (the other design): v1's action row and its two indexes.
  CREATE TABLE actions (
    run_id TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, step_idx INTEGER NOT NULL, status TEXT NOT NULL,
    args TEXT NOT NULL, result TEXT, executions INTEGER NOT NULL DEFAULT 0, commit_seq INTEGER,
    PRIMARY KEY (run_id, id)
  ) WITHOUT ROWID;
  CREATE INDEX actions_by_step ON actions(run_id, step_idx);
  CREATE INDEX actions_by_seq ON actions(run_id, seq);
`;

/** v2 on SQLite: started (durable), the effect, committed (durable, or lazy in group mode), one row each. */
export class RawV2 {
  readonly db: Database.Database;
  private readonly holds: Database.Statement;
  private readonly append: Database.Statement;
  private readonly tx: (durable: boolean, fn: () => void) => void;
  private readonly state;
  private readonly fold: Database.Statement;
  private seq = 0;
  /** A run id as the engine makes them (newRunId), so every row and key is as long as the engine's. */
  private readonly runId = newRunId();
  /** Entries appended since the watermark, as the lease holder keeps them in memory: what the next batch applies. */
  private pending: Array<{ seq: number; kind: 'started' | 'committed'; id: string; n: number; args: string; result: string }> = [];

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('mmap_size = 0');
    this.db.exec(V2_SCHEMA);
    const run = this.runId;
    this.db.prepare("INSERT INTO runs (id, status, lease_token, lease_epoch) VALUES (?, 'running', 't', 1)").run(run);
    this.holds = this.db.prepare(`SELECT 1 FROM runs WHERE id = '${run}' AND lease_token = 't' AND lease_epoch = 1`).pluck();
    this.append = this.db.prepare(`INSERT INTO entries (run_id, seq, kind, step_idx, action_id, attempt, at, data) VALUES ('${run}', ?, ?, 0, ?, 1, ?, ?)`);
    const t = this.db.transaction((fn: () => void) => {
      if (this.holds.get() !== 1) throw new Error('lease lost');
      fn();
    });
    this.state = {
      insert: this.db.prepare(`INSERT INTO actions (run_id, id, seq, step_idx, status, args) VALUES ('${run}', ?, ?, 0, 'started', ?)`),
      commit: this.db.prepare(`UPDATE actions SET status = 'committed', result = ?, executions = 1, commit_seq = ? WHERE run_id = '${run}' AND id = ?`),
    };
    this.fold = this.db.prepare(`UPDATE runs SET folded_seq = ? WHERE id = '${run}'`);
    const lazy = this.db.prepare('PRAGMA synchronous = NORMAL');
    const full = this.db.prepare('PRAGMA synchronous = FULL');
    this.tx = (durable, fn) => {
      if (!durable) lazy.run();
      try {
        t.immediate(fn);
      } finally {
        if (!durable) full.run();
      }
    };
    // Past the auto-checkpoint at 1000 frames, so commits overwrite the WAL as in a long run (a growing file costs a second fsync on ext4).
    for (let i = 0; i < 500; i++) this.bracket(true);
  }

  bracket(group: boolean): void {
    const n = ++this.seq;
    const { id, args, result } = journaledSend(this.runId, n);
    const now = Date.now();
    this.tx(true, () => this.append.run(2 * n, 'action.started', id, now, `{"a":${args},"d":${STARTED}}`));
    this.tx(!group, () => this.append.run(2 * n + 1, 'action.committed', id, now, `{"r":${result},"x":1}`));
  }

  /**
   * The bracket with the current state kept in a table written off the hot path: each durable append is followed by
   * a lazy transaction (no fsync) that updates the action's row and indexes; the next fsync carries its pages.
   */
  bracketWithState(group: boolean): void {
    const n = ++this.seq;
    const { id, args, result } = journaledSend(this.runId, n);
    const now = Date.now();
    this.tx(true, () => this.append.run(2 * n, 'action.started', id, now, `{"a":${args},"d":${STARTED}}`));
    this.tx(false, () => this.state.insert.run(id, n, args));
    this.tx(!group, () => this.append.run(2 * n + 1, 'action.committed', id, now, `{"r":${result},"x":1}`));
    this.tx(false, () => this.state.commit.run(result, 2 * n + 1, id));
  }

  /**
   * The bracket with the state table materialised in batches (docs/journal-format.md, *Current state*): the appends
   * as in `bracket`, and every `batch` brackets one lazy transaction (no fsync; the next durable commit carries its
   * pages) applies the entries since the watermark to the action rows and moves `runs.folded_seq`.
   */
  bracketBatched(group: boolean, batch: number): void {
    const n = ++this.seq;
    const { id, args, result } = journaledSend(this.runId, n);
    const now = Date.now();
    this.tx(true, () => this.append.run(2 * n, 'action.started', id, now, `{"a":${args},"d":${STARTED}}`));
    this.pending.push({ seq: 2 * n, kind: 'started', id, n, args, result });
    this.tx(!group, () => this.append.run(2 * n + 1, 'action.committed', id, now, `{"r":${result},"x":1}`));
    this.pending.push({ seq: 2 * n + 1, kind: 'committed', id, n, args, result });
    if (this.pending.length >= 2 * batch) this.materialise();
  }

  /** Applies the entries past the watermark to the state table, in one lazy transaction. */
  materialise(): void {
    const todo = this.pending;
    if (!todo.length) return;
    this.pending = [];
    this.tx(false, () => {
      for (const e of todo) {
        if (e.kind === 'started') this.state.insert.run(e.id, e.n, e.args);
        else this.state.commit.run(e.result, e.seq, e.id);
      }
      this.fold.run(todo[todo.length - 1]?.seq ?? 0);
    });
  }

  /** A model call: started and committed in one durable transaction, one row. */
  oneCommit(): void {
    const n = ++this.seq;
    const id = `model:1.${n}`;
    const now = Date.now();
    this.tx(true, () =>
      this.append.run(
        2 * n,
        'action.done',
        id,
        now,
        JSON.stringify({
          a: {
            call: id,
            model: 'bench/bench-1',
            params: { prompt: [{ role: 'user', content: [{ type: 'text', text: `Customer ${n} asks for a refund.` }] }] },
          },
          r: {
            content: [{ type: 'text', text: 'The refund is on its way.' }],
            finishReason: { unified: 'stop' },
            usage: { inputTokens: { total: 40 }, outputTokens: { total: 8 } },
          },
          x: 1,
        }),
      ),
    );
  }

  /** µs per bracket, as RawBracket.samples. */
  samples(n: number, group: boolean): number[] {
    return timed(n, () => this.bracket(group));
  }

  /** µs per model call's one transaction, as RawBracket.oneCommitSamples. */
  oneCommitSamples(n: number): number[] {
    return timed(n, () => this.oneCommit());
  }

  close(): void {
    this.db.close();
  }
}

function timed(n: number, fn: () => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowUs();
    fn();
    out.push(nowUs() - t0);
  }
  return out;
}

/** Batch sizes (brackets per lazy materialisation) the writer could choose between. */
const BATCHES = [1, 16, 64, 256] as const;

/**
 * The materialisation's cost per bracket for each batch size, beside the pure append (the floor) and the
 * materialisation after every append: means over whole batches (a median would hide the one bracket in `batch`
 * that pays for it), rounds interleaved, the median round kept. Also what a reader pays at worst for the entries
 * past the watermark (two per bracket of the batch not yet applied), from the fold's per-entry cost.
 */
function materialisationRows(dir: string, F: number, n: number, foldUsPerEntry: number): Array<[string, number, string]> {
  const v2 = new RawV2(path.join(dir, 'v2-batches.db'));
  try {
    const mean = (count: number, fn: () => void): number => {
      const t0 = nowUs();
      for (let i = 0; i < count; i++) fn();
      return (nowUs() - t0) / count;
    };
    // Whole batches, at least two: the brackets that pay for a batch are counted as often as they happen.
    const batched = (group: boolean, b: number) => (c: number) => {
      v2.materialise();
      const count = Math.max(c, 2 * b);
      return mean(count - (count % b), () => v2.bracketBatched(group, b));
    };
    const variants: Array<{ name: string; run: (count: number) => number; batch?: number }> = [
      { name: 'v2 bracket, durable, no state table (mean)', run: (c) => mean(c, () => v2.bracket(false)) },
      { name: 'v2 bracket + state row after each append (mean)', run: (c) => mean(c, () => v2.bracketWithState(false)) },
      ...BATCHES.map((b) => ({ name: `v2 bracket + state applied every ${b} bracket(s) (mean)`, run: batched(false, b), batch: b })),
      // Group commit, where the budget is tightest (1.3 F): the batches' pages ride on the one fsync per bracket.
      { name: 'v2 bracket, group commit, no state table (mean)', run: (c) => mean(c, () => v2.bracket(true)) },
      ...[16, 64].map((b) => ({ name: `v2 bracket, group commit + state applied every ${b} brackets (mean)`, run: batched(true, b), batch: b })),
    ];
    const rounds: number[][] = variants.map(() => []);
    for (let r = 0; r < 5; r++) variants.forEach((v, i) => rounds[i]?.push(v.run(n)));
    return variants.map((v, i): [string, number, string] => [
      v.name,
      median(rounds[i] ?? []) / F,
      v.batch === undefined ? '' : `a read folds at most ${2 * v.batch} entries past the watermark: ${(2 * v.batch * foldUsPerEntry).toFixed(0)} µs`,
    ]);
  } finally {
    v2.close();
  }
}

/** WAL frames a pattern writes per call: the WAL restarted, auto-checkpoint off, its growth over `n` calls. */
function framesPer(db: Database.Database, walFile: string, n: number, fn: () => void): number {
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('wal_checkpoint(TRUNCATE)');
  fn(); // the first write after a restart also rewrites the WAL header
  const before = fs.statSync(walFile).size;
  for (let i = 0; i < n; i++) fn();
  const page = db.pragma('page_size', { simple: true }) as number;
  const frames = (fs.statSync(walFile).size - before) / (page + 24);
  db.pragma('wal_autocheckpoint = 1000');
  return frames / n;
}

/**
 * What deriving state on read costs: a run of `actions` brackets (2 entries each) written in one transaction, then
 * its entries' headers scanned in order and folded into the latest kind per action, as a resume would have to.
 * µs per entry, and the whole fold's ms.
 */
export function foldCost(dir: string, actions: number): { perEntryUs: number; totalMs: number } {
  const db = new Database(path.join(dir, 'fold.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.exec(V2_SCHEMA);
    const append = db.prepare("INSERT INTO entries (run_id, seq, kind, step_idx, action_id, attempt, at, data) VALUES ('raw', ?, ?, 0, ?, 1, 0, ?)");
    db.transaction(() => {
      for (let i = 1; i <= actions; i++) {
        append.run(2 * i, 'action.started', `send:raw:user${i}@example.com`, `{"a":${SEND_ARGS(i)},"d":${STARTED}}`);
        append.run(2 * i + 1, 'action.committed', `send:raw:user${i}@example.com`, `{"r":{"messageId":"m-${i}"},"x":1}`);
      }
    })();
    const scan = db.prepare("SELECT seq, kind, action_id FROM entries WHERE run_id = 'raw' ORDER BY seq").raw(true);
    const t0 = nowUs();
    const state = new Map<string, string>();
    for (const row of scan.iterate() as IterableIterator<[number, string, string]>) state.set(row[2], row[1]);
    const us = nowUs() - t0;
    if (state.size !== actions) throw new Error('fold lost actions');
    return { perEntryUs: us / (2 * actions), totalMs: us / 1000 };
  } finally {
    db.close();
  }
}

function sqliteRows(n: number): Array<[string, number, string]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-rawv2-'));
  try {
    const floor = new FsyncFloor(dir);
    const sfloor = new SqliteFloor(dir);
    const v1 = new RawBracket(dir, 1);
    const v2 = new RawV2(path.join(dir, 'v2.db'));
    const F = floor.sample(n);
    const S = median(sfloor.samples(n, true));
    const rows: Array<[string, number, string]> = [];
    const add = (name: string, us: number, note = ''): void => void rows.push([name, us / F, note]);
    add('S: SQLite one-row durable commit', S);
    const v1Full = median(v1.samples(n, false));
    const v2Full = median(timed(n, () => v2.bracket(false)));
    const v2State = median(timed(n, () => v2.bracketWithState(false)));
    const v1Group = median(v1.samples(n, true));
    const v2Group = median(timed(n, () => v2.bracket(true)));
    const v1Model = median(v1.oneCommitSamples(n));
    const v2Model = median(timed(n, () => v2.oneCommit()));
    const v1db = sqliteOf(dbOf((v1 as unknown as { store: Store }).store.db));
    const v1Frames = framesPer(v1db, path.join(dir, 'raw-bracket.db-wal'), 200, () => v1.samples(1, false));
    const v2Frames = framesPer(v2.db, path.join(dir, 'v2.db-wal'), 200, () => v2.bracket(false));
    add('v1 bracket (started; executing + committed), durable', v1Full, `${v1Frames.toFixed(2)} WAL frames per bracket`);
    add('v2 bracket (started + committed, one row each), durable', v2Full, `${v2Frames.toFixed(2)} WAL frames per bracket`);
    add('v2 bracket + state table written lazily after each append, durable', v2State);
    add('v1 bracket, group commit', v1Group);
    add('v2 bracket, group commit', v2Group);
    add("v1 model call's one transaction", v1Model);
    add("v2 model call's one transaction (one row)", v2Model);
    rows.unshift(['F (µs)', F, '']);
    const fold = foldCost(dir, 100_000);
    rows.push([
      'derived on read: fold of 200k entries, per entry (µs)',
      fold.perEntryUs,
      `${fold.totalMs.toFixed(0)} ms; a 1M-action run folds 2M entries: ${((fold.perEntryUs * 2e6) / 1e6).toFixed(2)} s`,
    ]);
    rows.push(...materialisationRows(dir, F, n, fold.perEntryUs));
    v1.close();
    v2.close();
    sfloor.close();
    floor.close();
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The same writes on PostgreSQL, medians in µs: one autocommitted INSERT (Fpg's analogue), v1's statement per round trip, v2's fence-and-append function. */
export async function rawPgBrackets(url: string, n: number): Promise<{ insertUs: number; v1Us: number; v2Us: number }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`
      DROP TABLE IF EXISTS floor, runs, actions, events, entries;
      DROP FUNCTION IF EXISTS lb_append;
      CREATE TABLE floor (id bigserial PRIMARY KEY, v text);
      CREATE TABLE runs (id text PRIMARY KEY, status text NOT NULL, lease_token text, lease_epoch bigint NOT NULL);
      CREATE TABLE actions (run_id text, id text, seq bigint, status text, args text, result text, executions int DEFAULT 0, commit_seq bigint, PRIMARY KEY (run_id, id));
      CREATE INDEX actions_by_seq ON actions(run_id, seq);
      CREATE TABLE events (seq bigserial PRIMARY KEY, run_id text, kind text, action_id text, data text);
      CREATE INDEX events_by_run ON events(run_id, seq);
      CREATE TABLE entries (run_id text NOT NULL, seq bigint NOT NULL, kind text NOT NULL, action_id text, at bigint NOT NULL, data text, PRIMARY KEY (run_id, seq));
      INSERT INTO runs VALUES ('raw', 'running', 't', 1);
      -- v2: the fence and the append in one statement, so a transition is one round trip and one server transaction.
      CREATE FUNCTION lb_append(p_run text, p_token text, p_epoch bigint, p_seq bigint, p_kind text, p_action text, p_at bigint, p_data text) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM runs WHERE id = p_run AND lease_token = p_token AND lease_epoch = p_epoch FOR SHARE;
        IF NOT FOUND THEN RAISE EXCEPTION 'lease lost' USING ERRCODE = 'LB001'; END IF;
        INSERT INTO entries VALUES (p_run, p_seq, p_kind, p_action, p_at, p_data);
      END $$;
    `);
    const sample = async (fn: () => Promise<void>): Promise<number> => {
      for (let i = 0; i < 20; i++) await fn();
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = nowUs();
        await fn();
        out.push(nowUs() - t0);
      }
      return median(out);
    };
    let k = 0;
    const insertUs = await sample(async () => void (await c.query('INSERT INTO floor (v) VALUES ($1)', ['x'])));
    const tx = async (stmts: Array<[string, unknown[]]>): Promise<void> => {
      await c.query('BEGIN');
      for (const [q, p] of stmts) await c.query(q, p);
      await c.query('COMMIT');
    };
    const fence = "SELECT 1 FROM runs WHERE id = 'raw' AND lease_token = 't' AND lease_epoch = 1 FOR SHARE";
    const v1Us = await sample(async () => {
      const id = `a${++k}`;
      await tx([
        [fence, []],
        ["INSERT INTO actions (run_id, id, seq, status, args) VALUES ('raw', $1, $2, 'started', $3)", [id, k, SEND_ARGS(k)]],
        ["INSERT INTO events (run_id, kind, action_id, data) VALUES ('raw', 'action.started', $1, $2)", [id, STARTED]],
      ]);
      // The call's count goes in with its end, as the engine writes it (RunWriter.actionExecuting).
      await tx([
        [fence, []],
        ["UPDATE actions SET executions = executions + 1 WHERE run_id = 'raw' AND id = $1", [id]],
        ["INSERT INTO events (run_id, kind, action_id) VALUES ('raw', 'action.executing', $1)", [id]],
        ["UPDATE actions SET status = 'committed', result = $2, commit_seq = $3 WHERE run_id = 'raw' AND id = $1", [id, '{"messageId":"m"}', k]],
        ["INSERT INTO events (run_id, kind, action_id) VALUES ('raw', 'action.committed', $1)", [id]],
      ]);
    });
    const append = 'SELECT lb_append($1, $2, $3, $4, $5, $6, $7, $8)';
    const v2Us = await sample(async () => {
      const id = `a${++k}`;
      await c.query(append, ['raw', 't', 1, 2 * k, 'action.started', id, Date.now(), `{"a":${SEND_ARGS(k)},"d":${STARTED}}`]);
      await c.query(append, ['raw', 't', 1, 2 * k + 1, 'action.committed', id, Date.now(), '{"r":{"messageId":"m"},"x":1}']);
    });
    return { insertUs, v1Us, v2Us };
  } finally {
    await c.end();
  }
}

async function pgRows(n: number): Promise<Array<[string, number, string]>> {
  const harness = (await import(path.join(__dirname, '..', 'scripts', 'pg-server.mjs'))) as {
    startServer(opts: object): Promise<{ url: string; destroy(): void }>;
  };
  const server = await harness.startServer({});
  try {
    const r = await rawPgBrackets(server.url, n);
    return [
      ['Fpg (µs): one autocommitted one-row INSERT', r.insertUs, ''],
      ['v1 bracket: 2 transactions of 3 and 5 statements (12 round trips)', r.v1Us / r.insertUs, ''],
      ['v2 bracket: 2 calls of lb_append (2 round trips)', r.v2Us / r.insertUs, 'floor 2 Fpg'],
    ];
  } finally {
    server.destroy();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pg: { type: 'boolean', default: false }, n: { type: 'string', default: '300' } } });
  const n = Number(values.n);
  const print = (rows: Array<[string, number, string]>, unit: string): void => {
    for (const [name, v, note] of rows)
      console.log(`${name.padEnd(62)} ${name.includes('(µs)') ? v.toFixed(1) : `${v.toFixed(2)} ${unit}`}${note ? `  (${note})` : ''}`);
  };
  print(sqliteRows(n), 'F');
  if (values.pg) print(await pgRows(n), 'Fpg');
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
