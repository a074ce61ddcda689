// Who holds a run's lease: this process's identity, and whether a recorded holder is still alive.

import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomUUID } from 'node:crypto';

export interface Owner {
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

let self: Owner | undefined;

export function currentOwner(role: string): Owner {
  if (!self || !self.label.endsWith(`(${role})`)) {
    self = {
      token: randomUUID(),
      pid: process.pid,
      pidStart: processStartTime(process.pid),
      host: os.hostname(),
      label: `pid ${process.pid} on ${os.hostname()} (${role})`,
    };
  }
  return self;
}

export interface LeaseFields {
  lease_token: string | null;
  lease_pid: number | null;
  lease_pid_start: string | null;
  lease_host: string | null;
  lease_expires: number | null;
}

/**
 * A lease is live while its holder exists. On this host that is decided by the process itself (same pid and start
 * time, not a zombie), even past expiry: a process stuck in a long effect must not be raced by a second driver.
 * A holder on another host is trusted until the lease expires.
 */
export function leaseIsLive(l: LeaseFields, now: number): boolean {
  if (!l.lease_token || l.lease_expires === null) return false;
  if (l.lease_host !== os.hostname() || l.lease_pid === null) return l.lease_expires > now;
  try {
    process.kill(l.lease_pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartTime(l.lease_pid);
  if (start === null) return !fs.existsSync('/proc/self/stat') && l.lease_expires > now;
  if (l.lease_pid_start !== null && start !== l.lease_pid_start) return false;
  return !isZombie(l.lease_pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
