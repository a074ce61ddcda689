// The journal as the rest of Logbook sees it: domain operations on runs, leases and transitions, one interface that
// the SQLite file and the PostgreSQL database both implement, with no SQL, dialect or engine kind in sight.
//
// Everything outside src/runtime/store reaches the journal through this interface (openStore returns it); the
// engine-specific half sits below it in store/db.ts's `Db` and `Dialect` (store/sqlite.ts, store/pg/*). The calls
// stay synchronous on both engines: PgDb blocks its caller on its thread's answer, as better-sqlite3 blocks on fsync,
// so the hot path carries no awaits. eslint.config.mjs refuses imports of the store's other modules from outside it.

import type { JournalConnection } from './db';
import type { DeletedCounts } from './deleteRun';
import type { CancelRequest, CancelResult } from './cancel';
import type { NewEvent, SendResult } from './inbox';
import type { AcquireOptions, NewRun } from './lease';
import type { JournalOverview } from './overview';
import type { LeaseFields, Owner } from './owner';
import type { Claimed, Known, QueuedRun, WorkerInfo } from './queue';
import type { GraphCheckpoints } from './graph';
import type { JournalReader } from './reader';
import type { RunRow } from './rows';
import type { Durability, Lease, RunWriter } from './writer';

export type { JournalConnection };

export interface JournalStore {
  /** The journal's target: its file, or its connection string without the password (safe to print). */
  readonly target: string;
  /** Reads: a run, runs by page, a run's steps and actions from a position, its events, what needs a person. */
  readonly reader: JournalReader;
  /** Opaque to every caller in src/ (nothing can be read off it): tests and benchmarks reach the Db with dbOf. */
  readonly db: JournalConnection;

  /** Creates a run held by `owner` (epoch 1, attempt 1); LB_RUN_EXISTS if the id is taken. A fork copies its origin's steps. */
  createRun(run: NewRun, owner: Owner): Lease;
  /** Records a run for a worker to start (queued, no lease); LB_RUN_EXISTS if the id is taken. */
  enqueueRun(run: QueuedRun): void;
  /** Takes an existing run's lease for a new session (a new epoch fences the one before); LB_LEASE_HELD while a live session has it. */
  acquireRun(runId: string, owner: Owner, opts: AcquireOptions): Lease;
  /** A worker's claim: the oldest claimable run of a known agent and version (queued, or its lease expired), or undefined. */
  claimRun(owner: Owner, known: readonly Known[], opts?: { readonly skip?: ReadonlySet<string>; readonly ttlMs?: number }): Claimed | undefined;
  /**
   * The write side of one held run: every transition (a step or action started or settled, a status) is appended by
   * it in one fenced transaction; its heartbeat renews the lease, and it throws LB_LEASE_LOST once another epoch holds it.
   */
  openWriter(lease: Lease, durability?: Durability): RunWriter;
  /** Gives a lease back without changing the run's status (so the next worker claims it at once); false if it was no longer held. */
  releaseLease(lease: Lease): boolean;
  /** Removes a run and all its rows; LB_RUN_NOT_FOUND, or LB_LEASE_HELD while a live process drives it. */
  deleteRun(runId: string): DeletedCounts;
  /**
   * Cancels a run: at once when no live session drives it (queued, interrupted, stopped for a person), else asks its
   * holder, through the run's row, to stop at its next boundary. LB_RUN_NOT_CANCELLABLE (nothing changed) once it ended.
   */
  cancelRun(runId: string, req: CancelRequest): CancelResult;
  /**
   * Keeps an event for run `runId` in its inbox until a run.waitFor (or an approval gate) takes it; a second event with
   * the same id changes nothing (`duplicate`). LB_EVENT_REFUSED (nothing written) once the run ended. It never drives the run.
   */
  sendEvent(runId: string, ev: NewEvent): SendResult;

  /** Notes a worker as seen (its heartbeat), so `logbook ls` can say why a run waits. */
  recordWorker(w: WorkerInfo): void;
  forgetWorker(name: string, owner: string): void;
  /** Why a run a worker could take still waits, in words for `logbook ls`; undefined for runs no worker takes. */
  waitingReason(row: RunRow, leaseLive: boolean): string | undefined;
  /** The run (this one, or the child it waits for, down the chain) that waits for an event, and that event's name. */
  waitingLeaf(row: RunRow): { readonly runId: string; readonly event: string } | undefined;

  /** The sidebar's reads: counts, a script's latest run, and what changed since a position. */
  overview(): JournalOverview;
  /** Now by the clock leases are measured by: this machine's for a SQLite file, the server's for PostgreSQL. */
  leaseClock(): number;
  /** Whether a run's lease has a live holder at `now` (leaseClock()), by the rule of this journal's engine. */
  leaseIsLive(lease: LeaseFields, now: number): boolean;
  /** LangGraph checkpoints, their channel values and pending writes (agent-logbook/langgraph's saver). */
  graphCheckpoints(): GraphCheckpoints;
  /** The journal's schema version: 0 for a journal nothing was ever written to. */
  schemaVersion(): number;
  close(): void;
}
