// Watches the process while a run is in flight: a drained event loop (a promise nothing will settle) or a
// process.exit() from the script must end in a clear error, never in a silent exit 0 with the run unfinished.

import { ErrorCodes, LogbookError } from './errors';

export interface ProcessGuard {
  /** Rejects with LB_NEVER_SETTLED when the event loop has nothing left to do while the run is in flight. */
  readonly drained: Promise<never>;
  dispose(): void;
}

export interface GuardOptions {
  readonly runId: string;
  /** What the run is waiting on, for the messages (e.g. `step "wait for webhook"`). */
  readonly waitingOn: () => string;
  readonly log: (line: string) => void;
  /** Synchronous last words when the process exits mid-run: e.g. journal why (better-sqlite3 is synchronous). */
  readonly onExit: (err: LogbookError) => void;
}

export function neverSettled(runId: string, waitingOn: string): LogbookError {
  return new LogbookError(
    ErrorCodes.NEVER_SETTLED,
    `Run ${runId} stopped making progress: ${waitingOn || 'the script'} awaits a promise that nothing can settle any more (no timer, socket or other work is left in the process). Nothing more was executed.`,
    `Find the promise that is never resolved or rejected (a missing resolve() call, an event that never fires) and fix the script, then run \`logbook resume ${runId}\`.`,
    { runId },
  );
}

let exitingOnPurpose = false;

/**
 * Says the process is about to exit on purpose with runs in flight whose leases it has given back (a worker stopping
 * after its grace period): those runs are not interrupted by a script, and the exit code is the host's.
 */
export function exitWithRunsReleased(code: number): never {
  exitingOnPurpose = true;
  process.exit(code);
}

export function guardProcess(o: GuardOptions): ProcessGuard {
  let reject: (err: LogbookError) => void = () => undefined;
  const drained = new Promise<never>((_, rej) => {
    reject = rej;
  });
  // Raced against the script; an unraced rejection must not become an unhandled one.
  drained.catch(() => undefined);
  const onBeforeExit = (): void => reject(neverSettled(o.runId, o.waitingOn()));
  const onExit = (code: number): void => {
    if (exitingOnPurpose) return;
    const where = callerOfExit(new Error().stack ?? '');
    const err = new LogbookError(
      ErrorCodes.SCRIPT_EXITED,
      `The process exited with code ${code}${where ? ` (process.exit called ${where})` : ''} while run ${o.runId} was in flight${o.waitingOn() ? `, in ${o.waitingOn()}` : ''}. The run did not finish; it is resumable.`,
      `Do not call process.exit() in an agent script: return from run() (or throw) instead, then run \`logbook resume ${o.runId}\`.`,
      { runId: o.runId, code },
    );
    try {
      o.onExit(err);
    } catch {
      // The journal may be unusable; the message below still says what happened.
    }
    o.log(`error [${err.code}] ${err.message}`);
    if (code === 0) process.exitCode = 1;
  };
  process.on('beforeExit', onBeforeExit);
  process.on('exit', onExit);
  return {
    drained,
    dispose: () => {
      process.off('beforeExit', onBeforeExit);
      process.off('exit', onExit);
    },
  };
}

/** The first stack frame outside Node's internals and this file: where process.exit was called. */
function callerOfExit(stack: string): string | undefined {
  const frames = stack
    .split('\n')
    .slice(1)
    .map((l) => l.trim());
  const i = frames.findIndex((f) => /\bprocess\.exit\b|at exit \(/.test(f));
  const frame = i >= 0 ? frames[i + 1] : undefined;
  return frame ? frame.replace(/^at /, 'at ') : undefined;
}
