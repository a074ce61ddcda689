// A lease by this process's own clock: trusted from the last renewal the journal acknowledged, timed when its request
// was SENT (the expiry it set is later than that), for the TTL minus a margin, and not a moment longer, whatever
// timers and messages have yet to run (after a SIGSTOP, a paused VM, a long GC, the overdue ones run first).

import { leaseTtlMs } from './db';

/**
 * Microseconds on the monotonic clock (CLOCK_MONOTONIC): the same in every thread of the process, and unmoved by
 * wall-clock changes. As a BigInt, so a thread can publish it with Atomics.
 */
export function monoMicros(): bigint {
  return process.hrtime.bigint() / 1000n;
}

/** Milliseconds on the same clock. */
export function monoNow(): number {
  return Number(monoMicros()) / 1000;
}

/**
 * What is kept back from the TTL: room for the time a healthy process takes from its last check to its request
 * leaving, and for the server's clock running a little fast. A tenth of the lease (3 s of the default 30 s), at least 50 ms.
 */
export function leaseMarginMs(ttlMs = leaseTtlMs()): number {
  return Math.max(50, Math.floor(ttlMs / 10));
}
