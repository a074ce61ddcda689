// Who holds a run's lease: this process's identity, and whether a recorded holder is still alive.

import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomUUID } from 'node:crypto';

/** One driving session of one process: what a lease records, and what LB_LEASE_HELD names. */
export interface Owner {
  /** Fresh for every session (beginSession): two sessions of one process never share it. */
  readonly token: string;
  readonly pid: number;
  readonly pidStart: string | null;
  readonly host: string;
  readonly label: string;
}

/** The kernel's start time of a process (jiffies since boot), so a reused pid is not mistaken for the holder. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const afterComm = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return afterComm[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * This process's node: the kernel's boot id and its pid namespace. Two containers can share a volume and a hostname
 * and still not see each other's pids; a pid is only meaningful where both are equal. Undefined off Linux.
 */
export function currentNode(): string | undefined {
  try {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const ns = /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1];
    return boot && ns ? `boot=${boot} pidns=${ns}` : undefined;
  } catch {
    return undefined;
  }
}

/** The lease's host column: `hostname boot=<id> pidns=<inode>` where the node is known, else the bare hostname. */
export function hostField(hostname: string, node: string | undefined): string {
  return node ? `${hostname} ${node}` : hostname;
}

const NODE_IN_HOST = / (boot=\S+ pidns=\d+)$/;

/**
 * Whether a lease recorded with this host column names a pid of this process's own node, so its liveness can be
 * asked of the kernel. A lease from another boot or another pid namespace, even under the same hostname, cannot be.
 * A column without a node (written off Linux, or by an older Logbook) falls back to comparing hostnames.
 */
export function holderOnThisNode(leaseHost: string | null, here: string | undefined = currentNode(), hostname = os.hostname()): boolean {
  if (leaseHost === null) return false;
  const m = NODE_IN_HOST.exec(leaseHost);
  if (!m) return here === undefined && leaseHost === hostname;
  return m[1] === here && leaseHost.slice(0, m.index) === hostname;
}

/**
 * The tokens of this process's driving sessions that are still live. A lease belongs to one driving session (one
 * start, resume, compensation, approval or worker claim), never to the process: a second driver in the same process
 * is refused like one in another process, and a lease recorded with this process's pid whose session ended without
 * releasing it (its release failed) is known here to be dead, instead of live for as long as the process lives.
 */
// On globalThis, as the action registry is: a second copy of the runtime in this process (a script that bundled its
// own) must see this copy's sessions as live, not as dead leases of its own pid that it may take over.
const SESSIONS_KEY = Symbol.for('agent-logbook.live-sessions');
const sessionGlobals = globalThis as { [SESSIONS_KEY]?: Set<string> };
const liveSessions = (sessionGlobals[SESSIONS_KEY] ??= new Set<string>());

let startOfSelf: { readonly pid: number; readonly start: string | null } | undefined;

/** This process's start time, read once per pid (the checker's simulated processes each take a pid of their own). */
function selfStart(): string | null {
  if (startOfSelf?.pid !== process.pid) startOfSelf = { pid: process.pid, start: processStartTime(process.pid) };
  return startOfSelf.start;
}

/** This process as a lease holder, without a session: the identity a worker records for `ls`. */
export function processOwner(role: string): Omit<Owner, 'token'> {
  return { pid: process.pid, pidStart: selfStart(), host: hostField(os.hostname(), currentNode()), label: `pid ${process.pid} on ${os.hostname()} (${role})` };
}

/** A new driving session of this process: a fresh token, live until `endSession`. Its label names the session. */
export function beginSession(role: string): Owner {
  const token = randomUUID();
  const p = processOwner(role);
  liveSessions.add(token);
  return { ...p, token, label: `${p.label} session ${token.slice(0, 8)}` };
}

/** The session is over (its lease released, or given up): a lease it left behind is dead from now on. Idempotent. */
export function endSession(token: string): void {
  liveSessions.delete(token);
}

/**
 * Takes a lease for a new session: `take` writes it (createRun, acquireRun, claimRun). A refusal, or nothing to take,
 * ends the session at once; otherwise the driver ends it when it lets the lease go.
 */
export function withNewSession<T>(role: string, take: (owner: Owner) => T): T {
  const owner = beginSession(role);
  try {
    const taken = take(owner);
    if (taken === undefined) endSession(owner.token);
    return taken;
  } catch (err) {
    endSession(owner.token);
    throw err;
  }
}

/** Whether the lease was written by this very process (same node, pid and start time): then its session decides. */
function heldByThisProcess(l: LeaseFields): boolean {
  if (l.lease_pid !== process.pid || !holderOnThisNode(l.lease_host)) return false;
  const start = selfStart();
  return l.lease_pid_start === null || start === null || l.lease_pid_start === start;
}

export interface LeaseFields {
  lease_token: string | null;
  lease_pid: number | null;
  lease_pid_start: string | null;
  lease_host: string | null;
  lease_expires: number | null;
}

/**
 * A lease is live while its holder exists. A lease of this very process is live while the session that took it
 * drives. On this node (same boot, same pid namespace) that is decided by the process itself (same pid and start
 * time, not a zombie), even past expiry: a process stuck in a long effect must not be raced by a second driver. A
 * holder whose pid cannot be asked about here (another host, another container with the same hostname, another boot)
 * is never assumed dead: it is trusted until its lease expires. `byExpiry` (shared journals) makes the expiry decide
 * everywhere.
 */
export function leaseIsLive(l: LeaseFields, now: number, byExpiry = false): boolean {
  if (!l.lease_token || l.lease_expires === null) return false;
  // This process knows its own sessions: live while the session drives (a shared journal still lets it expire). A
  // token of this pid that this copy of the runtime does not know may be a session of another worker thread (each has
  // its own globals): its heartbeat keeps it live, so only its expiry shows it dead, never the registry's silence.
  if (heldByThisProcess(l)) {
    if (liveSessions.has(l.lease_token)) return !byExpiry || l.lease_expires > now;
    return l.lease_expires > now;
  }
  if (!holderOnThisNode(l.lease_host) || l.lease_pid === null) return l.lease_expires > now;
  // A shared journal (PostgreSQL): the expiry decides; a holder's pid on this node only shows it dead sooner. A holder
  // stopped (SIGSTOP) or stuck past its expiry is not trusted: another machine may already be taking the run over.
  if (byExpiry) return l.lease_expires > now && holderProcessAlive(l, l.lease_pid, now);
  return holderProcessAlive(l, l.lease_pid, now);
}

function holderProcessAlive(l: LeaseFields, pid: number, now: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartTime(pid);
  if (start === null) return !fs.existsSync('/proc/self/stat') && l.lease_expires !== null && l.lease_expires > now;
  if (l.lease_pid_start !== null && start !== l.lease_pid_start) return false;
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
