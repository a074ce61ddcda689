// The one policy: what reconciles an action, what an error from execute makes it, what each status allows, its exit code and its word.
// Pure data and functions of data (no I/O, no sentences): the runtime carries these plans out, `plan` runs them dry,
// the runner labels its stops from them, the reader hands them to the tree, and the CLI and the adapter print their words.

import type { Effect, ErrorClass } from './define';
import type { ActionStatus, CompensationStatus, Decision, Reconciliation, RunStatus, StoredRunStatus } from './types';
import { EXIT } from './errors';

// ---- actions: reconciliation -------------------------------------------------------------------------------

/**
 * How an in-doubt action (started, not committed: a crash in flight, or an error from execute) is brought to a known state.
 * `unknown` only when the script could not be loaded, so whether it has a verify is not known.
 */
export const RECONCILE_HOWS = [
  'run-again',
  'nothing-to-undo',
  'decided-happened',
  'decided-not-happened',
  'verify',
  're-execute-with-key',
  'no-inverse',
  'needs-decision',
  'unknown',
] as const;
export type ReconcileHow = (typeof RECONCILE_HOWS)[number];

/**
 * `resume` goes forward (what did not happen is executed); `settle` only learns the truth (what did not happen is
 * marked so); `compensate` settles before the inverses are walked, and never makes an effect that nothing undoes.
 */
export type ReconcilePurpose = 'resume' | 'settle' | 'compensate';

export interface ReconcilePlan {
  readonly how: ReconcileHow;
  /** What "it did not happen" (verify found nothing, or a person said so) leads to. */
  readonly ifNotHappened: 'execute' | 'mark-not-happened';
}

export interface ActionFacts {
  readonly effect: Effect;
  /** Whether the definition has a verify hook; undefined when the script is not loaded. */
  readonly hasVerify: boolean | undefined;
  readonly status: ActionStatus;
  /** True for a `started` action whose execute threw an error that did not prove nothing happened. */
  readonly afterError: boolean;
  readonly decision: Decision | null;
  readonly approval: 'pending' | 'approved' | 'rejected' | null;
}

export function reconcilePlan(
  a: Pick<ActionFacts, 'effect' | 'hasVerify' | 'decision'> & { readonly hasInverse?: boolean | undefined },
  purpose: ReconcilePurpose,
): ReconcilePlan {
  const ifNotHappened = purpose === 'resume' ? 'execute' : 'mark-not-happened';
  const plan = (how: ReconcileHow): ReconcilePlan => ({ how, ifNotHappened });
  if (a.effect === 'read-only') return plan(purpose === 'resume' ? 'run-again' : 'nothing-to-undo');
  if (a.decision === 'happened') return plan('decided-happened');
  if (a.decision === 'not-happened') return plan('decided-not-happened');
  if (a.hasVerify === undefined) return plan('unknown');
  if (a.hasVerify) return plan('verify');
  // Redone with its key before compensating, an action with no inverse would only make its effect certain, where
  // it may never have happened, under a run that was asked to be undone: it is left as it is, irreversible either way.
  if (a.effect === 'idempotent') return plan(purpose === 'compensate' && a.hasInverse === false ? 'no-inverse' : 're-execute-with-key');
  return plan('needs-decision');
}

/** What a forward attempt does when the script reaches an action the journal already holds. */
export type ActionPlan =
  | { readonly kind: 'skip' }
  | { readonly kind: 'reconcile'; readonly plan: ReconcilePlan; readonly afterError: boolean }
  | { readonly kind: 'retry' }
  | { readonly kind: 'gate' }
  | { readonly kind: 'execute-approved' }
  | { readonly kind: 'rejected' };

export function actionPlan(a: ActionFacts): ActionPlan {
  switch (a.status) {
    case 'committed':
      return { kind: 'skip' };
    case 'started':
      return { kind: 'reconcile', plan: reconcilePlan(a, 'resume'), afterError: a.afterError };
    case 'failed':
      return { kind: 'retry' };
    case 'awaiting-approval':
      return a.approval === 'approved' ? { kind: 'execute-approved' } : { kind: 'gate' };
    case 'rejected':
      return { kind: 'rejected' };
  }
}

/**
 * What an error thrown by execute makes the action. Only a non-idempotent action can be hurt by a wrong guess: unless the
 * error is definite (the outside system refused, so nothing happened) it stays in doubt. The others are redone safely.
 */
export function afterExecuteError(effect: Effect, classified: ErrorClass | undefined): 'failed' | 'in-doubt' {
  if (effect !== 'non-idempotent') return 'failed';
  return classified === 'not-happened' ? 'failed' : 'in-doubt';
}

/**
 * Whether an action journaled failed may still have had its effect: an idempotent one whose error was not definite.
 * Going forward that is harmless (it is redone with its key), but compensation must settle it before it walks the
 * inverses, or an effect that landed would be left in place under a run reported compensated.
 */
export function failedMayHaveHappened(effect: Effect, classified: ErrorClass | undefined): boolean {
  return effect === 'idempotent' && classified !== 'not-happened';
}

// ---- actions: what people read --------------------------------------------------------------------------

export const ACTION_DISPLAY = [
  'in-flight',
  'in-doubt',
  'in-doubt-after-error',
  'committed',
  'failed',
  'awaiting-approval',
  'rejected',
  'compensated',
  'compensating',
  'irreversible',
  'compensation-failed',
] as const;
export type ActionDisplay = (typeof ACTION_DISPLAY)[number];

export function actionDisplay(
  a: { readonly status: ActionStatus; readonly error?: string | null; readonly compensation: CompensationStatus | null },
  leaseLive: boolean,
): ActionDisplay {
  switch (a.compensation) {
    case 'committed':
      return 'compensated';
    case 'irreversible':
      return 'irreversible';
    case 'started':
      return 'compensating';
    case 'failed':
      return 'compensation-failed';
    default:
      break;
  }
  if (a.status === 'started') {
    // An error already ended execute: nothing is in flight any more, whoever holds the run.
    if (a.error !== null && a.error !== undefined) return 'in-doubt-after-error';
    return leaseLive ? 'in-flight' : 'in-doubt';
  }
  return a.status;
}

export type Tone = 'ok' | 'bad' | 'warn' | 'busy' | 'undone' | 'plain';

export const ACTION_WORDS: Record<ActionDisplay, { readonly word: string; readonly tone: Tone; readonly canDecide: boolean }> = {
  'in-flight': { word: 'in flight', tone: 'busy', canDecide: false },
  'in-doubt': { word: 'in doubt', tone: 'warn', canDecide: true },
  'in-doubt-after-error': { word: 'in doubt after an error', tone: 'warn', canDecide: true },
  committed: { word: 'committed', tone: 'ok', canDecide: false },
  failed: { word: 'failed', tone: 'bad', canDecide: false },
  'awaiting-approval': { word: 'awaiting approval', tone: 'warn', canDecide: false },
  rejected: { word: 'rejected', tone: 'bad', canDecide: false },
  compensated: { word: 'compensated', tone: 'undone', canDecide: false },
  compensating: { word: 'compensating', tone: 'warn', canDecide: false },
  irreversible: { word: 'irreversible', tone: 'bad', canDecide: false },
  'compensation-failed': { word: 'compensation failed', tone: 'bad', canDecide: false },
};

/**
 * Reconciliations that found the effect had happened: a call of execute ran, though the journal may not have counted
 * it (a call is counted with the write that settles it, and a crash took that write away).
 */
export function reconciledAsHappened(r: Reconciliation | null): boolean {
  return r === 'verified' || r === 'decided-happened';
}

/**
 * The journal's count of an action's executions, as people read it: `2`, or `0+` (at least 0) for one still started.
 * A call is counted with the write that settles it (format 2: nothing records an execution before it happens), so a
 * call a crash cut short is not counted, and the count of an action in doubt is only a lower bound.
 */
export function executionsText(a: { readonly status: string; readonly executions: number }): string {
  return a.status === 'started' ? `${a.executions}+` : String(a.executions);
}

// ---- runs -------------------------------------------------------------------------------------------------

/** Exit codes of the CLI and the debug session alike: 0 only when the run reached its end. */

export interface RunRules {
  readonly word: string;
  readonly tone: Tone;
  readonly exit: number;
}

export const RUN_WORDS: Record<RunStatus, RunRules> = {
  // Waiting for a worker: not done, nothing to decide; `logbook run --detach` itself exits 0 once it is recorded.
  queued: { word: 'queued', tone: 'plain', exit: EXIT.waiting },
  running: { word: 'running', tone: 'busy', exit: EXIT.failed },
  completed: { word: 'completed', tone: 'ok', exit: EXIT.ok },
  failed: { word: 'failed', tone: 'bad', exit: EXIT.failed },
  'needs-decision': { word: 'needs a decision', tone: 'warn', exit: EXIT.waiting },
  'awaiting-approval': { word: 'awaiting approval', tone: 'warn', exit: EXIT.waiting },
  compensating: { word: 'compensating', tone: 'undone', exit: EXIT.failed },
  compensated: { word: 'compensated', tone: 'undone', exit: EXIT.ok },
  'compensation-failed': { word: 'compensation failed', tone: 'bad', exit: EXIT.failed },
  // Stopped (killed, or asked to stop at a boundary) before its end: resumable, but not done.
  interrupted: { word: 'interrupted', tone: 'warn', exit: EXIT.failed },
  // Stopped on purpose before its end: not done, and not resumable; what it did can be compensated.
  cancelled: { word: 'cancelled', tone: 'bad', exit: EXIT.failed },
  // Released until its wake time: not done, nothing to decide; a worker (or `logbook resume`) goes on with it.
  sleeping: { word: 'sleeping', tone: 'plain', exit: EXIT.waiting },
  // Released in run.waitFor until its event arrives (or its timeout passes): `logbook send` or a worker goes on with it.
  waiting: { word: 'waiting', tone: 'plain', exit: EXIT.waiting },
};

export function runExitCode(status: RunStatus): number {
  return RUN_WORDS[status].exit;
}

export interface RunAllows {
  readonly status: RunStatus;
  readonly canResume: boolean;
  readonly canCompensate: boolean;
  readonly canApprove: boolean;
  readonly canDelete: boolean;
  /** Whether `logbook cancel` is taken: a run that has not ended (a live one is asked to stop at its next boundary). */
  readonly canCancel: boolean;
  /** Whether `logbook send` is taken: a run that has not ended keeps the event until it waits for it. */
  readonly canSend: boolean;
  /** Why `resume` would refuse, as a fact the caller words: done, cancelled, compensation under way or over, or held. */
  readonly resumeBlocker: 'completed' | 'cancelled' | 'compensation' | 'held' | 'queued' | null;
}

const GOES_FORWARD: ReadonlySet<StoredRunStatus> = new Set(['running', 'failed', 'needs-decision', 'awaiting-approval', 'sleeping', 'waiting']);
const COMPENSATION: ReadonlySet<StoredRunStatus> = new Set(['compensating', 'compensated', 'compensation-failed']);
/** What `logbook cancel` takes: a run that has not ended and is not being compensated (RUN_TRANSITIONS to `cancelled`). */
const CANCELLABLE: ReadonlySet<StoredRunStatus> = new Set(['queued', 'running', 'failed', 'needs-decision', 'awaiting-approval', 'sleeping', 'waiting']);
/** What `logbook send` takes: a run that may still reach a run.waitFor (not ended, not being compensated). */
const RECEIVES: ReadonlySet<StoredRunStatus> = CANCELLABLE;

/** Whether a run in this stored status may be cancelled (a live one is asked to stop; the others are cancelled at once). */
export function canCancel(stored: StoredRunStatus): boolean {
  return CANCELLABLE.has(stored);
}

/** Whether a run in this stored status takes an event (`logbook send`): one that ended never waits again. */
export function canSend(stored: StoredRunStatus): boolean {
  return RECEIVES.has(stored);
}

/**
 * Which stored status may follow which: the one table of a run's life, which the store checks on every status it
 * writes (a new run starts `running`, or `queued` for workers). Resuming goes to `running`, compensating to
 * `compensating`, and an approval is recorded as `awaiting-approval`; a driving session ends its attempt in one of the
 * others. A session that stopped for a decision or an approval may still record, in its other branches, another stop
 * or the failure that ends it.
 */
export const RUN_TRANSITIONS: Readonly<Record<StoredRunStatus, readonly StoredRunStatus[]>> = {
  queued: ['running', 'cancelled'],
  running: ['running', 'completed', 'failed', 'needs-decision', 'awaiting-approval', 'compensating', 'cancelled', 'sleeping', 'waiting'],
  failed: ['running', 'compensating', 'awaiting-approval', 'cancelled'],
  'needs-decision': ['running', 'compensating', 'needs-decision', 'awaiting-approval', 'failed', 'cancelled'],
  'awaiting-approval': ['running', 'compensating', 'awaiting-approval', 'needs-decision', 'failed', 'cancelled'],
  completed: ['compensating'],
  // `logbook cancel`: never forward again; compensating it undoes what it did.
  cancelled: ['compensating'],
  // Woken (by a worker's claim, or `logbook resume`), cancelled, or compensated instead.
  sleeping: ['running', 'cancelled', 'compensating'],
  // Continued (by `logbook send`, `logbook resume`, or a worker once its event or timeout is due), cancelled, or compensated.
  waiting: ['running', 'cancelled', 'compensating'],
  compensating: ['compensating', 'compensated', 'compensation-failed', 'needs-decision'],
  'compensation-failed': ['compensating'],
  // Compensating again finds every inverse done, and says so.
  compensated: ['compensating'],
};

/** Whether the store may record `to` over `from` (RUN_TRANSITIONS). */
export function transitionAllowed(from: StoredRunStatus, to: StoredRunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** The status a run shows: a run going forward or compensating whose process is gone is `interrupted`. */
export function effectiveStatus(stored: StoredRunStatus, leaseLive: boolean): RunStatus {
  return (stored === 'running' || stored === 'compensating') && !leaseLive ? 'interrupted' : stored;
}

/**
 * What a run allows, from its stored status and whether a live process holds it. `compensationStopped`: its status is
 * needs-decision because a compensation stopped for a decision (see RunView), which only the compensation may take
 * further: it may have undone actions a forward run would skip.
 */
export function runAllows(stored: StoredRunStatus, leaseLive: boolean, compensationStopped = false): RunAllows {
  const status = effectiveStatus(stored, leaseLive);
  const resumeBlocker =
    stored === 'completed'
      ? 'completed'
      : stored === 'cancelled'
        ? 'cancelled'
        : COMPENSATION.has(stored) || compensationStopped
          ? 'compensation'
          : leaseLive
            ? 'held'
            : stored === 'queued'
              ? 'queued'
              : null;
  return {
    status,
    canResume: !leaseLive && GOES_FORWARD.has(stored) && !compensationStopped,
    // A queued run has done nothing to undo; a worker starts it.
    canCompensate: !leaseLive && stored !== 'compensated' && stored !== 'queued',
    canApprove: stored === 'awaiting-approval',
    canDelete: !leaseLive,
    canCancel: CANCELLABLE.has(stored),
    canSend: RECEIVES.has(stored),
    resumeBlocker,
  };
}
