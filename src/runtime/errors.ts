// The error taxonomy: every failure a user can meet has a stable code, and its message ends with the remedy.

import { SecretMask } from '../shared/secrets';

/**
 * Process exit codes of the CLI, one meaning each. `busy`: another live process drives the run; try again when it ends.
 * `storage`: the journal's storage failed (locked, full, read-only, damaged) or holds a damaged value (LB_JOURNAL_INVALID);
 * the run is resumable once it is fixed.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, waiting: 3, busy: 4, storage: 5 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

interface CodeRow {
  /** The stable code users and tools match on. */
  readonly code: `LB_${string}`;
  /** What a command that stops on this error exits with. */
  readonly exit: ExitCode;
  /** The script or its journal is wrong, not the world: a run that fails on it is never auto-compensated. */
  readonly scriptBug?: true;
}

/** One row per code; everything else (ErrorCodes, exit codes, which errors are script bugs) derives from it. */
const CODES = {
  SCRIPT_NOT_FOUND: { code: 'LB_SCRIPT_NOT_FOUND', exit: EXIT.usage },
  SCRIPT_LOAD_FAILED: { code: 'LB_SCRIPT_LOAD_FAILED', exit: EXIT.usage },
  NO_DEFAULT_AGENT: { code: 'LB_NO_DEFAULT_AGENT', exit: EXIT.usage },
  INVALID_INPUT: { code: 'LB_INVALID_INPUT', exit: EXIT.usage },
  INVALID_ARGS: { code: 'LB_INVALID_ARGS', exit: EXIT.usage, scriptBug: true },
  INVALID_DEFINITION: { code: 'LB_INVALID_DEFINITION', exit: EXIT.usage, scriptBug: true },
  NOT_JSON: { code: 'LB_NOT_JSON', exit: EXIT.usage, scriptBug: true },
  KEY_CONFLICT: { code: 'LB_KEY_CONFLICT', exit: EXIT.usage, scriptBug: true },
  NONDETERMINISM: { code: 'LB_NONDETERMINISM', exit: EXIT.usage, scriptBug: true },
  STEP_MISUSE: { code: 'LB_STEP_MISUSE', exit: EXIT.usage, scriptBug: true },
  ACTION_OUTSIDE_STEP: { code: 'LB_ACTION_OUTSIDE_STEP', exit: EXIT.usage, scriptBug: true },
  UNKNOWN_ACTION_TYPE: { code: 'LB_UNKNOWN_ACTION_TYPE', exit: EXIT.usage },
  DB_CORRUPT: { code: 'LB_DB_CORRUPT', exit: EXIT.usage },
  DB_TOO_NEW: { code: 'LB_DB_TOO_NEW', exit: EXIT.usage },
  DB_OPEN_FAILED: { code: 'LB_DB_OPEN_FAILED', exit: EXIT.usage },
  DB_DURABILITY: { code: 'LB_DB_DURABILITY', exit: EXIT.usage },
  /**
   * A journaled value or row read back that is not what was written (not JSON, or not the shape the runtime wrote):
   * edited by hand or damaged. A journal failure like the storage ones: never the script's failure, no declared policy.
   */
  JOURNAL_INVALID: { code: 'LB_JOURNAL_INVALID', exit: EXIT.storage },
  /**
   * A status change the transition table (policy.ts, RUN_TRANSITIONS) does not allow: a bug in Logbook, refused before
   * it is written. A journal failure like the storage ones: nothing more is written and no declared policy fires.
   */
  ILLEGAL_TRANSITION: { code: 'LB_ILLEGAL_TRANSITION', exit: EXIT.storage },
  LEASE_HELD: { code: 'LB_LEASE_HELD', exit: EXIT.busy },
  LEASE_LOST: { code: 'LB_LEASE_LOST', exit: EXIT.busy },
  RUN_NOT_FOUND: { code: 'LB_RUN_NOT_FOUND', exit: EXIT.usage },
  RUN_EXISTS: { code: 'LB_RUN_EXISTS', exit: EXIT.usage },
  RUN_NOT_RESUMABLE: { code: 'LB_RUN_NOT_RESUMABLE', exit: EXIT.usage },
  /** `logbook cancel` of a run that has ended (completed, compensated, cancelled) or is being compensated: nothing changed. */
  RUN_NOT_CANCELLABLE: { code: 'LB_RUN_NOT_CANCELLABLE', exit: EXIT.usage },
  /** ctx.signal's reason once the run is cancelled: the run stops at its next boundary. */
  RUN_CANCELLED: { code: 'LB_RUN_CANCELLED', exit: EXIT.failed },
  ACTION_NOT_FOUND: { code: 'LB_ACTION_NOT_FOUND', exit: EXIT.usage },
  /** `logbook send` (journal.send) to a run that has ended (completed, cancelled, compensated): nothing was written. */
  EVENT_REFUSED: { code: 'LB_EVENT_REFUSED', exit: EXIT.usage },
  APPROVAL_REJECTED: { code: 'LB_APPROVAL_REJECTED', exit: EXIT.usage },
  BAD_DECISION: { code: 'LB_BAD_DECISION', exit: EXIT.usage },
  VERIFY_FAILED: { code: 'LB_VERIFY_FAILED', exit: EXIT.usage, scriptBug: true },
  COMPENSATE_FAILED: { code: 'LB_COMPENSATE_FAILED', exit: EXIT.usage },
  ACTION_FAILED: { code: 'LB_ACTION_FAILED', exit: EXIT.usage },
  VERSION_CHANGED: { code: 'LB_VERSION_CHANGED', exit: EXIT.usage, scriptBug: true },
  BAD_CRASH_SPEC: { code: 'LB_BAD_CRASH_SPEC', exit: EXIT.usage },
  USAGE: { code: 'LB_USAGE', exit: EXIT.usage },
  TRACE_EXPORT: { code: 'LB_TRACE_EXPORT', exit: EXIT.usage },
  NATIVE_UNSUPPORTED: { code: 'LB_NATIVE_UNSUPPORTED', exit: EXIT.usage },
  BAD_LAUNCH_CONFIG: { code: 'LB_BAD_LAUNCH_CONFIG', exit: EXIT.usage },
  WRONG_NODE: { code: 'LB_WRONG_NODE', exit: EXIT.usage },
  REHEARSAL_BASELINE: { code: 'LB_REHEARSAL_BASELINE', exit: EXIT.usage },
  /** A name, key or type holds half of a UTF-16 surrogate pair, which SQLite's text cannot store exactly. */
  LONE_SURROGATE: { code: 'LB_LONE_SURROGATE', exit: EXIT.usage, scriptBug: true },
  NUL_CHARACTER: { code: 'LB_NUL_CHARACTER', exit: EXIT.usage, scriptBug: true },
  /** The script's promises stopped settling: nothing is left for the event loop to do, but the run is unfinished. */
  NEVER_SETTLED: { code: 'LB_NEVER_SETTLED', exit: EXIT.failed, scriptBug: true },
  /** The agent script called process.exit() while its run was in flight. */
  SCRIPT_EXITED: { code: 'LB_SCRIPT_EXITED', exit: EXIT.failed, scriptBug: true },
  VERIFY_TIMEOUT: { code: 'LB_VERIFY_TIMEOUT', exit: EXIT.failed, scriptBug: true },
  /** Another connection kept the journal's write lock past the busy timeout. */
  DB_BUSY: { code: 'LB_DB_BUSY', exit: EXIT.storage },
  DB_DISK_FULL: { code: 'LB_DB_DISK_FULL', exit: EXIT.storage },
  DB_READONLY: { code: 'LB_DB_READONLY', exit: EXIT.storage },
  DB_EMPTY: { code: 'LB_DB_EMPTY', exit: EXIT.usage },
  /** Any other I/O error of the journal (a corrupt page found mid-run, EIO). */
  DB_IO: { code: 'LB_DB_IO', exit: EXIT.storage },
  /** The PostgreSQL journal's server cannot be reached, or went away mid-run (refused, reset, shut down, timed out). */
  DB_UNREACHABLE: { code: 'LB_DB_UNREACHABLE', exit: EXIT.storage },
  /** The PostgreSQL server refused the connection's role, password or database. */
  DB_AUTH: { code: 'LB_DB_AUTH', exit: EXIT.storage },
  /** A --crash-at spec that names an action type the loaded script does not define. */
  CRASH_TARGET_UNKNOWN: { code: 'LB_CRASH_TARGET_UNKNOWN', exit: EXIT.usage },
  /** A journaled model call's parameters (prompt, tools, settings) changed since it was recorded. */
  MODEL_DRIFT: { code: 'LB_MODEL_DRIFT', exit: EXIT.failed, scriptBug: true },
  /** run.child's error when the child run failed, was cancelled or compensated: it names the child's run id. */
  CHILD_FAILED: { code: 'LB_CHILD_FAILED', exit: EXIT.failed },
} as const satisfies Record<string, CodeRow>;

type Codes = typeof CODES;
export const ErrorCodes = Object.fromEntries(Object.entries(CODES).map(([k, v]) => [k, v.code])) as { readonly [K in keyof Codes]: Codes[K]['code'] };
export type ErrorCode = Codes[keyof Codes]['code'];

const BY_CODE = new Map<string, CodeRow>(Object.values(CODES).map((r: CodeRow) => [r.code, r]));

/** The exit code of a command that stops on a LogbookError with this code. */
export function exitCodeOf(code: ErrorCode): ExitCode {
  return BY_CODE.get(code)?.exit ?? EXIT.usage;
}

/** True for codes that mean the journal's storage failed (the rows that exit EXIT.storage): never the script's failure. */
export function isStorageCode(code: string): boolean {
  return BY_CODE.get(code)?.exit === EXIT.storage;
}

/** True for codes that mean the script or journal is wrong (see CodeRow.scriptBug). */
export function isScriptBugCode(code: string): boolean {
  return BY_CODE.get(code)?.scriptBug === true;
}

/** Base class of every error Logbook raises on purpose. `remedy` is also the message's last sentence. */
export class LogbookError extends Error {
  readonly code: ErrorCode;
  readonly remedy: string;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, problem: string, remedy: string, details: Record<string, unknown> = {}) {
    super(`${problem} ${remedy}`);
    this.name = 'LogbookError';
    this.code = code;
    this.remedy = remedy;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** Thrown inside the script when a person rejected an approval gate. */
export class ApprovalRejectedError extends LogbookError {
  constructor(actionType: string, actionId: string, reason: string | undefined) {
    super(
      ErrorCodes.APPROVAL_REJECTED,
      `Approval for ${actionType} ${actionId} was rejected${reason ? `: ${reason}` : ''}.`,
      'Catch ApprovalRejectedError in the script to take another path, or compensate the run with `logbook compensate`.',
      { actionType, actionId, reason },
    );
    this.name = 'ApprovalRejectedError';
  }
}

/**
 * What `run.child` throws when the child run ended without its output: it failed (its error is `childError`), was
 * cancelled, or was compensated. `childRunId` names the child, so `logbook show` finds it.
 */
export class ChildRunFailedError extends LogbookError {
  constructor(
    parentRunId: string,
    childRunId: string,
    agent: string,
    status: string,
    childError: { readonly name: string; readonly message: string; readonly code?: string } | undefined,
  ) {
    const what = status === 'failed' ? `failed: ${(childError?.message ?? 'no error was journaled').replace(/\.$/, '')}` : `is ${status}, so it has no output`;
    super(
      ErrorCodes.CHILD_FAILED,
      `Child run ${childRunId} (agent ${agent}) ${what}.`,
      status === 'failed'
        ? `Catch ChildRunFailedError in the parent to take another path, or fix the cause and run \`logbook resume ${parentRunId}\`: it resumes the child.`
        : `See it with \`logbook show ${childRunId}\`; catch ChildRunFailedError in the parent to take another path.`,
      { parentRunId, childRunId, agent, status, ...(childError ? { childError: { ...childError } } : {}) },
    );
    this.name = 'ChildRunFailedError';
  }

  /** The child run's id (also in `details`, so a replayed error has it too). */
  get childRunId(): string {
    return String(this.details.childRunId);
  }

  /** How the child ended: `failed`, `cancelled`, `compensated`, … */
  get childStatus(): string {
    return String(this.details.status);
  }
}

/**
 * Public for scripts: an action's `execute` may throw it to say the outside system refused. The runtime never throws
 * it and gives it no special meaning: like any error from execute, the action is journaled `failed` and the error
 * reaches the step.
 */
export class ActionFailedError extends LogbookError {
  constructor(actionType: string, actionId: string, cause: unknown) {
    super(
      ErrorCodes.ACTION_FAILED,
      `Action ${actionType} ${actionId} failed: ${describe(cause)}.`,
      'Fix the cause and run `logbook resume <run-id>`: the action runs again with the same idempotency key.',
      { actionType, actionId },
    );
    this.name = 'ActionFailedError';
    this.cause = cause;
  }
}

const DEFINITE = Symbol.for('agent-logbook.definite-failure');

/**
 * Thrown by an action's `execute` to say the outside system refused the effect, so it did not happen (a 4xx, a declined
 * card): the action is journaled `failed` and the next attempt executes it again with the same key. Any other error from a
 * non-idempotent action leaves it in doubt. Recognised by a registered symbol, so a second copy of the runtime agrees.
 */
export class DefiniteFailure extends Error {
  readonly [DEFINITE] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DefiniteFailure';
  }
}

/** True for an error that proves the effect did not happen: a DefiniteFailure (from any copy of the runtime) or an ActionFailedError. */
export function isDefiniteFailure(err: unknown): boolean {
  return err instanceof ActionFailedError || (typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[DEFINITE] === true);
}

/**
 * Internal signal: the run must stop here (needs a decision, awaits approval, or was asked to stop).
 * It unwinds the script; the engine turns it into a run status, never into `failed`.
 */
export class RunSuspended extends Error {
  constructor(
    readonly status: 'needs-decision' | 'awaiting-approval' | 'interrupted' | 'cancelled' | 'sleeping' | 'waiting',
    readonly reason: string,
    readonly actionId?: string,
    /** For `sleeping`: when it is due (ms since the epoch); for `waiting`: when its wait times out, if it does. */
    readonly wakeAt?: number,
    /** For `waiting`: the name of the event the run waits for. */
    readonly event?: string,
    /** Set when the run stops because its child run did (run.child): the child's id; `actionId` is then the child's. */
    readonly childRunId?: string,
  ) {
    super(reason);
    this.name = 'RunSuspended';
  }
}

/** The run is not in the journal this command opened. */
export function runNotFound(runId: string): LogbookError {
  return new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run ${runId} in this journal.`, 'List runs with `logbook ls` (and check --db).', { runId });
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.message.replace(/\.$/, '');
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

export function isLogbookError(err: unknown): err is LogbookError {
  return err instanceof LogbookError;
}

export interface ErrorRecord {
  name: string;
  message: string;
  code?: string;
  stack?: string;
  /** A LogbookError's remedy and details, so a replayed failure is rebuilt as the same error (errorRevive.ts). */
  remedy?: string;
  details?: Record<string, unknown>;
  /** Other own properties of a user's error that survive JSON (status, retryable, …), kept for replay. */
  props?: Record<string, unknown>;
}

/**
 * Turns anything thrown into a JSON-safe record for the journal. The secrets of the environment (an API key a failed
 * request echoed in its message) are masked in it: the environment is never journaled, not even through an error.
 */
export function errorRecord(err: unknown): ErrorRecord {
  const mask = SecretMask.ofEnv(process.env);
  return mask.empty ? rawRecord(err) : mask.deep(rawRecord(err));
}

function rawRecord(err: unknown): ErrorRecord {
  if (err instanceof LogbookError) {
    return {
      name: err.name,
      message: err.message,
      code: err.code,
      ...(err.stack ? { stack: err.stack } : {}),
      remedy: err.remedy,
      ...jsonSafe({ details: err.details }),
    };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const props: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(err)) if (k !== 'code' && k !== 'message' && k !== 'name' && k !== 'stack' && k !== 'cause') props[k] = v;
    return {
      name: err.name,
      message: err.message,
      ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
      ...(err.stack ? { stack: err.stack } : {}),
      ...(Object.keys(props).length > 0 ? jsonSafe({ props }) : {}),
    };
  }
  return { name: 'Error', message: describe(err) };
}

/** Keeps a field only if it survives a JSON round trip unchanged; a record must never fail to be written. */
function jsonSafe<K extends string>(field: Record<K, Record<string, unknown>>): Partial<Record<K, Record<string, unknown>>> {
  const out: Partial<Record<K, Record<string, unknown>>> = {};
  for (const [k, v] of Object.entries(field) as Array<[K, Record<string, unknown>]>) {
    const kept: Record<string, unknown> = {};
    for (const [pk, pv] of Object.entries(v)) {
      try {
        const text = JSON.stringify(pv);
        if (text !== undefined && JSON.stringify(JSON.parse(text)) === text) kept[pk] = JSON.parse(text) as unknown;
      } catch {
        // A cycle or a BigInt: left out of the record.
      }
    }
    if (Object.keys(kept).length > 0) out[k] = kept;
  }
  return out;
}

const IN_DOUBT = Symbol.for('agent-logbook.in-doubt');

/** Marks an error thrown by `execute` that left its action in doubt (a copy of the runtime elsewhere sees it too). */
export function markInDoubt(err: unknown): void {
  if (typeof err === 'object' && err !== null && Object.isExtensible(err)) Object.defineProperty(err, IN_DOUBT, { value: true, configurable: true });
}

/**
 * True for an error `run.do` rethrew after `execute` failed in a way that does not prove nothing happened: the action is
 * in doubt and is reconciled on the next attempt. Code that catches it must not report the effect as not done.
 */
export function isInDoubtError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[IN_DOUBT] === true;
}
