// JournalStore over a `Db`: the one implementation both engines share, each through its own Db and Dialect
// (store/sqlite.ts, store/pg/pgDb.ts), so the domain operations are written once and behave alike on both.

import type { Db, JournalConnection } from './db';
import { deleteRun, type DeletedCounts } from './deleteRun';
import { cancelRun, type CancelRequest, type CancelResult } from './cancel';
import { sendEvent, type NewEvent, type SendResult } from './inbox';
import type { JournalStore } from './journalStore';
import { acquireRun, createRun, type AcquireOptions, type NewRun } from './lease';
import { JournalOverview } from './overview';
import { leaseIsLive, type LeaseFields, type Owner } from './owner';
import {
  claimRun,
  enqueueRun,
  forgetWorker,
  recordWorker,
  releaseLease,
  waitingReason,
  waitingLeaf,
  type Claimed,
  type Known,
  type QueuedRun,
  type WorkerInfo,
} from './queue';
import { SqlGraphCheckpoints, type GraphCheckpoints } from './graph';
import { JournalReader } from './reader';
import type { RunRow } from './rows';
import { LEASE_TTL_MS, RunWriter, type Durability, type Lease } from './writer';
import { storageError } from './storageError';

export class SqlJournal implements JournalStore {
  readonly target: string;
  readonly reader: JournalReader;

  constructor(private readonly conn: Db) {
    this.target = conn.name;
    this.reader = new JournalReader(conn, conn.name);
  }

  get db(): JournalConnection {
    return this.conn as unknown as JournalConnection;
  }

  createRun(run: NewRun, owner: Owner): Lease {
    return this.guarded('creating the run', true, () => createRun(this.conn, this.reader, run, owner));
  }

  enqueueRun(run: QueuedRun): void {
    this.guarded('queueing the run', true, () => enqueueRun(this.conn, this.reader, run));
  }

  acquireRun(runId: string, owner: Owner, opts: AcquireOptions): Lease {
    return this.guarded("taking the run's lease", false, () => acquireRun(this.conn, this.reader, runId, owner, opts));
  }

  claimRun(owner: Owner, known: readonly Known[], opts: { readonly skip?: ReadonlySet<string>; readonly ttlMs?: number } = {}): Claimed | undefined {
    return this.guarded('claiming a queued run', false, () => claimRun(this.conn, this.reader, owner, known, opts.ttlMs ?? LEASE_TTL_MS, opts.skip));
  }

  openWriter(lease: Lease, durability?: Durability): RunWriter {
    return new RunWriter(this.conn, lease, this.reader.nextActionSeq(lease.runId), durability);
  }

  releaseLease(lease: Lease): boolean {
    return this.guarded("releasing the run's lease", false, () => releaseLease(this.conn, lease));
  }

  deleteRun(runId: string): DeletedCounts {
    return this.guarded('deleting the run', true, () => deleteRun(this.conn, this.reader, runId));
  }

  cancelRun(runId: string, req: CancelRequest): CancelResult {
    return this.guarded('recording the cancel', true, () => cancelRun(this.conn, this.reader, runId, req));
  }

  sendEvent(runId: string, ev: NewEvent): SendResult {
    return this.guarded('recording the event', true, () => sendEvent(this.conn, this.target, runId, ev));
  }

  recordWorker(w: WorkerInfo): void {
    this.guarded('recording the worker', true, () => recordWorker(this.conn, w));
  }

  forgetWorker(name: string, owner: string): void {
    this.guarded('forgetting the worker', true, () => forgetWorker(this.conn, name, owner));
  }

  waitingReason(row: RunRow, leaseLive: boolean): string | undefined {
    return waitingReason(this.conn, row, leaseLive);
  }

  waitingLeaf(row: RunRow): { readonly runId: string; readonly event: string } | undefined {
    return waitingLeaf(this.conn, row);
  }

  overview(): JournalOverview {
    return new JournalOverview(this.conn, this.target);
  }

  leaseClock(): number {
    return this.conn.leaseClock(Date.now());
  }

  leaseIsLive(lease: LeaseFields, now: number): boolean {
    return leaseIsLive(lease, now, this.conn.dialect.leaseByExpiry);
  }

  graphCheckpoints(): GraphCheckpoints {
    return new SqlGraphCheckpoints(this.conn);
  }

  schemaVersion(): number {
    return this.conn.schemaVersion();
  }

  close(): void {
    if (this.conn.open) this.conn.close();
  }

  /**
   * A journal operation whose storage failures (a full disk, a lock held past the busy timeout, an I/O error) reach
   * the caller as Logbook errors with their remedies, never as a raw driver error that reads as the script's failure.
   */
  private guarded<T>(during: string, unchanged: boolean, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw storageError(err, this.target, during, unchanged) ?? err;
    }
  }
}
