// The work queue on the journal: runs recorded as queued, the claim a worker makes (queued or lease expired), workers seen.

import type { Db } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import type { JournalReader } from './reader';
import { LEASE_TTL_MS, type Lease } from './writer';
import { holderOnThisNode, type Owner } from './owner';
import type { RunRow } from './rows';
import { monoNow } from './leaseClock';
import { requireTransition } from './transitions';
import { parseCancelRequest } from './cancelRequest';
import { CHILD_WAIT_PREFIX, childOfWait } from '../childWait';

export interface QueuedRun {
  readonly id: string;
  readonly agent: string;
  readonly script: string;
  readonly scriptVersion: string;
  readonly input: string | null;
  /** The caller's W3C trace context, journaled as a trace.context event so the worker's spans join the caller's trace. */
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string };
}

/** Records a run for a worker to start: no lease, attempt 0 (the claim makes it 1). */
export function enqueueRun(db: Db, reader: JournalReader, run: QueuedRun): void {
  const now = Date.now();
  const exists = (): LogbookError =>
    new LogbookError(ErrorCodes.RUN_EXISTS, `A run with id ${run.id} already exists.`, 'Pick another --run-id, or leave it out for a generated one.', {
      runId: run.id,
    });
  const tx = db.transaction(() => {
    if (reader.run(run.id)) throw exists();
    db.prepare(
      `INSERT INTO runs (id, agent, script, script_version, input, status, attempt, created_at, updated_at, lease_epoch)
       VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?, 0)`,
    ).run(run.id, run.agent, run.script, run.scriptVersion, run.input, now, now);
    db.prepare("INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, 0, ?, 'run.queued', ?)").run(
      run.id,
      now,
      JSON.stringify({ agent: run.agent, script: run.script, scriptVersion: run.scriptVersion }),
    );
    if (run.traceContext)
      db.prepare("INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, 0, ?, 'trace.context', ?)").run(
        run.id,
        now,
        JSON.stringify(run.traceContext),
      );
  });
  try {
    tx.immediate();
  } catch (err) {
    // Two processes queueing the same id at once on PostgreSQL: the loser meets the winner's primary key.
    if ((err as { code?: unknown }).code === '23505') throw exists();
    throw err;
  }
  db.changed(run.id);
}

/** An agent and script version a worker can drive. */
export interface Known {
  readonly agent: string;
  readonly version: string;
}

/** What the claimed run needs next: its first attempt, a resume, or the rest of its compensation. */
export type ClaimKind = 'start' | 'resume' | 'compensate';

export interface Claimed {
  readonly lease: Lease;
  readonly kind: ClaimKind;
  readonly row: RunRow;
}

/**
 * Queued runs, and runs left running or compensating whose lease was released or expired: what a worker may take. A
 * sleeping or waiting run is due by its wake time (a wait's timeout) on the clock that wrote it (Date.now(), ms; the
 * first `?` is the claimer's); a waiting one (or one awaiting approval) also once an event it can take is in its inbox.
 * A parent waiting for its child's event (childWait.ts) is claimed once the child no longer waits: its event came, it
 * was resumed or cancelled; the parent then re-attaches to it (waits for it, or resumes it).
 */
const CLAIMABLE = `(status = 'queued' OR (status IN ('sleeping', 'waiting') AND wake_at <= ?) OR (status IN ('running', 'compensating') AND (lease_token IS NULL OR lease_expires < ?)) OR (status IN ('waiting', 'awaiting-approval') AND EXISTS (SELECT 1 FROM inbox WHERE inbox.run_id = runs.id AND inbox.name = runs.waiting_for AND inbox.status = 'pending' AND (runs.wake_at IS NULL OR inbox.sent_at <= runs.wake_at))) OR (status = 'waiting' AND waiting_for LIKE '${CHILD_WAIT_PREFIX}%' AND EXISTS (SELECT 1 FROM runs kid WHERE kid.parent_id = runs.id AND runs.waiting_for = '${CHILD_WAIT_PREFIX}' || kid.id AND kid.status <> 'waiting')))`;

function knownClause(known: readonly Known[]): { sql: string; params: string[] } {
  return { sql: known.map(() => '(agent = ? AND script_version = ?)').join(' OR '), params: known.flatMap((k) => [k.agent, k.version]) };
}

/**
 * Claims one run in one transaction: picks the oldest claimable run of a known agent and version (PostgreSQL: FOR UPDATE
 * SKIP LOCKED, so workers claiming at once take different runs; SQLite: BEGIN IMMEDIATE serialises them), and takes its
 * lease (a new epoch, so the writer that held it before is fenced out) before the transaction commits. Expiry is judged
 * by the clock leases are measured by: the server's on PostgreSQL.
 */
export function claimRun(
  db: Db,
  reader: JournalReader,
  owner: Owner,
  known: readonly Known[],
  ttlMs = LEASE_TTL_MS,
  skip: ReadonlySet<string> = new Set(),
): Claimed | undefined {
  if (known.length === 0) return undefined;
  let claimed: Claimed | undefined;
  const k = knownClause(known);
  // Runs this worker found damaged (LB_JOURNAL_INVALID) and gave back: passed over, or it would claim them again at once.
  const passOver = skip.size ? ` AND id NOT IN (${[...skip].map(() => '?').join(', ')})` : '';
  const pick = db.prepare(`SELECT id FROM runs WHERE ${CLAIMABLE} AND (${k.sql})${passOver} ORDER BY created_at, id LIMIT 1${db.dialect.claimLock}`);
  const sentAt = monoNow();
  const tx = db.transaction(() => {
    const now = Date.now();
    const clock = db.leaseClock(now);
    const picked = pick.get(now, clock, ...k.params, ...skip) as { id: string } | undefined;
    if (!picked) return;
    const row = reader.run(picked.id);
    if (!row) return;
    const kind: ClaimKind = row.status === 'queued' ? 'start' : row.status === 'compensating' ? 'compensate' : 'resume';
    const epoch = row.lease_epoch + 1;
    const attempt = row.attempt + 1;
    const status = kind === 'compensate' ? 'compensating' : 'running';
    requireTransition(row.id, row.status, status);
    const taken = db
      .prepare(
        `UPDATE runs SET status = ?, attempt = ?, updated_at = ?, lease_token = ?, lease_owner = ?, lease_pid = ?, lease_pid_start = ?,
           lease_host = ?, lease_epoch = ?, lease_expires = ? WHERE id = ? AND lease_epoch = ?`,
      )
      .run(status, attempt, now, owner.token, owner.label, owner.pid, owner.pidStart, owner.host, epoch, clock + ttlMs, row.id, row.lease_epoch);
    if (taken.changes !== 1) return;
    const data =
      kind === 'start'
        ? { agent: row.agent, script: row.script, owner: owner.label, epoch, queued: true }
        : {
            purpose: `${kind} (claimed by a worker)`,
            status,
            owner: owner.label,
            epoch,
            previousStatus: row.status,
            previousLease:
              row.status === 'sleeping'
                ? 'asleep until due'
                : row.status === 'waiting' || row.status === 'awaiting-approval'
                  ? `waiting for ${row.waiting_for ?? 'an event'}: it came, or the wait timed out`
                  : row.lease_token
                    ? 'expired'
                    : 'released',
          };
    db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)').run(
      row.id,
      attempt,
      now,
      kind === 'start' ? 'run.started' : 'run.lease-acquired',
      JSON.stringify(data),
    );
    const cancel = status === 'running' && row.cancel_requested ? { cancel: parseCancelRequest(row.cancel_requested) } : {};
    claimed = { kind, lease: { runId: row.id, token: owner.token, epoch, attempt, sentAt, status, ...cancel }, row };
  });
  tx.immediate();
  if (claimed) db.changed(claimed.lease.runId);
  return claimed;
}

/** Gives a lease back without changing the run's status: the run stays resumable and the next worker claims it at once. */
export function releaseLease(db: Db, lease: Lease): boolean {
  const r = db
    .prepare('UPDATE runs SET lease_token = NULL, lease_expires = NULL WHERE id = ? AND lease_token = ? AND lease_epoch = ?')
    .run(lease.runId, lease.token, lease.epoch);
  db.changed(lease.runId);
  return r.changes === 1;
}

// ---- workers seen: so `logbook ls` can say why a run waits -------------------------------------------------------

export interface WorkerInfo {
  readonly name: string;
  readonly owner: string;
  /** The lease host column's form (hostname, boot id, pid namespace) and the pid: a dead worker on this node is not counted. */
  readonly host: string;
  readonly pid: number;
  readonly agents: readonly (Known & { readonly script: string })[];
}

/** How long a worker's row counts as live after its last heartbeat. */
export const WORKER_SEEN_MS = 15_000;

export function recordWorker(db: Db, w: WorkerInfo): void {
  const now = Date.now();
  db.prepare(
    `INSERT INTO workers (name, owner, host, pid, agents, started_at, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid, agents = excluded.agents, seen_at = excluded.seen_at`,
  ).run(w.name, w.owner, w.host, w.pid, JSON.stringify(w.agents), now, now);
}

export function forgetWorker(db: Db, name: string, owner: string): void {
  db.prepare('DELETE FROM workers WHERE name = ? AND owner = ?').run(name, owner);
}

function liveWorkers(db: Db, now: number): WorkerInfo[] {
  let rows: { name: unknown; owner: unknown; host: unknown; pid: unknown; agents: unknown }[];
  try {
    rows = db.prepare('SELECT name, owner, host, pid, agents FROM workers WHERE seen_at > ? ORDER BY name').all(now - WORKER_SEEN_MS) as typeof rows;
  } catch {
    return []; // a journal from before workers (opened read-only, so not migrated)
  }
  return rows.flatMap((r) => {
    if (typeof r.name !== 'string' || typeof r.owner !== 'string' || typeof r.host !== 'string' || typeof r.pid !== 'number' || typeof r.agents !== 'string')
      return [];
    // Killed on this node: gone now, even if its last heartbeat is recent.
    if (holderOnThisNode(r.host) && !processAlive(r.pid)) return [];
    try {
      const agents = JSON.parse(r.agents) as WorkerInfo['agents'];
      return Array.isArray(agents) ? [{ name: r.name, owner: r.owner, host: r.host, pid: r.pid, agents }] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Why a run that a worker could take is still waiting, in words for `logbook ls`; undefined for runs no worker takes
 * (done, held, waiting for a person).
 */
export function waitingReason(db: Db, row: RunRow, leaseLive: boolean): string | undefined {
  if (row.status === 'sleeping') {
    const at = row.wake_at ?? 0;
    return `sleeping until ${new Date(at).toISOString()}${at <= Date.now() ? ' (due: a worker wakes it, or `logbook resume`)' : ''}`;
  }
  if (row.status === 'waiting') {
    const at = row.wake_at ?? null;
    const until =
      at === null ? ' (no timeout)' : ` until ${new Date(at).toISOString()}${at <= Date.now() ? ' (timed out: a worker goes on, or `logbook resume`)' : ''}`;
    const kid = childOfWait(row.waiting_for);
    if (kid === undefined) return `waiting for event ${JSON.stringify(row.waiting_for ?? '?')}${until}`;
    const leaf = waitingLeaf(db, row);
    const what = leaf ? `, which waits for event ${JSON.stringify(leaf.event)}${leaf.runId === kid ? '' : ` (in run ${leaf.runId})`}` : '';
    return `waiting for child run ${kid}${what}${until}`;
  }
  const queued = row.status === 'queued';
  const takeable = queued || ((row.status === 'running' || row.status === 'compensating') && !leaseLive);
  if (!takeable) return undefined;
  const now = Date.now();
  const workers = liveWorkers(db, now);
  // An interrupted run with no worker about is a developer's: `logbook resume` is the way on, and `ls` says so already.
  if (!queued && workers.length === 0) return undefined;
  const version = row.script_version ?? null;
  if (version === null) return 'no worker takes it: it was started without a script version; resume it with `logbook resume`';
  const short = version.slice(0, 8);
  const clock = db.leaseClock(now);
  if (!queued && row.lease_token !== null && row.lease_expires !== null && row.lease_expires > clock) {
    return `its holder is gone; a worker takes it when the lease expires (in ${Math.ceil((row.lease_expires - clock) / 1000)} s)`;
  }
  if (workers.length === 0) return `no worker is running: start one with \`logbook worker --scripts <folder with ${row.agent} ${short}>\``;
  const same = workers.filter((w) => w.agents.some((a) => a.agent === row.agent && a.version === version));
  if (same.length > 0) return `waits for a free worker (${same.map((w) => w.name).join(', ')} ha${same.length === 1 ? 's' : 've'} ${row.agent} ${short})`;
  const others = workers.flatMap((w) => w.agents.filter((a) => a.agent === row.agent).map((a) => `${w.name} has ${a.version.slice(0, 8)}`));
  if (others.length > 0) return `no worker has version ${short} of ${row.agent} (${others.join(', ')}): start one with the script this run was queued with`;
  return `no running worker has agent ${row.agent} (workers: ${workers.map((w) => w.name).join(', ')})`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * The run at the end of a chain of parents waiting for their children (childWait.ts), and the event it waits for; the
 * row itself when it waits for an event of its own; undefined when the chain ends elsewhere (the child moved on).
 */
export function waitingLeaf(db: Db, row: RunRow): { readonly runId: string; readonly event: string } | undefined {
  const byId = db.prepare('SELECT status, waiting_for FROM runs WHERE id = ?');
  let at: { id: string; status: string; waiting_for?: string | null | undefined } = row;
  // A chain longer than this is a damaged journal (a cycle of waits): nothing is claimed of it.
  for (let depth = 0; depth < 64; depth++) {
    if (at.status !== 'waiting' || at.waiting_for == null) return undefined;
    const kid = childOfWait(at.waiting_for);
    if (kid === undefined) return { runId: at.id, event: at.waiting_for };
    const next = byId.get(kid) as { status: unknown; waiting_for: unknown } | undefined;
    if (!next || typeof next.status !== 'string') return undefined;
    at = { id: kid, status: next.status, waiting_for: typeof next.waiting_for === 'string' ? next.waiting_for : null };
  }
  return undefined;
}
