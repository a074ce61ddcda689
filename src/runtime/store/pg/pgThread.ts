// The pg client's thread: answers PgDb's blocking requests, renews held leases and sends batched NOTIFYs on its own.

import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { FENCE_SQLSTATE, inlineBatch } from './inline';
import { NOTIFY_CHANNEL, leaseTtlMs } from '../db';
import { monoMicros } from '../leaseClock';
import {
  FENCE_LOST_CODE,
  PG_NOW,
  THREAD_BEAT_MS,
  THREAD_GONE,
  type PgErrorMsg,
  type PgEvent,
  type PgReply,
  type PgRequest,
  type PgResultMsg,
  type PgSignal,
  type PgStatementMsg,
  type PgThreadData,
} from './threadProtocol';

// int8 (COUNT, seq, timestamps in ms) as numbers: every value the journal stores is below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

const data = workerData as PgThreadData;
const flag = new Int32Array(data.flag);
const beat = new BigInt64Array(data.flag, 8, 1);

// The caller, blocked on the flag, cannot see this thread's 'exit' event: it watches the heartbeat instead, and the
// flag for an exit this thread gets to announce.
const beatNow = (): void => void Atomics.store(beat, 0, BigInt(Date.now()));
beatNow();
setInterval(beatNow, THREAD_BEAT_MS).unref();
process.on('exit', () => {
  Atomics.store(flag, 0, THREAD_GONE);
  Atomics.notify(flag, 0);
});
const requests: MessagePort = data.requests;
const events: MessagePort = data.events;

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01',
  '57P02',
  '57P03',
]);

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|connection timeout|timeout exceeded|not queryable|Client has encountered a connection error|Client was closed/i.test(
    String((err as Error).message),
  );
}

function flatten(err: unknown, index: number): PgErrorMsg {
  const e = err as { message?: unknown; code?: unknown; detail?: unknown };
  return {
    message: typeof e.message === 'string' ? e.message : String(err),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.detail === 'string' ? { detail: e.detail } : {}),
    index,
    connection: isConnectionError(err),
  };
}

/** A client that is replaced after any connection failure, so the next request reconnects (e.g. after a server restart). */
class Connection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;

  async get(): Promise<pg.Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      // A process stopped inside a transaction (SIGSTOP, a frozen VM) would hold its run's row lock for ever, and workers
      // claiming with SKIP LOCKED would pass that run over after its lease expired: the server ends such a session after
      // one lease length. Logbook never waits on anything but the server inside a transaction, so a live holder never idles there.
      const c = new pg.Client({
        connectionString: data.url,
        query_timeout: data.queryTimeoutMs,
        connectionTimeoutMillis: 10_000,
        idle_in_transaction_session_timeout: leaseTtlMs(),
      });
      c.on('error', () => this.drop(c));
      try {
        await c.connect();
      } catch (err) {
        this.drop(c);
        throw err;
      }
      this.client = c;
      return c;
    })().finally(() => {
      this.connecting = undefined;
    });
    return await this.connecting;
  }

  private turn: Promise<unknown> = Promise.resolve();

  /**
   * One query at a time, for the side connection, whose renewals and NOTIFYs come from independent timers: pg would
   * queue an overlapping query itself, but that use is deprecated (it warns, and pg@9 removes it).
   */
  async queued(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const next = this.turn.then(async () => await (await this.get()).query(text, values));
    this.turn = next.catch(() => undefined);
    return await next;
  }

  drop(c?: pg.Client): void {
    const old = c ?? this.client;
    if (old === this.client) this.client = undefined;
    old?.end().catch(() => undefined);
  }

  async end(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}

/** The caller's connection: journal statements and transactions, one request at a time. */
const main = new Connection();
/** The connection the latest request that did not continue a transaction ran on: where a transaction it began lives. */
let txClient: pg.Client | undefined;
/** Heartbeats and NOTIFYs: never inside the caller's transaction. */
const side = new Connection();

function reply(r: PgReply): void {
  requests.postMessage(r);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

async function handle(req: PgRequest): Promise<PgReply> {
  if (req.kind === 'close') {
    await flushNotifies();
    for (const h of held.values()) clearInterval(h.timer);
    held.clear();
    if (notifyTimer) clearInterval(notifyTimer);
    await Promise.all([main.end(), side.end()]);
    return { ok: true, results: [] };
  }
  let c: pg.Client;
  try {
    c = await main.get();
  } catch (err) {
    return { ok: false, error: flatten(err, 0) };
  }
  if (req.continues === true && c !== txClient) {
    // The transaction's connection was lost (its server session ended, and the transaction with it): what remains of
    // it must not run on a new connection, where each statement would commit on its own, outside the lease fence.
    return {
      ok: false,
      error: {
        message: 'Connection terminated inside a transaction: the server ended it, so nothing more of it was sent',
        code: '08006',
        index: 0,
        connection: true,
      },
    };
  }
  if (req.continues !== true) txClient = c;
  if (req.kind === 'exec') {
    try {
      await c.query(req.sql);
      return { ok: true, results: [] };
    } catch (err) {
      if (isConnectionError(err)) main.drop(c);
      return { ok: false, error: flatten(err, 0) };
    }
  }
  const one = data.inline ? inlineBatch(req.items, (v) => c.escapeLiteral(v)) : undefined;
  if (one !== undefined) return await runInlined(c, req.items, one);
  const results: PgResultMsg[] = [];
  for (let i = 0; i < req.items.length; i++) {
    const item = req.items[i]!;
    try {
      const r = await c.query({ text: item.sql, values: item.params as unknown[], ...(item.array ? { rowMode: 'array' as const } : {}) });
      results.push({ rows: r.rows as unknown[], rowCount: r.rowCount ?? 0 });
    } catch (err) {
      // The fence failed: the statements after it were never sent.
      if ((err as { code?: unknown }).code === FENCE_SQLSTATE) return await fenceLost(c, i);
      if (isConnectionError(err)) main.drop(c);
      return { ok: false, error: flatten(err, i) };
    }
  }
  return { ok: true, results };
}

/**
 * A batch sent as one query (store/pg/inline.ts): one round trip for the whole transaction. The server runs its
 * statements in order and stops at the first error; a fence that changed no row raises FENCE_SQLSTATE, answered as
 * the statement-by-statement path answers it (rolled back, FENCE_LOST_CODE, nothing of it written).
 */
async function runInlined(c: pg.Client, items: readonly PgStatementMsg[], text: string): Promise<PgReply> {
  try {
    const r = (await c.query(text)) as pg.QueryResult | pg.QueryResult[];
    const list = Array.isArray(r) ? r : [r];
    const results = items.map((item, i): PgResultMsg => {
      const x = list[i];
      return item.fence === true ? { rows: [], rowCount: 1 } : { rows: (x?.rows ?? []) as unknown[], rowCount: x?.rowCount ?? 0 };
    });
    return { ok: true, results };
  } catch (err) {
    if ((err as { code?: unknown }).code === FENCE_SQLSTATE)
      return await fenceLost(
        c,
        Math.max(
          0,
          items.findIndex((x) => x.fence === true),
        ),
      );
    if (isConnectionError(err)) main.drop(c);
    return { ok: false, error: flatten(err, 0) };
  }
}

/** A lost fence, on either path: the transaction ends here, with nothing of it written, and the caller is told so. */
async function fenceLost(c: pg.Client, index: number): Promise<PgReply> {
  await c.query('ROLLBACK').catch((e: unknown) => {
    if (isConnectionError(e)) main.drop(c);
  });
  return { ok: false, error: { message: 'the fencing statement changed no row', code: FENCE_LOST_CODE, index, connection: false } };
}

// --- Leases held by the caller: renewed from here so a main thread busy in a long `execute` cannot starve them.

interface Held {
  readonly runId: string;
  readonly token: string;
  readonly epoch: number;
  readonly ttlMs: number;
  timer: NodeJS.Timeout;
  lastRenewed: number;
  renewing: boolean;
  /** Whether the run's cancel request was already passed on (once is enough: the writer keeps the first). */
  cancelSent: boolean;
  /** Shared with the caller's thread: the send time of the latest acknowledged renewal (monotonic µs), -1 once lost. */
  readonly renewed: BigInt64Array | undefined;
}
const held = new Map<string, Held>();
// The renewal returns the run's cancel request: a live run learns of `logbook cancel` from its heartbeat, at no extra statement.
const RENEW = `UPDATE runs SET lease_expires = ${PG_NOW} + $1 WHERE id = $2 AND lease_token = $3 AND lease_epoch = $4 RETURNING cancel_requested`;

function lost(h: Held, reason: string, taken: boolean): void {
  clearInterval(h.timer);
  held.delete(h.runId);
  if (taken && h.renewed) Atomics.store(h.renewed, 0, -1n);
  const e: PgEvent = { kind: 'lease-lost', runId: h.runId, epoch: h.epoch, reason };
  events.postMessage(e);
}

async function renew(h: Held): Promise<void> {
  if (h.renewing) return;
  h.renewing = true;
  // Before the request is queued: the expiry the server sets is no earlier than this plus the TTL.
  const sentAt = monoMicros();
  try {
    const r = await side.queued(RENEW, [h.ttlMs, h.runId, h.token, h.epoch]);
    if (held.get(h.runId) !== h) return;
    if (r.rowCount === 0) lost(h, `another process took run ${h.runId} over (this process held epoch ${h.epoch})`, true);
    else {
      h.lastRenewed = Date.now();
      if (h.renewed && sentAt > Atomics.load(h.renewed, 0)) Atomics.store(h.renewed, 0, sentAt);
      const cancel = (r.rows[0] as { cancel_requested?: unknown } | undefined)?.cancel_requested;
      if (typeof cancel === 'string' && !h.cancelSent) {
        h.cancelSent = true;
        const e: PgEvent = { kind: 'cancel-requested', runId: h.runId, epoch: h.epoch, request: cancel };
        events.postMessage(e);
      }
    }
  } catch (err) {
    if (isConnectionError(err)) side.drop();
    // Cut off from the server for a whole TTL: another machine may already hold the run, so stop as if it did.
    if (held.get(h.runId) === h && Date.now() - h.lastRenewed >= h.ttlMs)
      lost(h, `its lease could not be renewed for ${h.ttlMs} ms (${String((err as Error).message)})`, false);
  } finally {
    h.renewing = false;
  }
}

// --- NOTIFY, coalesced: one statement per interval for every run that changed, outside any journal transaction.

const changedRuns = new Set<string>();
let notifyTimer: NodeJS.Timeout | undefined;

async function flushNotifies(): Promise<void> {
  if (changedRuns.size === 0) return;
  const ids = [...changedRuns];
  changedRuns.clear();
  try {
    await side.queued('SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id', [NOTIFY_CHANNEL, ids]);
  } catch (err) {
    // Readers fall back to polling; a lost notification only delays the sidebar.
    if (isConnectionError(err)) side.drop();
  }
}

function signal(s: PgSignal): void {
  if (s.kind === 'notify') {
    changedRuns.add(s.runId);
    notifyTimer ??= setInterval(() => void flushNotifies(), data.notifyEveryMs);
    return;
  }
  const existing = held.get(s.runId);
  if (existing) {
    clearInterval(existing.timer);
    held.delete(s.runId);
  }
  if (s.op === 'drop') return;
  const h: Held = {
    runId: s.runId,
    token: s.token,
    epoch: s.epoch,
    ttlMs: s.ttlMs,
    lastRenewed: Date.now(),
    renewing: false,
    cancelSent: false,
    renewed: s.renewed ? new BigInt64Array(s.renewed) : undefined,
    timer: setInterval(() => void renew(h), Math.max(100, Math.floor(s.ttlMs / 3))),
  };
  held.set(s.runId, h);
}

requests.on('message', (msg: PgRequest | PgSignal) => {
  if (msg.kind === 'notify' || msg.kind === 'lease') {
    signal(msg);
    return;
  }
  handle(msg).then(reply, (err: unknown) => reply({ ok: false, error: flatten(err, 0) }));
});
parentPort?.on('close', () => undefined);
