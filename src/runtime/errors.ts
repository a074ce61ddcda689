// The error taxonomy: every failure a user can meet has a stable code, and its message ends with the remedy.

export const ErrorCodes = {
  SCRIPT_NOT_FOUND: 'LB_SCRIPT_NOT_FOUND',
  SCRIPT_LOAD_FAILED: 'LB_SCRIPT_LOAD_FAILED',
  NO_DEFAULT_AGENT: 'LB_NO_DEFAULT_AGENT',
  INVALID_INPUT: 'LB_INVALID_INPUT',
  INVALID_ARGS: 'LB_INVALID_ARGS',
  INVALID_DEFINITION: 'LB_INVALID_DEFINITION',
  NOT_JSON: 'LB_NOT_JSON',
  KEY_CONFLICT: 'LB_KEY_CONFLICT',
  NONDETERMINISM: 'LB_NONDETERMINISM',
  STEP_OUTSIDE_RUN: 'LB_STEP_MISUSE',
  ACTION_OUTSIDE_STEP: 'LB_ACTION_OUTSIDE_STEP',
  UNKNOWN_ACTION_TYPE: 'LB_UNKNOWN_ACTION_TYPE',
  DB_CORRUPT: 'LB_DB_CORRUPT',
  DB_TOO_NEW: 'LB_DB_TOO_NEW',
  DB_OPEN_FAILED: 'LB_DB_OPEN_FAILED',
  DB_DURABILITY: 'LB_DB_DURABILITY',
  JOURNAL_INVALID: 'LB_JOURNAL_INVALID',
  LEASE_HELD: 'LB_LEASE_HELD',
  LEASE_LOST: 'LB_LEASE_LOST',
  RUN_NOT_FOUND: 'LB_RUN_NOT_FOUND',
  RUN_EXISTS: 'LB_RUN_EXISTS',
  RUN_NOT_RESUMABLE: 'LB_RUN_NOT_RESUMABLE',
  ACTION_NOT_FOUND: 'LB_ACTION_NOT_FOUND',
  NEEDS_DECISION: 'LB_NEEDS_DECISION',
  AWAITING_APPROVAL: 'LB_AWAITING_APPROVAL',
  APPROVAL_REJECTED: 'LB_APPROVAL_REJECTED',
  BAD_DECISION: 'LB_BAD_DECISION',
  VERIFY_FAILED: 'LB_VERIFY_FAILED',
  COMPENSATE_FAILED: 'LB_COMPENSATE_FAILED',
  ACTION_FAILED: 'LB_ACTION_FAILED',
  VERSION_CHANGED: 'LB_VERSION_CHANGED',
  BAD_CRASH_SPEC: 'LB_BAD_CRASH_SPEC',
  USAGE: 'LB_USAGE',
  STOPPED: 'LB_STOPPED',
  NATIVE_UNSUPPORTED: 'LB_NATIVE_UNSUPPORTED',
  BAD_LAUNCH_CONFIG: 'LB_BAD_LAUNCH_CONFIG',
  WRONG_NODE: 'LB_WRONG_NODE',
  REHEARSAL_BASELINE: 'LB_REHEARSAL_BASELINE',
  MODEL_DRIFT: 'LB_MODEL_DRIFT',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

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

/** Thrown by an action's `execute` (wrapped) when the outside system refused it: the effect did not happen. */
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

/**
 * Internal signal: the run must stop here (needs a decision, awaits approval, or was asked to stop).
 * It unwinds the script; the engine turns it into a run status, never into `failed`.
 */
export class RunSuspended extends Error {
  constructor(
    readonly status: 'needs-decision' | 'awaiting-approval' | 'interrupted',
    readonly reason: string,
    readonly actionId?: string,
  ) {
    super(reason);
    this.name = 'RunSuspended';
  }
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

/** Turns anything thrown into a JSON-safe record for the journal. */
export function errorRecord(err: unknown): { name: string; message: string; code?: string; stack?: string } {
  if (err instanceof LogbookError) return { name: err.name, message: err.message, code: err.code, ...(err.stack ? { stack: err.stack } : {}) };
  if (err instanceof Error) return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { name: 'Error', message: describe(err) };
}
