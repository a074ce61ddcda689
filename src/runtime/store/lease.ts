// Run leases: creating a run, and taking over one whose holder is gone, each bumping the epoch that fences writes.

import { dbOf, type Db, type JournalConnection } from './db';
import { ErrorCodes, LogbookError, runNotFound } from '../errors';
import type { StoredRunStatus } from '../types';
import { JournalReader } from './reader';
import { LEASE_TTL_MS, type Lease } from './writer';
import { leaseIsLive, type Owner } from './owner';
import { copyStepsForFork, seedForkActions, type ForkSeed } from './fork';
import { RunRow, checked } from './rows';
import { monoNow } from './leaseClock';
import { requireTransition } from './transitions';
import { parseCancelRequest } from './cancelRequest';

export interface NewRun {
  readonly id: string;
  readonly agent: string;
  readonly script: string;
  readonly input: string | null;
  /** The bundled script's hash, so a worker with this version can take the run over if its process dies. */
  readonly scriptVersion?: string;
  readonly forkedFrom?: ForkPoint;
  /** The caller's W3C trace context (traceparent, tracestate), journaled as a trace.context event: no column needed. */
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string };
}

/** Where a fork starts: the origin's steps before `stepIdx` are replayed; `seeds` are committed actions it inherits. */
export interface ForkPoint {
  readonly runId: string;
  readonly stepIdx: number;
  readonly seeds?: readonly ForkSeed[];
}

export function createRun(db: Db, reader: JournalReader, run: NewRun, owner: Owner): Lease {
  // The lease's expiry by the clock leases are measured by (the server's on PostgreSQL); times shown are this machine's.
  // This process trusts it from before the server's clock is read: the expiry is later than sentAt + TTL.
  const sentAt = monoNow();
  const now = Date.now();
  const expires = db.leaseClock(now) + LEASE_TTL_MS;
  const tx = db.transaction(() => {
    if (reader.run(run.id)) {
      throw runExists(run.id);
    }
    db.prepare(
      `INSERT INTO runs (id, agent, script, input, status, attempt, created_at, updated_at,
         lease_token, lease_owner, lease_pid, lease_pid_start, lease_host, lease_epoch, lease_expires, forked_from, forked_at_step, script_version)
       VALUES (?, ?, ?, ?, 'running', 1, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
    ).run(
      run.id,
      run.agent,
      run.script,
      run.input,
      now,
      now,
      owner.token,
      owner.label,
      owner.pid,
      owner.pidStart,
      owner.host,
      expires,
      run.forkedFrom?.runId ?? null,
      run.forkedFrom?.stepIdx ?? null,
      run.scriptVersion ?? null,
    );
    db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, 1, ?, ?, ?)').run(
      run.id,
      now,
      'run.started',
      JSON.stringify({
        agent: run.agent,
        script: run.script,
        owner: owner.label,
        ...(run.forkedFrom ? { forkedFrom: { runId: run.forkedFrom.runId, stepIdx: run.forkedFrom.stepIdx } } : {}),
      }),
    );
    if (run.traceContext)
      db.prepare("INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, 1, ?, 'trace.context', ?)").run(
        run.id,
        now,
        JSON.stringify(run.traceContext),
      );
    if (run.forkedFrom) {
      const origin = reader.run(run.forkedFrom.runId);
      if (origin && origin.agent !== run.agent) {
        throw new LogbookError(
          ErrorCodes.USAGE,
          `Cannot fork run ${origin.id} of agent ${origin.agent} with the script of agent ${run.agent}.`,
          `Fork it with its own script (${origin.script}).`,
          { runId: origin.id },
        );
      }
      copyStepsForFork(db, reader, run.forkedFrom.runId, run.id, run.forkedFrom.stepIdx);
      if (run.forkedFrom.seeds) seedForkActions(db, reader, run.forkedFrom.runId, run.id, run.forkedFrom.seeds);
    }
  });
  try {
    tx.immediate();
  } catch (err) {
    // Two processes creating the same id at once on PostgreSQL: the loser's INSERT meets the winner's primary key.
    if ((err as { code?: unknown }).code === '23505') throw runExists(run.id);
    throw err;
  }
  db.changed(run.id);
  return { runId: run.id, token: owner.token, epoch: 1, attempt: 1, sentAt, status: 'running' };
}

function runExists(runId: string): LogbookError {
  return new LogbookError(
    ErrorCodes.RUN_EXISTS,
    `A run with id ${runId} already exists.`,
    `Resume it with \`logbook resume ${runId}\`, or pick another --run-id.`,
    { runId },
  );
}

export interface AcquireOptions {
  /** The status the run takes while held (running for resume, compensating for compensation). */
  readonly status: StoredRunStatus;
  /** A new attempt (resume, compensate) or the same one (recording an approval). */
  readonly newAttempt: boolean;
  /** Words for people (the timeline shows them); code reads `status`, which the event also records. */
  readonly purpose: string;
}

/** Takes the lease of an existing run for a new session; fails naming the holder if a live session has it. */
export function acquireRun(conn: Db | JournalConnection, reader: JournalReader, runId: string, owner: Owner, opts: AcquireOptions): Lease {
  const db = dbOf(conn);
  const sentAt = monoNow();
  const now = Date.now();
  let lease: Lease | undefined;
  // PostgreSQL: the run row stays locked from this read to the commit, so the holder's fenced writes wait for the
  // takeover (and then fail their fence) instead of racing it. SQLite's IMMEDIATE transaction already excludes them.
  const locked = db.prepare(`SELECT * FROM runs WHERE id = ?${db.dialect.forUpdate}`);
  const tx = db.transaction(() => {
    const found = locked.get(runId);
    const row = found === undefined ? undefined : checked(RunRow, found, 'run', reader.target);
    if (!row) throw runNotFound(runId);
    // Liveness by the clock leases are measured by, read after the lock: the server's on PostgreSQL.
    const clock = db.leaseClock(now);
    // No exception for "this process": a lease belongs to one session, and a live session's lease is never taken,
    // not even by another session of the same process (a second journal.resume while the first still drives).
    if (row.lease_token && leaseIsLive(row, clock, db.dialect.leaseByExpiry)) {
      throw new LogbookError(
        ErrorCodes.LEASE_HELD,
        `Run ${runId} is being driven by ${row.lease_owner ?? 'another process'} (lease epoch ${row.lease_epoch}).`,
        `Wait for it to finish or stop that process; once it is gone, \`logbook resume ${runId}\` takes over.`,
        { runId, owner: row.lease_owner, pid: row.lease_pid },
      );
    }
    // A cancel that landed after the caller's own checks (a resume or an approval racing `logbook cancel`): refused as such.
    if (row.status === 'cancelled' && opts.status !== 'compensating')
      throw new LogbookError(
        ErrorCodes.RUN_NOT_RESUMABLE,
        `Run ${runId} is cancelled; it cannot go forward any more.`,
        `Undo what it did with \`logbook compensate ${runId}\`, or start a new run.`,
        { runId, status: row.status },
      );
    requireTransition(runId, row.status, opts.status);
    const epoch = row.lease_epoch + 1;
    const attempt = opts.newAttempt ? row.attempt + 1 : row.attempt;
    db.prepare(
      `UPDATE runs SET status = ?, attempt = ?, updated_at = ?, lease_token = ?, lease_owner = ?, lease_pid = ?,
         lease_pid_start = ?, lease_host = ?, lease_epoch = ?, lease_expires = ? WHERE id = ?`,
    ).run(opts.status, attempt, now, owner.token, owner.label, owner.pid, owner.pidStart, owner.host, epoch, clock + LEASE_TTL_MS, runId);
    const previous = row.lease_token ? 'dead holder' : 'released';
    db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)').run(
      runId,
      attempt,
      now,
      'run.lease-acquired',
      JSON.stringify({ purpose: opts.purpose, status: opts.status, owner: owner.label, epoch, previousStatus: row.status, previousLease: previous }),
    );
    // A cancel asked while its last holder drove it, which died before it stopped: this session honours it going forward.
    const cancel = opts.status === 'running' && row.cancel_requested ? { cancel: parseCancelRequest(row.cancel_requested) } : {};
    lease = { runId, token: owner.token, epoch, attempt, sentAt, status: opts.status, ...cancel };
  });
  tx.immediate();
  if (!lease) throw runNotFound(runId);
  db.changed(runId);
  return lease;
}
