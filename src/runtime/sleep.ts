// run.sleep: durations ('90s', '15m', '2h', '3d' or ms), and the wait itself, which a cancel or a lost lease cuts short.

import { ErrorCodes, LogbookError } from './errors';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds from a duration: a non-negative number of ms, or a string like '90s', '15m', '2h', '3d', '250ms'. */
export function parseDuration(duration: unknown, what = 'run.sleep'): number {
  if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) return Math.round(duration);
  const m = typeof duration === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(duration) : null;
  if (m?.[1] && m[2]) return Math.round(Number(m[1]) * (UNITS[m[2]] ?? 1));
  throw new LogbookError(
    ErrorCodes.STEP_MISUSE,
    `${what}: ${JSON.stringify(duration)} is not a duration.`,
    "Pass milliseconds (a number, 0 or more) or a string such as '90s', '15m', '2h' or '3d'.",
  );
}

/** How a driving session sleeps: the worker's threshold past which the lease is released, and `resume --now`. */
export interface SleepPolicy {
  /** A sleep with more than this left releases the lease (status `sleeping`); a worker claims the run when it is due. */
  readonly releaseOverMs?: number;
  /** Wake at once from every journaled sleep (`logbook resume --now`). */
  readonly wakeNow?: boolean;
}

/** The longest single timer Node keeps (2^31 − 1 ms); a longer sleep waits in pieces. */
const MAX_TIMER_MS = 2_147_483_647;

/** Waits until `wakeAt` (this machine's clock), or until a signal aborts (a cancel, a lost lease, the host): resolves either way. */
export async function waitUntil(wakeAt: number, signal: AbortSignal, also?: AbortSignal): Promise<void> {
  if (also) return waitUntilEither(wakeAt, signal, also);
  while (!signal.aborted) {
    const left = wakeAt - Date.now();
    if (left <= 0) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(left, MAX_TIMER_MS));
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

async function waitUntilEither(wakeAt: number, a: AbortSignal, b: AbortSignal): Promise<void> {
  const both = new AbortController();
  const abort = (): void => both.abort();
  for (const s of [a, b]) {
    if (s.aborted) return;
    s.addEventListener('abort', abort, { once: true });
  }
  try {
    await waitUntil(wakeAt, both.signal);
  } finally {
    a.removeEventListener('abort', abort);
    b.removeEventListener('abort', abort);
  }
}

/** A sleep's checkpoint (the result of its step): its duration and wake time. Anything else is not a sleep's. */
export interface SleepCheckpoint {
  readonly sleep: number;
  readonly wakeAt: number;
}

export function isSleepCheckpoint(v: unknown): v is SleepCheckpoint {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  const { sleep, wakeAt } = v as Record<string, unknown>;
  return keys.length === 2 && typeof sleep === 'number' && Number.isFinite(sleep) && typeof wakeAt === 'number' && Number.isFinite(wakeAt);
}
