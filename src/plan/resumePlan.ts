// What `logbook resume` would do, read from the journal alone: nothing runs, nothing is written.

import { runNotFound } from '../runtime/errors';
import type { ActionDefinition } from '../runtime/define';
import type { Store } from '../runtime/store';
import type { ActionRow, RunRow, StepRow } from '../runtime/store/rows';
import type { RunStatus } from '../runtime/types';
import { actionPlan, runAllows, type ReconcileHow } from '../runtime/policy';
import { journaledError } from '../runtime/settle';
import { approvalEventName } from '../runtime/wait';

export type Reconcile = ReconcileHow;

export interface PlannedAction {
  readonly id: string;
  readonly type: string;
  readonly effect: string;
  readonly step: number;
  readonly detail: string;
}

export interface InDoubtPlan extends PlannedAction {
  readonly reconcile: Reconcile;
  /** Set when execute threw an error that left it in doubt (rather than a crash in flight): that error. */
  readonly afterError: string | null;
}

export interface ApprovalPlan extends PlannedAction {
  readonly state: 'pending' | 'approved' | 'rejected';
}

export interface StepRange {
  readonly from: number;
  readonly to: number;
  readonly firstName: string;
  readonly lastName: string;
}

export interface ResumePlan {
  readonly runId: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly attempt: number;
  readonly script: string;
  /** False when `resume` would refuse (completed, or compensation under way); `blocker` says why. */
  readonly canResume: boolean;
  readonly blocker: string | null;
  /** A run released in run.sleep: when it is due (ms since the epoch); resume waits what is left, `--now` not at all. */
  readonly sleepingUntil?: number;
  /**
   * A run released in run.waitFor: the event it waits for, until when (null: no timeout), and what a resume now does
   * there: take the event kept for it (`takes`, its id), take the timeout, or stop waiting again (exit 3).
   */
  readonly waiting?: {
    readonly event: string;
    readonly until: number | null;
    readonly resume: 'takes' | 'times-out' | 'waits-again';
    readonly eventId?: string;
    /** When a child run (run.child) is the one that waits: its id, where the event goes. */
    readonly runId?: string;
  };
  /** Whether the script was loaded to learn which action types have verify / compensate. */
  readonly scriptLoaded: boolean;
  readonly replay: { readonly count: number; readonly ranges: readonly StepRange[] };
  readonly replayedFailures: ReadonlyArray<{ index: number; name: string; error: string }>;
  readonly redo: ReadonlyArray<{ index: number; name: string; reason: string }>;
  readonly inDoubt: readonly InDoubtPlan[];
  readonly retry: readonly PlannedAction[];
  readonly approvals: readonly ApprovalPlan[];
  /** Committed actions inside redone steps: returned from the journal, not executed. */
  readonly skipped: readonly PlannedAction[];
  /** Actions the journal knows of whose effect has not happened yet: they run for the first time. */
  readonly firstTime: readonly PlannedAction[];
  /** Steps at this index and after are not in the journal: whatever they do runs for the first time. */
  readonly unjournaledFrom: number;
  /** Where the resume will stop, as far as the journal tells; `childRunId` when it is its child (run.child) that stops. */
  readonly stops: {
    readonly kind: 'needs-decision' | 'awaiting-approval';
    readonly actionId: string;
    readonly type: string;
    readonly childRunId?: string;
  } | null;
  /** The runs it started with run.child, and what the resume does with each when it reaches its step. */
  readonly children: readonly ChildPlan[];
}

export interface ChildPlan {
  readonly runId: string;
  readonly agent: string;
  readonly step: number;
  readonly status: RunStatus;
  /** `replayed`: its step completed, so its output is returned from the journal and the child is not looked at. */
  readonly does: 'replayed' | 'returns-output' | 'waits' | 'resumes' | 'throws';
  readonly detail: string;
}

export type Definitions = (type: string) => ActionDefinition | undefined;

/** What a resume of a waiting run does at its wait: the event kept for it (sent before its timeout), the timeout, or a new stop. */
/** The wait of a waiting run, or of the child run (run.child) its wait is for: the event goes where the wait is. */
function waitingOf(store: Store, row: RunRow): NonNullable<ResumePlan['waiting']> {
  const leaf = store.waitingLeaf(row);
  if (!leaf || leaf.runId === row.id) return waitingPlan(store, row.id, row.waiting_for ?? '', row.wake_at ?? null);
  return { ...waitingPlan(store, leaf.runId, leaf.event, store.reader.run(leaf.runId)?.wake_at ?? null), runId: leaf.runId };
}

function waitingPlan(store: Store, runId: string, event: string, until: number | null): NonNullable<ResumePlan['waiting']> {
  const kept = store.reader.inbox.pending(runId, event, until ?? Number.MAX_SAFE_INTEGER);
  if (kept) return { event, until, resume: 'takes', eventId: kept.id };
  return { event, until, resume: until !== null && until <= Date.now() ? 'times-out' : 'waits-again' };
}

function* allSteps(store: Store, runId: string): Generator<StepRow> {
  const count = store.reader.stepCount(runId);
  for (let from = 0; from < count; from += 512) yield* store.reader.steps(runId, from, from + 512);
}

function planned(a: ActionRow, detail: string): PlannedAction {
  return { id: a.id, type: a.type, effect: a.effect, step: a.step_idx, detail };
}

/** What each reconciliation means for a resume, in words (the choice itself is the policy's). */
const RECONCILE_DETAIL: Record<Reconcile, string> = {
  'run-again': 'read-only: it runs again',
  'nothing-to-undo': 'read-only: nothing to undo',
  'decided-happened': 'a person decided it happened: marked committed without executing',
  'decided-not-happened': 'a person decided it did not happen: it executes with the same key',
  verify: 'verify asks the outside system: found → committed without executing; not found → executed with the same key',
  're-execute-with-key': 'idempotent: it executes again with the same key',
  'no-inverse': 'idempotent: it executes again with the same key',
  'needs-decision': 'no verify: the resume stops (exit 3) until a person decides with --decide',
  unknown: 'the script could not be loaded: verify if it defines one, otherwise as its effect allows',
};

export function planResume(store: Store, runId: string, defs: Definitions, scriptLoaded: boolean): ResumePlan {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  const view = store.reader.view(row);
  const allows = runAllows(row.status, view.leaseLive, view.compensationStopped);
  const blocker =
    allows.resumeBlocker === 'completed'
      ? 'the run completed: there is nothing to resume'
      : allows.resumeBlocker === 'cancelled'
        ? 'the run was cancelled: it never goes forward again (`logbook compensate` undoes what it did; see plan --compensate)'
        : allows.resumeBlocker === 'compensation'
          ? `the run is ${view.effectiveStatus === 'interrupted' ? 'interrupted while compensating' : row.status}: only \`logbook compensate\` goes on (see plan --compensate)`
          : allows.resumeBlocker === 'held'
            ? `the run is being driven by ${row.lease_owner ?? 'another process'}`
            : allows.resumeBlocker === 'queued'
              ? 'the run is queued: a `logbook worker` with its script starts it'
              : null;

  const count = store.reader.stepCount(runId);
  const ranges: StepRange[] = [];
  const replayedFailures: Array<{ index: number; name: string; error: string }> = [];
  const redo: Array<{ index: number; name: string; reason: string }> = [];
  let replayCount = 0;
  let open: StepRange | undefined;
  for (const s of allSteps(store, runId)) {
    if (s.status === 'completed') {
      replayCount++;
      if (open && open.to === s.idx - 1) open = { ...open, to: s.idx, lastName: s.name };
      else {
        if (open) ranges.push(open);
        open = { from: s.idx, to: s.idx, firstName: s.name, lastName: s.name };
      }
      continue;
    }
    if (s.status === 'failed' && s.idx + 1 < count) {
      const err = s.error ? journaledError(s.error).message : '';
      replayedFailures.push({ index: s.idx, name: s.name, error: err });
      continue;
    }
    redo.push({
      index: s.idx,
      name: s.name,
      reason: s.status === 'failed' ? 'it failed last time: it runs again' : 'it was in progress when the run stopped: it runs again',
    });
  }
  if (open) ranges.push(open);

  const redoIdx = new Set(redo.map((r) => r.index));
  const inDoubt: InDoubtPlan[] = [];
  const retry: PlannedAction[] = [];
  const approvals: ApprovalPlan[] = [];
  const skipped: PlannedAction[] = [];
  const firstTime: PlannedAction[] = [];
  let stops: ResumePlan['stops'] = null;
  for (const a of store.reader.allActions(runId)) {
    const def = defs(a.type);
    const plan = actionPlan({
      effect: a.effect,
      hasVerify: scriptLoaded ? typeof def?.verify === 'function' : undefined,
      status: a.status,
      afterError: a.error !== null,
      decision: a.decision,
      approval: a.approval,
    });
    switch (plan.kind) {
      case 'skip':
        if (redoIdx.has(a.step_idx)) skipped.push(planned(a, 'committed: its journaled result is returned without running'));
        break;
      case 'reconcile': {
        const how = plan.plan.how;
        const error = plan.afterError ? journaledError(a.error).message : null;
        // A step whose failure is replayed is not run again: its in-doubt action is settled when the run reaches its end.
        const atEnd = error !== null && !redoIdx.has(a.step_idx) && (how === 'verify' || how === 'decided-not-happened');
        const detail =
          atEnd && how === 'verify'
            ? 'its step is not run again: before the run completes, verify asks the outside system (found → committed; not found → marked failed)'
            : RECONCILE_DETAIL[how];
        inDoubt.push({ ...planned(a, error !== null ? `in doubt after an error (${error}): ${detail}` : detail), reconcile: how, afterError: error });
        if (how === 'needs-decision') stops ??= { kind: 'needs-decision', actionId: a.id, type: a.type };
        break;
      }
      case 'retry': {
        const p = planned(a, 'it failed (the outside system refused it): it executes again with the same key');
        retry.push(p);
        firstTime.push(p);
        break;
      }
      case 'execute-approved':
        approvals.push({ ...planned(a, 'approved: it executes'), state: 'approved' });
        firstTime.push(planned(a, 'approved, not yet executed'));
        break;
      case 'gate': {
        // A decision sent while a session held the run waits in its inbox: the gate takes it.
        const sent = store.reader.inbox.pending(runId, approvalEventName(a.id));
        const approved = sent ? (JSON.parse(sent.data ?? '{}') as { approved?: unknown }).approved === true : undefined;
        if (approved === true) {
          approvals.push({ ...planned(a, 'approved (the decision waits at the gate): it executes'), state: 'approved' });
          firstTime.push(planned(a, 'approved, not yet executed'));
        } else if (approved === false)
          approvals.push({ ...planned(a, 'rejected (the decision waits at the gate): the script sees ApprovalRejectedError'), state: 'rejected' });
        else {
          approvals.push({ ...planned(a, 'waits for approval: the resume stops at the gate (exit 3) until `logbook approve` or `reject`'), state: 'pending' });
          stops ??= { kind: 'awaiting-approval', actionId: a.id, type: a.type };
        }
        break;
      }
      case 'rejected':
        approvals.push({ ...planned(a, 'rejected: the script sees ApprovalRejectedError when it reaches it'), state: 'rejected' });
        break;
    }
  }
  const children: ChildPlan[] = [];
  for (const c of store.reader.children(runId)) {
    const step = c.parent_step ?? 0;
    const cv = store.reader.view(c);
    const p = childPlan(c.id, cv.effectiveStatus, cv.leaseLive ? (c.lease_owner ?? 'another process') : null, redoIdx.has(step));
    children.push({ runId: c.id, agent: c.agent, step, status: cv.effectiveStatus, ...p });
    // A child that stops for a person stops its parent too, which names it.
    if (p.does === 'resumes' && (c.status === 'needs-decision' || c.status === 'awaiting-approval') && !stops) {
      const inner = planResume(store, c.id, defs, scriptLoaded).stops;
      if (inner) stops = { ...inner, childRunId: inner.childRunId ?? c.id };
    }
  }
  return {
    runId,
    agent: row.agent,
    status: view.effectiveStatus,
    attempt: row.attempt,
    script: row.script,
    canResume: allows.canResume,
    blocker,
    ...(row.status === 'sleeping' && row.wake_at != null ? { sleepingUntil: row.wake_at } : {}),
    ...(row.status === 'waiting' && row.waiting_for != null ? { waiting: waitingOf(store, row) } : {}),
    scriptLoaded,
    replay: { count: replayCount, ranges },
    replayedFailures,
    redo,
    inDoubt,
    retry,
    approvals,
    skipped,
    firstTime,
    unjournaledFrom: count,
    stops,
    children,
  };
}

/** What run.child does when a resume reaches (or replays) the step of a child the journal holds. */
function childPlan(childId: string, status: RunStatus, holder: string | null, redone: boolean): Pick<ChildPlan, 'does' | 'detail'> {
  if (!redone) return { does: 'replayed', detail: 'its step completed: its output is returned from the journal' };
  if (holder) return { does: 'waits', detail: `${holder} drives it: the parent waits for it, then goes on with its output` };
  switch (status) {
    case 'completed':
      return { does: 'returns-output', detail: 'it completed: its output is returned, and it is not run again' };
    case 'cancelled':
    case 'compensated':
    case 'compensating':
    case 'compensation-failed':
      return { does: 'throws', detail: `it is ${status}: run.child throws ChildRunFailedError naming it` };
    case 'queued':
      return { does: 'waits', detail: 'it is queued: the parent waits for a worker to run it' };
    default:
      return { does: 'resumes', detail: `it is ${status}: the parent resumes it (see \`logbook plan ${childId}\`), and is not started again` };
  }
}
