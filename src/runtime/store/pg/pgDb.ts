// PgDb: the store interface on PostgreSQL, synchronous like better-sqlite3: the pg client runs on a thread and
// this thread blocks on Atomics.wait until its answer is posted (then takes it with receiveMessageOnPort).

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ErrorCodes, LogbookError } from '../../errors';
import { redactUrl, type Db, type LeaseKey, type RunResult, type Statement, type Transaction, type WriteSupport } from '../db';
import { FENCE_SQL, PG_DIALECT } from './dialect';
import { pgFailure } from './pgErrors';
import {
  FENCE_LOST_CODE,
  PG_NOW,
  THREAD_GONE,
  type PgEvent,
  type PgReply,
  type PgRequest,
  type PgResultMsg,
  type PgSignal,
  type PgStatementMsg,
  type PgThreadData,
} from './threadProtocol';

/** Where the thread's code is: next to the bundle in dist/, or the TypeScript source under tsx (tests). */
function threadEntry(): { file: string; execArgv: string[] } {
  if (__filename.endsWith('.ts')) return { file: path.join(__dirname, 'pgThread.ts'), execArgv: ['--require', createRequire(__filename).resolve('tsx/cjs')] };
  return { file: path.join(__dirname, 'pgThread.js'), execArgv: [] };
}

/** A thread whose heartbeat is this old is dead: its beats come every THREAD_BEAT_MS, even while it waits on the server. */
const THREAD_SILENT_MS = 10_000;

function threadFailure(name: string, what: string): LogbookError {
  return new LogbookError(
    ErrorCodes.DB_IO,
    `The PostgreSQL journal ${name} cannot be used: ${what}. Nothing journaled was lost: a transaction the thread had not committed was rolled back by the server.`,
    'Reinstall Logbook if a file is missing (dist/pgThread.js must sit next to the CLI), then run the command again (`logbook resume <run-id>` for a run it stopped).',
    { db: name },
  );
}

/** `?` placeholders to `$1…$n`, leaving quoted text and identifiers alone. */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  let out = '';
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else {
      out += ch;
    }
  }
  return out;
}

function bind(params: unknown[]): unknown[] {
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/** A statement's result inside a transaction, known once the batch it waits in is sent: reading it sends the batch. */
class PendingResult implements RunResult {
  constructor(
    private readonly db: PgDb,
    private readonly slot: { result?: PgResultMsg },
  ) {}
  private get result(): PgResultMsg {
    if (this.slot.result === undefined) this.db.flush();
    return this.slot.result ?? { rows: [], rowCount: 0 };
  }
  get changes(): number {
    return this.result.rowCount;
  }
  get lastInsertRowid(): number {
    const row = this.result.rows[0];
    const v = row === undefined ? undefined : Object.values(row as Record<string, unknown>)[0];
    return typeof v === 'number' ? v : 0;
  }
}

class PgStatement implements Statement {
  private plucked = false;
  private arrays = false;

  constructor(
    private readonly db: PgDb,
    private readonly sql: string,
  ) {}

  pluck(toggle = true): this {
    this.plucked = toggle;
    return this;
  }

  raw(toggle = true): this {
    this.arrays = toggle;
    return this;
  }

  private msg(params: unknown[]): PgStatementMsg {
    return { sql: this.sql, params: bind(params), array: this.arrays || this.plucked };
  }

  run(...params: unknown[]): RunResult {
    return this.db.write(this.msg(params));
  }

  all(...params: unknown[]): unknown[] {
    const rows = this.db.read(this.msg(params)).rows;
    return this.plucked ? rows.map((r) => (r as unknown[])[0]) : rows;
  }

  get(...params: unknown[]): unknown {
    const row = this.db.read(this.msg(params)).rows[0];
    return this.plucked && row !== undefined ? (row as unknown[])[0] : row;
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    return this.all(...params)[Symbol.iterator]();
  }
}

/** A transaction's fence (PgDb.fence) changed no row: the thread rolled the transaction back, and nothing of it was written. */
export class PgFenceLost extends Error {
  constructor() {
    super('The transaction was not written: its fencing statement changed no row.');
    this.name = 'PgFenceLost';
  }
}

export interface PgDbOptions {
  /** How often changed runs are announced with NOTIFY (coalesced). */
  readonly notifyEveryMs?: number;
  /** A statement that gets no answer for this long fails as LB_DB_UNREACHABLE. */
  readonly queryTimeoutMs?: number;
  /** Bounds the PG thread's heap (MB): a runaway result then ends the thread (LB_DB_IO), not the process. */
  readonly threadHeapMb?: number;
  /** false: every batch statement by statement, never inlined into one query (the differential test compares both). */
  readonly inline?: boolean;
}

export class PgDb implements Db {
  readonly kind = 'postgres' as const;
  readonly dialect = PG_DIALECT;
  readonly name: string;
  private readonly thread: Worker;
  private readonly flag: Int32Array;
  private readonly port: MessagePort;
  private readonly events: MessagePort;
  private closed = false;
  /** Set once the PG thread is gone: every later call throws it. */
  private dead: LogbookError | undefined;
  private readonly beat: BigInt64Array;
  private readonly statements = new Map<string, string>();
  /** Transaction nesting depth (0: autocommit). */
  private depth = 0;
  /** Statements of the open transaction not yet sent, each with the slot its result lands in. */
  private batch: Array<{ item: PgStatementMsg; slot: { result?: PgResultMsg } }> = [];
  /** Whether BEGIN has reached the server (if not, a failed transaction has nothing to roll back). */
  private begun = false;
  private readonly lostListeners = new Map<string, (e: PgEvent) => void>();

  constructor(url: string, opts: PgDbOptions = {}) {
    this.name = redactUrl(url);
    const entry = threadEntry();
    if (!fs.existsSync(entry.file)) throw threadFailure(this.name, `its PostgreSQL thread's code ${entry.file} is missing`);
    const sab = new SharedArrayBuffer(16);
    this.flag = new Int32Array(sab, 0, 1);
    this.beat = new BigInt64Array(sab, 8, 1);
    // Counts as a beat until the thread's first (its start-up, under tsx a compile, takes a while).
    Atomics.store(this.beat, 0, BigInt(Date.now()));
    const req = new MessageChannel();
    const ev = new MessageChannel();
    this.port = req.port1;
    this.events = ev.port1;
    const data: PgThreadData = {
      url,
      flag: sab,
      requests: req.port2,
      events: ev.port2,
      notifyEveryMs: opts.notifyEveryMs ?? 50,
      queryTimeoutMs: opts.queryTimeoutMs ?? 60_000,
      inline: opts.inline ?? true,
    };
    const limits = opts.threadHeapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: opts.threadHeapMb } };
    this.thread = new Worker(entry.file, {
      workerData: data,
      transferList: [req.port2, ev.port2],
      execArgv: entry.execArgv,
      stdout: false,
      stderr: false,
      ...limits,
    });
    // Its death is seen by the heartbeat; the event only keeps it from being an uncaught 'error'.
    this.thread.on('error', () => undefined);
    this.thread.unref();
    this.events.on('message', (e: PgEvent) => this.lostListeners.get(e.runId)?.(e));
    this.events.unref();
  }

  get open(): boolean {
    return !this.closed;
  }

  /** Sends one request and blocks this thread until the thread answers it. */
  private request(req: PgRequest, during: string): PgResultMsg[] {
    if (this.dead) throw this.dead;
    if (this.closed) throw new Error(`The PostgreSQL journal ${this.name} is closed.`);
    if (Atomics.load(this.flag, 0) === THREAD_GONE) throw this.threadDied('its PostgreSQL thread exited');
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(req);
    for (;;) {
      // Waits in slices, so a thread that dies without answering is noticed (a dead thread never wakes this one).
      Atomics.wait(this.flag, 0, 0, 250);
      const got = receiveMessageOnPort(this.port);
      if (got === undefined) {
        if (Atomics.load(this.flag, 0) === THREAD_GONE) throw this.threadDied(`its PostgreSQL thread exited while ${during}`);
        const silent = Date.now() - Number(Atomics.load(this.beat, 0));
        if (silent > THREAD_SILENT_MS) throw this.threadDied(`its PostgreSQL thread stopped (no sign of life for ${silent} ms) while ${during}`);
        continue;
      }
      const reply = got.message as PgReply;
      if (!reply.ok) {
        if (reply.error.code === FENCE_LOST_CODE) {
          // The worker has already rolled the transaction back.
          this.begun = false;
          throw new PgFenceLost();
        }
        throw pgFailure(reply.error, this.name, during);
      }
      return [...reply.results];
    }
  }

  /** The thread is gone: so is its connection, and with it any transaction it held open (the server rolls it back). */
  private threadDied(what: string): LogbookError {
    this.dead = threadFailure(this.name, what);
    this.closed = true;
    this.depth = 0;
    this.batch = [];
    this.begun = false;
    this.events.close();
    this.port.close();
    void this.thread.terminate();
    return this.dead;
  }

  private post(s: PgSignal): void {
    if (!this.closed) this.port.postMessage(s);
  }

  /** Sends the transaction's waiting statements (and `extra`, whose result is returned). */
  flush(extra?: PgStatementMsg): PgResultMsg | undefined {
    const batch = this.batch;
    this.batch = [];
    const items = batch.map((b) => b.item);
    if (extra) items.push(extra);
    if (items.length === 0) return undefined;
    const continues = this.depth > 0 && this.begun;
    if (this.depth > 0) this.begun = true;
    const results = this.request({ kind: 'batch', items, continues }, 'writing the journal');
    batch.forEach((b, i) => (b.slot.result = results[i]));
    return extra ? results[results.length - 1] : undefined;
  }

  write(item: PgStatementMsg): RunResult {
    if (this.depth === 0) {
      const r = this.request({ kind: 'batch', items: [item] }, 'writing the journal')[0]!;
      return new PendingResult(this, { result: r });
    }
    const slot: { result?: PgResultMsg } = {};
    this.batch.push({ item, slot });
    return new PendingResult(this, slot);
  }

  /**
   * Queues the transaction's fence: logbook_fence (PG migration 9) renews the lease with the parameters of
   * `renewLease` (PG_DIALECT.renewParams), and raises when its token and epoch no longer hold it, so nothing after it in
   * the batch runs and the caller need not read a row count (which would cost a hop to the PG thread). The thread
   * then rolls back, and the transaction throws PgFenceLost.
   */
  fence(params: unknown[]): void {
    if (this.depth === 0) throw new Error('PgDb.fence belongs inside a transaction.');
    this.batch.push({ item: { sql: this.text(FENCE_SQL), params: bind(params), array: false, fence: true }, slot: {} });
  }

  read(item: PgStatementMsg): PgResultMsg {
    if (this.depth > 0) return this.flush(item)!;
    return this.request({ kind: 'batch', items: [item] }, 'reading the journal')[0]!;
  }

  private text(sql: string): string {
    let text = this.statements.get(sql);
    if (text === undefined) {
      text = numberPlaceholders(sql);
      this.statements.set(sql, text);
    }
    return text;
  }

  prepare(sql: string): Statement {
    return new PgStatement(this, this.text(sql));
  }

  private enqueue(sql: string): void {
    this.batch.push({ item: { sql, params: [], array: false }, slot: {} });
  }

  /**
   * BEGIN waits in the batch with the transaction's first statements, and COMMIT goes with its last ones: a write
   * transaction costs one hop per read of a result, not one per statement. A nested call is a savepoint.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<A, R> {
    const run = (...args: A): R => {
      if (this.depth > 0) {
        // Nested (rare): what the outer transaction queued goes first, so undoing the savepoint drops only its own.
        this.flush();
        const sp = `logbook_sp${this.depth}`;
        this.enqueue(`SAVEPOINT ${sp}`);
        this.depth++;
        try {
          const r = fn(...args);
          this.enqueue(`RELEASE SAVEPOINT ${sp}`);
          return r;
        } catch (err) {
          this.batch = [];
          this.rollback(`ROLLBACK TO SAVEPOINT ${sp}`);
          throw err;
        } finally {
          this.depth--;
        }
      }
      this.depth = 1;
      this.begun = false;
      this.enqueue('BEGIN');
      try {
        const r = fn(...args);
        this.enqueue('COMMIT');
        this.flush();
        return r;
      } catch (err) {
        this.batch = [];
        // A batch that failed half-way leaves the server in an aborted transaction: end it.
        if (this.begun) this.rollback('ROLLBACK');
        throw err;
      } finally {
        this.depth = 0;
        this.begun = false;
      }
    };
    return Object.assign(run, { immediate: run });
  }

  private rollback(sql: string): void {
    try {
      this.request({ kind: 'batch', items: [{ sql, params: [], array: false }] }, 'rolling back');
    } catch {
      // A connection that failed took its transaction with it.
    }
  }

  exec(sql: string): this {
    if (this.depth > 0) this.flush();
    this.request({ kind: 'exec', sql, continues: this.depth > 0 && this.begun }, 'writing the journal');
    return this;
  }

  now(): number {
    return this.prepare(`SELECT ${PG_NOW}`).pluck().get() as number;
  }

  changed(runId: string): void {
    this.post({ kind: 'notify', runId });
  }

  schemaVersion(): number {
    return (this.prepare('SELECT COALESCE(MAX(version), 0) FROM logbook_schema').pluck().get() as number | null) ?? 0;
  }

  leaseClock(): number {
    return this.now();
  }

  writeSupport(): WriteSupport {
    return {
      lazyAround: undefined,
      lazyInside: this.prepare('SET LOCAL synchronous_commit = off'),
      fence: (params) => this.fence(params),
      isFenceLost: (err) => err instanceof PgFenceLost,
      holdLease: (lease, ttlMs, onLost, onCancel) => this.holdLease(lease, ttlMs, onLost, onCancel),
      dropLease: (lease) => this.dropLease(lease),
    };
  }

  /**
   * Renews the run's lease from the PG thread every third of `ttlMs` until `dropLease`; `onLost` is called (on this
   * thread's event loop) when a renewal finds another epoch, or none succeeded for a whole TTL. Returns the slot where
   * the thread publishes its acknowledged renewals (see PgSignal's `renewed`).
   */
  holdLease(lease: LeaseKey, ttlMs: number, onLost: (reason: string) => void, onCancel?: (raw: string) => void): BigInt64Array {
    this.lostListeners.set(lease.runId, (e) => {
      if (e.epoch !== lease.epoch) return;
      if (e.kind === 'cancel-requested') onCancel?.(e.request);
      else onLost(e.reason);
    });
    // Read by the caller's thread at every lease check: a renewal (or a takeover) is known without a message.
    const renewed = new SharedArrayBuffer(8);
    this.post({ kind: 'lease', op: 'hold', runId: lease.runId, token: lease.token, epoch: lease.epoch, ttlMs, renewed });
    return new BigInt64Array(renewed);
  }

  dropLease(lease: LeaseKey): void {
    this.lostListeners.delete(lease.runId);
    this.post({ kind: 'lease', op: 'drop', runId: lease.runId, token: lease.token, epoch: lease.epoch, ttlMs: 0 });
  }

  close(): void {
    if (this.closed) return;
    try {
      this.request({ kind: 'close' }, 'closing the journal');
    } finally {
      this.closed = true;
      this.events.close();
      this.port.close();
      void this.thread.terminate();
    }
  }
}
