// Write side of the journal: every transition is one event row carrying the state writes it implies (folded into the
// rows later on SQLite, run at once on PostgreSQL), in one immediate transaction fenced by the run's lease epoch. Durable writes commit at synchronous=FULL; "lazy" ones (visibility
// only) commit at NORMAL, skipping the fsync, and become durable with the next durable commit (the WAL is append-only).
// Records that nothing depends on until the run writes again (a read-only action's result, a step's start) are
// "written behind": held in memory and written first, in order, inside the run's next transaction.

import { dbOf, leaseTtlMs, type Db, type JournalConnection, type RunResult, type WriteSupport } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import { storageError } from './storageError';
import type { CompensationStatus, Decision, Reconciliation, StoredRunStatus } from '../types';
import type { Effect, EffectContext } from '../define';
import { leaseMarginMs, monoNow } from './leaseClock';
import { requireTransition } from './transitions';
import { reconciledAsHappened } from '../policy';
import { parseCancelRequest, type CancelRequest } from './cancelRequest';
import type { Statement } from './db';
import { insertChildRun, type NewChild } from './children';
import type { Owner } from './owner';
import { encodeRowOps, namesSeq, opTarget, RowWrites, type RowOp } from './rowOps';
import { foldRun } from './fold';

export interface Lease {
  readonly runId: string;
  readonly token: string;
  readonly epoch: number;
  readonly attempt: number;
  /**
   * When the request that granted this lease was sent, on the monotonic clock (leaseClock.monoNow): the expiry it set
   * is later than this plus the TTL, so the lease is trusted until then, less the margin, unless renewed.
   */
  readonly sentAt?: number;
  /** The status the lease was taken with: what this session's first status change is checked against. */
  readonly status?: StoredRunStatus;
  /** A cancel asked of the run before this session took it (its holder died first): honoured at the first boundary. */
  readonly cancel?: CancelRequest;
}

/** How long a lease holds without renewal ($LOGBOOK_LEASE_TTL_MS, default 30 s); heartbeats renew it at a third of that. */
export const LEASE_TTL_MS = leaseTtlMs();
/** How often writes push the lease's expiry forward on SQLite; in between, the fence only reads the lease (no page written). */
export const LEASE_RENEW_MS = Math.min(5_000, Math.floor(LEASE_TTL_MS / 6));
/** How long before the TTL runs out (by this process's clock) a lease stops being trusted. */
export const LEASE_MARGIN_MS = leaseMarginMs(LEASE_TTL_MS);

export type Durability = 'full' | 'group';

/** A record written behind waits at most this long, or until this many are waiting, before its own lazy commit. */
export const WRITE_BEHIND_MS = 50;
export const WRITE_BEHIND_MAX = 64;
/**
 * Format 2 (SQLite): a writer folds its run's rows once its committed events carry this many writes (about 16
 * brackets of three), in a transaction of their own that is not fsynced; readers fold what they find before reading.
 */
export const FOLD_EVERY = 48;

export interface NewAction {
  readonly id: string;
  readonly stepIdx: number;
  readonly type: string;
  readonly version: number;
  readonly effect: Effect;
  readonly args: string;
  /** Whether its definition has an inverse: journaled, so compensation in another process knows for types made at
   *  run time (tools built inside the run), whose definitions only that run's process had. */
  readonly inverse?: boolean;
}

/**
 * The writers this process has open, by run id: a cancel asked from this very process (journal.cancel beside the run it
 * drives) reaches its writer at once, instead of at its next fenced write or heartbeat. Other processes read the row.
 */
const localWriters = new Map<string, Set<RunWriter>>();

/**
 * Has this process's writers of run `runId` on connection `db` (those that have not seen their lease lost) fold what a
 * read of `target` could miss: each knows what it has not folded. Usually one; a holder that lost its lease without
 * noticing yet may still be among them. False when there is none.
 */
export function foldByLocalWriters(db: Db, runId: string, target?: string): boolean {
  const mine = localWriters.get(runId);
  if (mine === undefined) return false;
  let any = false;
  for (const w of mine) {
    if (!w.writesTo(db)) continue;
    any = true;
    w.foldFor(target);
  }
  return any;
}

/** Tells this process's writers of run `runId` that a cancel was asked (its JSON, as the row now holds it). */
export function tellLocalWriters(runId: string, raw: string): void {
  for (const w of localWriters.get(runId) ?? []) w.cancelAsked(raw);
}

const inverseOf = (a: NewAction): { inverse?: boolean } => (a.inverse === undefined ? {} : { inverse: a.inverse });
/** What a new action's `action.started` says of it. */
const startedData = (a: NewAction): object => ({ type: a.type, effect: a.effect, version: a.version, ...inverseOf(a) });

export class RunWriter {
  private readonly s;
  private readonly tx: (fn: () => unknown) => unknown;
  private nextSeq: number;
  private renewedAt = Number.NEGATIVE_INFINITY;
  /** Records written behind, oldest first; each writes its own rows with the time it happened. */
  private pending: Array<() => void> = [];
  /** Ids of read-only actions among them, so a lookup of the same key can write them first. */
  private readonly pendingActions = new Set<string>();
  private pendingTimer: NodeJS.Timeout | undefined;
  /** A lease lost while the timer wrote pending records; thrown by the run's next write. */
  private behindError: Error | undefined;
  /** The storage failure (LB_DB_BUSY, LB_DB_DISK_FULL, …) that stopped this writer: no write is tried after it. */
  broken: LogbookError | undefined;
  /** Aborted when this writer loses its lease: no new effect starts after it. */
  private readonly lostLease = new AbortController();
  /** What `execute` sees as ctx.signal: aborted when the lease is lost, or when the run is cancelled (`logbook cancel`). */
  private readonly effectAbort = new AbortController();
  /** The cancel this writer has seen asked of its run (by a fence read, a heartbeat, or the lease it was taken with). */
  private cancel: CancelRequest | undefined;
  /** Why the lease is lost, once it is (read here rather than through the signal, whose `aborted` checks the lease). */
  private lost: LogbookError | undefined;
  /** When the latest renewal this thread saw acknowledged was sent (monotonic ms); the engine's own are in `engineRenewed`. */
  private renewSentAt: number;
  /**
   * Where the engine renews the lease itself (PostgreSQL's thread): its last acknowledged renewal (monotonic µs, when
   * it was sent), or -1 once it found the lease taken. Undefined where this writer's heartbeat renews (SQLite).
   */
  private readonly engineRenewed: BigInt64Array | undefined;
  /** Fires when the lease stops being trusted, so a listener of ctx.signal hears it without anyone asking. */
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** Effects whose execute (or inverse) runs now, by id: an LB_LEASE_LOST names them, as they may still send. */
  private readonly effects = new Map<string, string>();
  /** What execute, verify and compensate get to check the lease with (see EffectContext). */
  readonly leaseChecks: Pick<EffectContext, 'signal' | 'assertLease' | 'leaseValid'>;
  /** What the engine does its own way: lazy commits, the fence, renewing the lease (Db.writeSupport). */
  private readonly w: WriteSupport;
  private readonly renewParams: Db['dialect']['renewParams'];

  /** The run's status as this session last wrote it (or took it with), for RUN_TRANSITIONS. */
  private status: StoredRunStatus | undefined;

  private readonly db: Db;
  /** The inbox's statements (run.waitFor, approval decisions), prepared when a run first waits. */
  private waits: Record<'waiting' | 'take', Statement> | undefined;
  /** The state rows' writes: run at once (PostgreSQL), or by a fold of the events that carry them (`folds`). */
  private readonly rows: RowWrites;
  /** Journal format 2 (SQLite): a transition writes only its event, and the rows are folded from it (store/fold.ts). */
  private readonly folds: boolean;
  /** What the current transaction's events carry writes for (an action id, or `#idx` for a step), one per write. */
  private txTargets: string[] = [];
  /** What committed events carry writes for that the rows do not show yet, and how many such writes there are. */
  private readonly unfolded = new Set<string>();
  private unfoldedWrites = 0;

  constructor(
    conn: Db | JournalConnection,
    readonly lease: Lease,
    nextActionSeq: number,
    readonly durability: Durability = 'full',
  ) {
    const db = (this.db = dbOf(conn));
    this.nextSeq = nextActionSeq;
    this.status = lease.status;
    const t = db.transaction((fn: () => unknown) => fn());
    this.tx = (fn) => t.immediate(fn);
    this.w = db.writeSupport();
    this.renewParams = db.dialect.renewParams;
    this.folds = db.dialect.foldsRows;
    this.rows = new RowWrites(db, db.dialect.lastEventSeq);
    // What a holder before this one committed and did not fold (it died between folds): this writer tracks only its own.
    // A damaged log is the journal's failure: the run's first write throws it, and the engine stops the run resumable.
    if (this.folds) {
      try {
        foldRun(db, lease.runId);
      } catch (err) {
        this.broken = this.journalFailure(err);
      }
    }
    this.s = {
      renew: db.prepare(db.dialect.renewLease),
      // The fence's read also carries the run's cancel request, so a live run learns of `logbook cancel` with no extra statement.
      holds: db.prepare('SELECT cancel_requested FROM runs WHERE id = ? AND lease_token = ? AND lease_epoch = ?').pluck(),
      event: db.prepare(`INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data) VALUES (?, ?, ?, ?, ?, ?, ?)${db.dialect.returningSeq}`),
      // Format 2 (SQLite): the event carries the transition's state writes, folded into steps and actions later.
      eventFolded: this.folds
        ? db.prepare('INSERT INTO events (run_id, attempt, at, kind, step_idx, action_id, data, fold) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        : undefined,
      runStatus: db.prepare('UPDATE runs SET status = ?, output = COALESCE(?, output), error = ? WHERE id = ?'),
      sleeping: db.prepare("UPDATE runs SET status = 'sleeping', wake_at = ?, error = NULL WHERE id = ?"),
      release: db.prepare('UPDATE runs SET lease_token = NULL, lease_expires = NULL WHERE id = ? AND lease_token = ? AND lease_epoch = ?'),
    };
    this.renewSentAt = lease.sentAt ?? monoNow();
    this.engineRenewed = this.w.holdLease(
      lease,
      LEASE_TTL_MS,
      (reason) => void this.loseLease(reason),
      (raw) => this.noteCancel(raw),
    );
    this.leaseChecks = { signal: this.checkedSignal(), assertLease: () => this.assertHolds(), leaseValid: () => this.leaseValid() };
    if (lease.cancel) this.noteCancel(lease.cancel);
    let mine = localWriters.get(lease.runId);
    if (!mine) localWriters.set(lease.runId, (mine = new Set()));
    mine.add(this);
    this.armDeadline();
  }

  writesTo(db: Db): boolean {
    return this.db === db;
  }

  /** A cancel asked of this run from this process (see tellLocalWriters). */
  cancelAsked(raw: string): void {
    this.noteCancel(raw);
  }

  private unregister(): void {
    const mine = localWriters.get(this.lease.runId);
    mine?.delete(this);
    if (mine?.size === 0) localWriters.delete(this.lease.runId);
  }

  /**
   * The cancel asked of this run, once this writer has seen it: the run stops at its next boundary (AttemptHost) with
   * status `cancelled`, and ctx.signal is aborted so an execute that listens stops early.
   */
  get cancelRequest(): CancelRequest | undefined {
    return this.cancel;
  }

  /** Records a cancel request read from the run's row (raw JSON) or carried by the lease; the first one seen stands. */
  private noteCancel(raw: string | CancelRequest | null | undefined): void {
    if (raw === null || raw === undefined || this.cancel !== undefined) return;
    // Only a run going forward is stopped by it: a compensation (after the cancel, or a declared policy's) must not be.
    if (this.status !== undefined && this.status !== 'running') return;
    const req = typeof raw === 'string' ? parseCancelRequest(raw) : raw;
    this.cancel = req;
    this.effectAbort.abort(
      new LogbookError(
        ErrorCodes.RUN_CANCELLED,
        `Run ${this.lease.runId} was cancelled${req.reason ? ` (${req.reason})` : ''}: it stops at its next boundary, and no new effect starts.`,
        'Let the effect in flight return or throw as it would; the run is then marked cancelled.',
        { runId: this.lease.runId },
      ),
    );
  }

  /** Aborted when the lease is lost (another process took the run over, or it could not be renewed in time). */
  get signal(): AbortSignal {
    return this.lostLease.signal;
  }

  /**
   * The signal with its `aborted`, `reason` and `throwIfAborted` checking the lease by the clock first: code that asks
   * right after waking from a freeze gets the truth, before the overdue timer or the PG thread's message could tell.
   */
  private checkedSignal(): AbortSignal {
    const signal = this.effectAbort.signal;
    // The prototype's own getters, called with this signal as receiver, after the check.
    const native = (name: 'aborted' | 'reason'): unknown => Reflect.get(AbortSignal.prototype, name, signal);
    for (const name of ['aborted', 'reason'] as const) {
      Object.defineProperty(signal, name, { configurable: true, enumerable: true, get: () => (this.leaseValid(), native(name)) });
    }
    Object.defineProperty(signal, 'throwIfAborted', {
      configurable: true,
      value: () => {
        this.leaseValid();
        if (native('aborted') === true) throw native('reason');
      },
    });
    return signal;
  }

  /** When the lease stops being trusted by this process's clock: the last acknowledged renewal's send time + TTL − margin. */
  private trustedUntil(): number {
    const engine = this.engineRenewed ? Number(Atomics.load(this.engineRenewed, 0)) / 1000 : 0;
    return Math.max(this.renewSentAt, engine) + LEASE_TTL_MS - LEASE_MARGIN_MS;
  }

  /**
   * Whether this process can still prove its lease: not lost, and within its trusted time by the monotonic clock.
   * Past that, it is lost for good (ctx.signal aborts): another process may already be taking the run over.
   */
  leaseValid(): boolean {
    if (this.lost !== undefined) return false;
    if (this.engineRenewed !== undefined && Atomics.load(this.engineRenewed, 0) < 0n) {
      this.loseLease('another process took it over');
      return false;
    }
    const late = monoNow() - this.trustedUntil();
    if (late <= 0) return true;
    const since = Math.round(late + LEASE_TTL_MS - LEASE_MARGIN_MS);
    this.loseLease(
      `this process cannot prove it still holds the lease: the last renewal the journal acknowledged was sent ${since} ms ago, and a lease lasts ${LEASE_TTL_MS} ms (trusted for ${LEASE_TTL_MS - LEASE_MARGIN_MS} ms of it), so another process may be taking the run over (was this process frozen or starved?)`,
    );
    return false;
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    if (this.lost !== undefined) return;
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        if (this.leaseValid()) this.armDeadline();
      },
      Math.max(1, Math.ceil(this.trustedUntil() - monoNow()) + 1),
    );
    this.deadlineTimer.unref();
  }

  private loseLease(reason: string): LogbookError {
    if (this.lost !== undefined) return this.lost;
    const running = [...this.effects].map(([id, type]) => `${type} ${id}`);
    const after =
      running.length === 0
        ? 'No effect was running: nothing more was journaled and no effect was started after that.'
        : `Nothing more was journaled and no effect was started after that, but ${running.length === 1 ? 'the execute of' : 'the executes of'} ${running.join(', ')} ${running.length === 1 ? 'was' : 'were'} already running and ${running.length === 1 ? 'was' : 'were'} told by ctx.signal: if ${running.length === 1 ? 'it' : 'one'} sent its request anyway, only the provider's refusal of a repeated idempotency key keeps that effect from happening twice.`;
    const err = new LogbookError(
      ErrorCodes.LEASE_LOST,
      `Run ${this.lease.runId} is no longer held by this process (epoch ${this.lease.epoch}): ${reason}. ${after}`,
      `Let the process that holds it now finish (\`logbook show ${this.lease.runId}\` names it); if none does, \`logbook resume ${this.lease.runId}\` or a worker takes it over.`,
      { runId: this.lease.runId, ...(running.length > 0 ? { running } : {}) },
    );
    this.lost = err;
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.lostLease.abort(err);
    if (!this.effectAbort.signal.aborted) this.effectAbort.abort(err);
    this.unregister();
    this.w.dropLease(this.lease);
    return err;
  }

  /** Why the lease is lost, once it is: the run may go no further in this process. */
  get lostError(): LogbookError | undefined {
    this.leaseValid();
    return this.lost;
  }

  /**
   * Throws LB_LEASE_LOST once the lease is lost or can no longer be proven by this process's clock: called before
   * anything that would start an effect, and by every write.
   */
  assertHolds(): void {
    if (!this.leaseValid()) throw this.lost ?? this.loseLease('it was lost');
  }

  /**
   * Called right before an effect's execute (or inverse) is called: throws LB_LEASE_LOST if the lease cannot be proven
   * now, else records the effect as running until the function returned is called (when it settled), so a lease lost
   * meanwhile names it. Checking again at its end catches a deadline passed while it ran, with it still named.
   */
  effectStarting(type: string, id: string): () => void {
    this.assertHolds();
    this.effects.set(id, type);
    return () => {
      if (!this.effects.has(id)) return;
      this.leaseValid();
      this.effects.delete(id);
    };
  }

  /**
   * One fenced transaction. SQLite: inside BEGIN IMMEDIATE no other writer can commit, so reading the lease is as good
   * a fence as updating it; the expiry is pushed forward only every LEASE_RENEW_MS (or when `renew`), which keeps a
   * page write off most commits. The heartbeat renews at a third of LEASE_TTL_MS.
   *
   * PostgreSQL: other processes write concurrently, so a read of the lease proves nothing by the time the next
   * statement runs. Every transaction therefore starts with the renewing UPDATE, fenced by token and epoch in its
   * WHERE clause: 0 rows means another process holds a newer epoch (LB_LEASE_LOST, nothing written). 1 row means this
   * transaction now holds the run row's lock until it commits, and a takeover (acquireRun) must lock that same row
   * (SELECT … FOR UPDATE, then its epoch bump) — so it waits for this commit, and every later transaction of this
   * writer fails its fence. The rest of the transaction is thereby fenced by the same statement's row lock.
   *
   * On PostgreSQL the row count is checked by the PG thread, not here (PgDb.fence): it runs the UPDATE, and only
   * if it changed the row does it send the statements queued after it, then COMMIT; otherwise it rolls back and
   * nothing after the UPDATE ever reaches the server. The order on the connection is the same as when this thread read
   * the count itself, so the row-lock argument above is unchanged; what goes is a hop to the PG thread and back
   * per transaction: the whole transaction is one request. (Fencing each write in its own statement would be as sound,
   * but every statement would repeat the runs lookup, and the renewal would still be one more statement.)
   */
  private write(durable: boolean, fn: (now: number) => void, renew = false): void {
    if (this.broken !== undefined) throw this.broken;
    if (this.behindError !== undefined) throw this.behindError;
    // Past the lease's trusted time nothing is written, even where the fence would still pass: this process cannot
    // know that no one else has begun, and a `started` written now would be followed by an effect.
    this.assertHolds();
    try {
      this.writeFenced(durable, fn, renew);
    } catch (err) {
      if (this.w.isFenceLost(err)) throw this.loseLease('another process took it over');
      // A locked, full, read-only or damaged journal is not the script failing: every later write of this run throws
      // the same error, so a script that catches it cannot go on unjournaled, and the engine stops the run resumable.
      const storage = storageError(err, this.db.name);
      if (storage) this.broken = storage;
      throw storage ?? err;
    }
  }

  private writeFenced(durable: boolean, fn: (now: number) => void, renew: boolean): void {
    const now = Date.now();
    // Taken before the request goes out: the expiry it sets (now + TTL, or the server's clock + TTL) is no earlier.
    const sentAt = monoNow();
    let renewed = false;
    let cancel: string | null | undefined;
    const pending = this.pending;
    this.txTargets = [];
    const body = (): void => {
      if (!durable) this.w.lazyInside?.run();
      let fenced: boolean;
      if (this.w.fence !== undefined) {
        this.w.fence(this.renewParams(now, LEASE_TTL_MS, this.lease.runId, this.lease.token, this.lease.epoch));
        fenced = true;
        renewed = true;
      } else {
        if (renew || now - this.renewedAt >= LEASE_RENEW_MS) {
          renewed = this.s.renew.run(...this.renewParams(now, LEASE_TTL_MS, this.lease.runId, this.lease.token, this.lease.epoch)).changes === 1;
          if (renewed) this.renewedAt = now;
        }
        // Read in the same immediate transaction (no other writer can commit inside it): the fence and the cancel request.
        cancel = this.s.holds.get(this.lease.runId, this.lease.token, this.lease.epoch) as string | null | undefined;
        fenced = cancel !== undefined;
      }
      if (!fenced) throw this.loseLease(`another process took it over`);
      for (const record of pending) record();
      fn(now);
    };
    const around = durable ? undefined : this.w.lazyAround;
    if (around === undefined) {
      this.tx(body);
    } else {
      around.before.run();
      try {
        this.tx(body);
      } finally {
        around.after.run();
      }
    }
    // Committed: the renewal inside it is acknowledged.
    if (renewed && sentAt > this.renewSentAt) this.renewSentAt = sentAt;
    this.noteCancel(cancel);
    // The timer stays armed: when it fires it finds nothing, and the next record held within WRITE_BEHIND_MS rides it
    // (a timer armed and cleared for every bracket was a few µs of each).
    if (pending.length > 0) this.clearPending(false);
    if (this.txTargets.length > 0) this.noteUnfolded();
    this.db.changed(this.lease.runId);
  }

  private noteUnfolded(): void {
    for (const t of this.txTargets) this.unfolded.add(t);
    this.unfoldedWrites += this.txTargets.length;
    this.txTargets = [];
    if (this.unfoldedWrites < FOLD_EVERY) return;
    try {
      this.foldNow();
    } catch (err) {
      // The transition is committed; a fold that failed is the journal's problem, raised by the run's next write.
      this.broken = this.journalFailure(err);
    }
  }

  /** A fold's failure as the storage or journal error it is; anything else is a bug, thrown as it is. */
  private journalFailure(err: unknown): LogbookError {
    const failure = storageError(err, this.db.name) ?? (err instanceof LogbookError ? err : undefined);
    if (failure === undefined) throw err;
    return failure;
  }

  private foldNow(): void {
    foldRun(this.db, this.lease.runId);
    this.unfolded.clear();
    this.unfoldedWrites = 0;
  }

  /**
   * Brings the run's rows up to what this writer committed, for a read of them in this process: only when the read
   * could see a row behind (`target`, an action id or `#idx`, is among the unfolded; without it, anything unfolded).
   */
  foldFor(target?: string): void {
    if (this.unfoldedWrites === 0 || (target !== undefined && !this.unfolded.has(target))) return;
    this.foldNow();
  }

  /**
   * Holds a record until the run's next transaction. Only for records whose loss in a crash is harmless: the script
   * redoes the work they describe (a read-only action runs again, a step starts again), and anything that depends on
   * them is written after them in the same transaction or a later one.
   */
  private behind(record: (now: number) => void, actionId?: string): void {
    const at = Date.now();
    this.pending.push(() => record(at));
    if (actionId !== undefined) this.pendingActions.add(actionId);
    if (this.pending.length >= WRITE_BEHIND_MAX) {
      this.writePending();
    } else if (this.pendingTimer === undefined) {
      this.pendingTimer = setTimeout(() => {
        this.pendingTimer = undefined;
        try {
          this.writePending();
        } catch (err) {
          this.behindError = err instanceof Error ? err : new Error(String(err));
        }
      }, WRITE_BEHIND_MS);
      this.pendingTimer.unref();
    }
  }

  private clearPending(stopTimer = true): void {
    this.pending = [];
    this.pendingActions.clear();
    if (!stopTimer) return;
    if (this.pendingTimer !== undefined) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
  }

  /** Writes the records held behind (lazily). Hosts call it before showing the journal, e.g. at a debugger stop. */
  writePending(): void {
    if (this.pending.length > 0) this.write(false, () => undefined);
  }

  /** True when an action with this id is held behind: a lookup of it must call writePending first. */
  holdsPending(actionId: string): boolean {
    return this.pendingActions.has(actionId);
  }

  /** Appends one event. Its seq is read only where needed: on PostgreSQL, reading it sends the transaction's batch so far. */
  private event(now: number, kind: string, stepIdx: number | null, actionId: string | null, data?: unknown): RunResult {
    return this.s.event.run(this.lease.runId, this.lease.attempt, now, kind, stepIdx, actionId, data === undefined ? null : JSON.stringify(data));
  }

  /**
   * Appends one event with the state writes it implies (`ops`, store/rowOps.ts): on SQLite the event carries them and
   * a fold applies them later (format 2: one row appended per transition); on PostgreSQL they run now, in the same
   * round trip. Either way they commit or roll back with the event.
   */
  private transition(now: number, kind: string, stepIdx: number | null, actionId: string | null, data: unknown, ops: RowOp[]): RunResult {
    const { runId, attempt } = this.lease;
    if (this.s.eventFolded !== undefined) {
      const text = data === undefined ? null : JSON.stringify(data);
      const ev = this.s.eventFolded.run(runId, attempt, now, kind, stepIdx, actionId, text, encodeRowOps(ops));
      for (const op of ops) this.txTargets.push(opTarget(op));
      return ev;
    }
    // The writes that name the event's seq after it (PostgreSQL's currval), the others first, as format 1 wrote them.
    for (const op of ops) if (!namesSeq(op)) this.rows.apply(runId, 0, op);
    const ev = this.event(now, kind, stepIdx, actionId, data);
    if (ops.some(namesSeq)) {
      const seq = this.rows.seqAsParam ? Number(ev.lastInsertRowid) : 0;
      for (const op of ops) if (namesSeq(op)) this.rows.apply(runId, seq, op);
    }
    return ev;
  }

  /**
   * Keeps the lease alive during long effects; not durable (a lost heartbeat only shortens the lease). On PostgreSQL
   * the PG thread renews it (so a busy main thread cannot starve it); here only what waits behind is written.
   */
  heartbeat(): void {
    if (this.engineRenewed !== undefined) this.writePending();
    else this.write(false, () => undefined, true);
  }

  /** Heartbeats at a third of LEASE_TTL_MS while a session drives, so a long effect does not outlast the lease; returns the stop. */
  keepAlive(): () => void {
    const timer = setInterval(() => {
      try {
        this.heartbeat();
      } catch {
        // A lost lease surfaces on the next real write.
      }
    }, LEASE_TTL_MS / 3);
    timer.unref();
    return () => clearInterval(timer);
  }

  release(): void {
    try {
      this.writePending();
    } catch {
      // Lost lease: nothing more may be written, and the records held behind are only redone work.
    }
    try {
      // Safe without the lease: the fold applies only what was committed. Left undone, the next reader does it.
      this.foldFor();
    } catch {
      // The next reader folds, or names the damage.
    }
    this.clearPending();
    this.unregister();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.w.dropLease(this.lease);
    this.w.lazyAround?.before.run();
    try {
      // Fenced by token and epoch, so it is also safe once the lease is lost: a run taken over is left alone, and one
      // this process only stopped trusting (no one took it) becomes resumable at once.
      this.s.release.run(this.lease.runId, this.lease.token, this.lease.epoch);
    } finally {
      this.w.lazyAround?.after.run();
    }
    this.db.changed(this.lease.runId);
  }

  runStatus(status: StoredRunStatus, opts: { output?: string | null; error?: unknown; kind?: string; data?: unknown } = {}): void {
    if (this.status !== undefined) requireTransition(this.lease.runId, this.status, status);
    this.write(
      true,
      (now) => {
        this.s.runStatus.run(status, opts.output ?? null, opts.error === undefined ? null : JSON.stringify(opts.error), this.lease.runId);
        this.status = status;
        this.event(now, opts.kind ?? `run.${status}`, null, null, opts.data ?? (opts.error === undefined ? undefined : { error: opts.error }));
      },
      true,
    );
  }

  /** run.sleep under a worker: the run is released until `wakeAt` (ms since the epoch), when a worker claims it again. */
  sleeping(wakeAt: number, data: unknown): void {
    if (this.status !== undefined) requireTransition(this.lease.runId, this.status, 'sleeping');
    this.write(
      true,
      (now) => {
        this.s.sleeping.run(wakeAt, this.lease.runId);
        this.status = 'sleeping';
        this.event(now, 'run.sleeping', null, null, data);
      },
      true,
    );
  }

  /**
   * run.child: the child's run row, held by a session of `owner` (epoch 1, attempt 1), and this run's `child.started`
   * in step `stepIdx`, in one fenced, durable transaction: a kill leaves both or neither, so no kill makes a second
   * child or loses one. Returns the child's lease, for the session that drives it.
   */
  childStarted(stepIdx: number, child: NewChild, owner: Owner): Lease {
    const sentAt = monoNow();
    const expires = this.db.leaseClock(Date.now()) + LEASE_TTL_MS;
    this.write(true, (now) => {
      insertChildRun(this.db, child, owner, now, expires);
      this.event(now, 'child.started', stepIdx, null, { runId: child.id, agent: child.agent });
    });
    this.db.changed(child.id);
    return { runId: child.id, token: owner.token, epoch: 1, attempt: 1, sentAt, status: 'running' };
  }

  note(kind: string, data: unknown, stepIdx: number | null = null, actionId: string | null = null): void {
    this.write(false, (now) => void this.event(now, kind, stepIdx, actionId, data));
  }

  /** Written behind: a step that started and left no other record is simply started again on resume. */
  stepStarted(idx: number, name: string, rerun: boolean): void {
    this.behind((now) => {
      this.transition(now, rerun ? 'step.restarted' : 'step.started', idx, null, { name }, [['stepStart', idx, name, this.lease.attempt, now]]);
    });
  }

  stepCompleted(idx: number, result: string | null): void {
    this.write(true, (now) => {
      this.transition(now, 'step.completed', idx, null, { bytes: result?.length ?? 0 }, [['stepEnd', idx, 'completed', result, null, now]]);
    });
  }

  stepFailed(idx: number, error: unknown): void {
    this.write(true, (now) => {
      this.transition(now, 'step.failed', idx, null, { error }, [['stepEnd', idx, 'failed', null, JSON.stringify(error), now]]);
    });
  }

  /**
   * The bracket's first half, before the effect runs: durable; or, with `durable` false (a new idempotent action),
   * a lazy commit, which a process crash keeps and only a power loss can lose — and a lost `started` of an idempotent
   * action is the in-doubt case's own answer: it runs again with the same key.
   */
  actionStarted(a: NewAction, existing: boolean, reconciliation: Reconciliation | null = null, durable = true): void {
    this.write(durable, (now) => {
      if (existing)
        this.transition(now, 'action.started', a.stepIdx, a.id, { reconciliation }, [['actionRestart', a.id, this.lease.attempt, a.version, reconciliation]]);
      else this.transition(now, 'action.started', a.stepIdx, a.id, startedData(a), [this.insertAction(a, 'started', null, now)]);
    });
  }

  /**
   * A new idempotent action's `started`, written behind (its count of `execute` follows it): in the transaction of its result
   * (or the run's next write, or after WRITE_BEHIND_MS). Lost in a crash, the action is not found and runs again with
   * its key, which is what reconciling a `started` one would do.
   */
  actionStartedBehind(a: NewAction): void {
    const actionSeq = this.nextSeq++;
    this.behind((now) => {
      const insert: RowOp = ['actionInsert', a.id, actionSeq, a.stepIdx, a.type, a.version, a.effect, a.args, 'started', this.lease.attempt, now, null];
      this.transition(now, 'action.started', a.stepIdx, a.id, startedData(a), [insert]);
    }, a.id);
  }

  /**
   * Counts a call of `execute`, held behind: it goes into the transaction that settles the action (or the run's next
   * write, a host's stop, or WRITE_BEHIND_MS later), never in a write of its own before the call. So nothing claims
   * an execution before it happens, and the bracket is two transactions; an action still `started` may have run once
   * more than it counts (policy's executionsText: `0+`), which its being in doubt already says.
   */
  actionExecuting(stepIdx: number, id: string): void {
    this.behind((now) => this.executing(now, stepIdx, id), id);
  }

  private executing(now: number, stepIdx: number, id: string): void {
    this.transition(now, 'action.executing', stepIdx, id, undefined, [['actionExecuting', id]]);
  }

  /**
   * A read-only action that ran for the first time in this run, recorded for visibility only: no bracket, no fsync,
   * written behind (lost, it runs again). One that was journaled before never gets here: it is skipped, or redone in
   * the bracket when it was left in doubt.
   */
  actionObserved(a: NewAction, result: string | null): void {
    const actionSeq = this.nextSeq++;
    this.behind((now) => {
      const row: RowOp = ['actionObserved', a.id, actionSeq, a.stepIdx, a.type, a.version, a.effect, a.args, result, this.lease.attempt, now];
      this.transition(now, 'action.committed', a.stepIdx, a.id, { readOnly: true }, [row]);
    }, a.id);
  }

  actionCommitted(stepIdx: number, id: string, result: string | null, reconciliation: Reconciliation | null = null): void {
    const durable = this.durability === 'full' || reconciliation !== null;
    this.write(durable, (now) => {
      const ops: RowOp[] = [['actionCommit', id, result, now, reconciliation]];
      if (reconciledAsHappened(reconciliation)) ops.push(['actionHappened', id]);
      this.transition(now, reconciliation ? `action.${reconciliation}` : 'action.committed', stepIdx, id, reconciliation ? { reconciliation } : undefined, ops);
    });
  }

  /** Makes any lazily committed markers durable (group commit's flush). */
  flush(): void {
    if (this.durability === 'group') this.write(true, () => undefined);
  }

  actionFailed(stepIdx: number, id: string, error: unknown): void {
    this.write(true, (now) => {
      this.transition(now, 'action.failed', stepIdx, id, { error }, [['actionFail', id, JSON.stringify(error), now]]);
    });
  }

  /** Execute threw, and the error does not prove nothing happened: the action stays in doubt, with the error beside it. */
  actionInDoubt(stepIdx: number, id: string, error: unknown): void {
    this.write(true, (now) => {
      this.transition(now, 'action.in-doubt', stepIdx, id, { error }, [['actionInDoubt', id, JSON.stringify(error), now]]);
    });
  }

  /** A new action row at the next sequence number: where it starts (`started`, or held at its gate). */
  private insertAction(a: NewAction, status: 'started' | 'awaiting-approval', approval: 'pending' | null, now: number): RowOp {
    return ['actionInsert', a.id, this.nextSeq++, a.stepIdx, a.type, a.version, a.effect, a.args, status, this.lease.attempt, now, approval];
  }

  awaitingApproval(a: NewAction): void {
    this.write(true, (now) => {
      const insert = this.insertAction(a, 'awaiting-approval', 'pending', now);
      this.transition(now, 'action.awaiting-approval', a.stepIdx, a.id, { type: a.type, ...inverseOf(a) }, [insert]);
    });
  }

  /** A gate's decision; `fromInbox`: the sent event (`logbook approve`) it came as, taken in the same transaction. */
  approval(stepIdx: number, id: string, approved: boolean, note: string | null, fromInbox?: number): void {
    this.write(true, (now) => {
      if (fromInbox !== undefined) this.take(now, fromInbox, 'delivered', stepIdx, null);
      const op: RowOp = ['actionApproval', id, approved ? 'approved' : 'rejected', note, approved ? 'awaiting-approval' : 'rejected'];
      this.transition(now, approved ? 'action.approved' : 'action.rejected', stepIdx, id, note ? { note } : undefined, [op]);
    });
  }

  // ---- run.waitFor and approval gates: events sent to the run (store/inbox.ts) -----------------------------------

  private waitStatements(): Record<'waiting' | 'take', Statement> {
    this.waits ??= {
      // Only when nothing the wait could take is pending: a send commits under the same row lock (store/inbox.ts).
      waiting: this.db.prepare(
        'UPDATE runs SET status = ?, waiting_for = ?, wake_at = ?, error = NULL WHERE id = ? AND NOT EXISTS ' +
          "(SELECT 1 FROM inbox WHERE run_id = ? AND name = ? AND status = 'pending' AND sent_at <= ?)",
      ),
      take: this.db.prepare(
        "UPDATE inbox SET status = ?, step_idx = ?, attempt = ?, taken_at = ?, error = ? WHERE run_id = ? AND seq = ? AND status = 'pending'",
      ),
    };
    return this.waits;
  }

  /** Marks a sent event taken, inside the caller's transaction; only this lease's holder takes events, so it is pending. */
  private take(now: number, seq: number, status: 'delivered' | 'refused', stepIdx: number, error: string | null): void {
    const r = this.waitStatements().take.run(status, stepIdx, this.lease.attempt, now, error, this.lease.runId, seq);
    if (r.changes !== 1)
      throw new LogbookError(
        ErrorCodes.JOURNAL_INVALID,
        `Event #${seq} sent to run ${this.lease.runId} is no longer pending in the inbox of ${this.db.name}, though this session read it so: the journal was edited or damaged. Nothing was written.`,
        `Restore the journal from a backup, or see what it holds with \`logbook show ${this.lease.runId}\`.`,
        { runId: this.lease.runId, table: 'inbox', seq },
      );
    this.event(now, `inbox.${status}`, stepIdx, null, { seq, ...(error === null ? {} : { error: JSON.parse(error) as unknown }) });
  }

  /** run.waitFor begins to wait (durably: its timeout counts from now across attempts), as step `idx` with `wait` (JSON). */
  waitStarted(idx: number, name: string, wait: string): void {
    this.write(true, (now) => {
      this.transition(now, 'wait.started', idx, null, JSON.parse(wait), [['stepWait', idx, name, this.lease.attempt, now, wait]]);
    });
  }

  /**
   * The run stops to wait (status `waiting`, or `awaiting-approval` at a gate) for event `name` until `until` (or for
   * good), released; unless an event it could take is already pending: then nothing is written and false is returned.
   */
  waiting(status: 'waiting' | 'awaiting-approval', name: string, until: number | null, data: unknown): boolean {
    if (this.status !== undefined) requireTransition(this.lease.runId, this.status, status);
    let written = false;
    this.write(
      true,
      (now) => {
        const { runId } = this.lease;
        if (this.waitStatements().waiting.run(status, name, until, runId, runId, name, until ?? Number.MAX_SAFE_INTEGER).changes !== 1) return;
        this.status = status;
        written = true;
        this.event(now, `run.${status}`, null, null, data);
      },
      true,
    );
    return written;
  }

  /** run.waitFor took event `seq`: its step completes with `result` (the checkpoint replay returns) in the same transaction. */
  eventDelivered(idx: number, seq: number, result: string): void {
    this.write(true, (now) => {
      this.take(now, seq, 'delivered', idx, null);
      this.transition(now, 'step.completed', idx, null, { bytes: result.length }, [['stepEnd', idx, 'completed', result, null, now]]);
    });
  }

  /** run.waitFor's schema refused event `seq` (`error`: JSON of the issues): the wait goes on for the next one. */
  eventRefused(idx: number, seq: number, error: string): void {
    this.write(true, (now) => this.take(now, seq, 'refused', idx, error));
  }

  /** run.waitFor's timeout passed first: its step completes with `result`, and `wait.timed-out` says which wait. */
  waitTimedOut(idx: number, result: string, data: unknown): void {
    this.write(true, (now) => {
      this.transition(now, 'step.completed', idx, null, { bytes: result.length }, [['stepEnd', idx, 'completed', result, null, now]]);
      this.event(now, 'wait.timed-out', idx, null, data);
    });
  }

  /** A person's decision, with the result they gave (journal JSON) or null: the latest decision replaces any before it. */
  decision(stepIdx: number, id: string, decision: Decision, result: string | null = null): void {
    this.write(true, (now) => {
      const data = { decision, ...(result !== null ? { result: JSON.parse(result) as unknown } : {}) };
      this.transition(now, 'action.decided', stepIdx, id, data, [['actionDecision', id, decision, result]]);
    });
  }

  compensation(stepIdx: number, id: string, status: CompensationStatus, result: string | null = null, data?: unknown): void {
    this.write(true, (now) => {
      this.transition(now, `compensation.${status}`, stepIdx, id, data, [['compStatus', id, status, result]]);
    });
  }

  compensationExecuting(stepIdx: number, id: string): void {
    this.write(false, (now) => {
      this.transition(now, 'compensation.executing', stepIdx, id, undefined, [['compExecuting', id]]);
    });
  }
}
