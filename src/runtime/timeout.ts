// A deadline for calls into the outside world that must not hang a reconciliation (verify).

import { ErrorCodes, LogbookError } from './errors';

export const VERIFY_TIMEOUT_MS = 30_000;

/**
 * Settles like `value`, or rejects with `onTimeout()` after `ms`. The timer is referenced on purpose: it keeps the
 * process alive until the deadline, so a verify that never settles ends in a timeout, not a drained event loop.
 */
export async function withTimeout<T>(value: T | Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([Promise.resolve(value), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function verifyTimedOut(a: { readonly type: string; readonly id: string }, runId: string, ms: number): LogbookError {
  return new LogbookError(
    ErrorCodes.VERIFY_TIMEOUT,
    `verify of ${a.type} ${a.id} did not answer within ${ms} ms. The action is still in doubt and nothing was executed.`,
    `Check the system verify asks (or raise verifyTimeoutMs on the action), then run \`logbook resume ${runId}\` again, or decide with --decide ${a.id}=happened|not-happened.`,
    { actionId: a.id, timeoutMs: ms },
  );
}
