// Messages between PgDb (the caller's thread, blocked on Atomics.wait) and the pg client on its PostgreSQL thread.

import type { MessagePort } from 'node:worker_threads';

/** One statement; `array` asks for rows as value arrays (rowMode 'array'). */
export interface PgStatementMsg {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly array: boolean;
  /**
   * The transaction's fence (PgDb.fence): it raises FENCE_SQLSTATE when the lease is not held, and the thread then
   * rolls the transaction back at once, sends nothing more of the batch, and answers with FENCE_LOST_CODE.
   */
  readonly fence?: boolean;
}

/** The code of the error a batch ends with when its fence found the lease not held (not a SQLSTATE: those are 5 characters). */
export const FENCE_LOST_CODE = 'LB_FENCE_LOST';

/** Requests the caller waits for: the thread answers each with exactly one PgReply, then wakes it. */
export type PgRequest =
  /**
   * `continues`: the batch goes on with a transaction an earlier batch began. It must run on that very connection:
   * sent on a new one (the old one was lost meanwhile) its statements would commit one by one, unfenced.
   */
  | { readonly kind: 'batch'; readonly items: readonly PgStatementMsg[]; readonly continues?: boolean }
  | { readonly kind: 'exec'; readonly sql: string; readonly continues?: boolean }
  | { readonly kind: 'close' };

/** Messages the caller does not wait for. */
export type PgSignal =
  | { readonly kind: 'notify'; readonly runId: string }
  | {
      readonly kind: 'lease';
      readonly op: 'hold' | 'drop';
      readonly runId: string;
      readonly token: string;
      readonly epoch: number;
      readonly ttlMs: number;
      /**
       * 'hold': one BigInt64 the thread keeps current: when its latest acknowledged renewal was sent (monotonic µs,
       * leaseClock.monoMicros), or -1 once a renewal found the lease taken. The caller reads it without waiting for a message.
       */
      readonly renewed?: SharedArrayBuffer;
    };

export interface PgResultMsg {
  readonly rows: unknown[];
  readonly rowCount: number;
}

/** A pg error, flattened so it survives postMessage: SQLSTATE or errno in `code`. */
export interface PgErrorMsg {
  readonly message: string;
  readonly code?: string;
  readonly detail?: string;
  /** Index of the statement in the batch that failed. */
  readonly index: number;
  /** The connection itself failed (refused, reset, ended): the transaction it held, if any, is gone. */
  readonly connection: boolean;
}

export type PgReply = { readonly ok: true; readonly results: readonly PgResultMsg[] } | { readonly ok: false; readonly error: PgErrorMsg };

/** Events the thread raises on its own (the caller listens without blocking). */
export type PgEvent =
  | { readonly kind: 'lease-lost'; readonly runId: string; readonly epoch: number; readonly reason: string }
  // A renewal found the run's cancel request (`logbook cancel`): its JSON, sent once per held lease.
  | { readonly kind: 'cancel-requested'; readonly runId: string; readonly epoch: number; readonly request: string };

export interface PgThreadData {
  readonly url: string;
  /**
   * Int32 slot 0: 0 while a request is pending, 1 once its reply is posted, THREAD_GONE once the thread is exiting.
   * Bytes 8–15 (a BigInt64): the thread's heartbeat, Date.now() every THREAD_BEAT_MS, which the blocked caller reads
   * to tell a slow answer from a thread that died without a word (out of memory, terminated).
   */
  readonly flag: SharedArrayBuffer;
  readonly requests: MessagePort;
  readonly events: MessagePort;
  readonly notifyEveryMs: number;
  readonly queryTimeoutMs: number;
  /** Whether a batch may go as one inlined query (store/pg/inline.ts). */
  readonly inline: boolean;
}

/** The server's clock in epoch milliseconds: the one clock leases on PostgreSQL are measured by. */
export const PG_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** The flag's value once the thread is exiting: no reply will come. */
export const THREAD_GONE = 2;
/** How often the thread writes its heartbeat. */
export const THREAD_BEAT_MS = 100;
