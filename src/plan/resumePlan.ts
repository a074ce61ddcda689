// What `logbook resume` would do, read from the journal alone: nothing runs, nothing is written.

import { runNotFound } from '../runtime/errors';
import type { ActionDefinition } from '../runtime/define';
import type { Store } from '../runtime/store';
import type { ActionRow, StepRow } from '../runtime/store/rows';
import type { RunStatus } from '../runtime/types';

export type Reconcile = 'run-again' | 'verify' | 're-execute-with-key' | 'decided-happened' | 'decided-not-happened' | 'needs-decision' | 'unknown';

export interface PlannedAction {
  readonly id: string;
  readonly type: string;
  readonly effect: string;
  readonly step: number;
  readonly detail: string;
}

export interface InDoubtPlan extends PlannedAction {
  readonly reconcile: Reconcile;
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
  /** Where the resume will stop, as far as the journal tells. */
  readonly stops: { readonly kind: 'needs-decision' | 'awaiting-approval'; readonly actionId: string; readonly type: string } | null;
}

export type Definitions = (type: string) => ActionDefinition | undefined;

function* allSteps(store: Store, runId: string): Generator<StepRow> {
  const count = store.reader.stepCount(runId);
  for (let from = 0; from < count; from += 512) yield* store.reader.steps(runId, from, from + 512);
}

function planned(a: ActionRow, detail: string): PlannedAction {
  return { id: a.id, type: a.type, effect: a.effect, step: a.step_idx, detail };
}

export function reconcileOf(a: ActionRow, def: ActionDefinition | undefined, loaded: boolean): { reconcile: Reconcile; detail: string } {
  if (a.effect === 'read-only') return { reconcile: 'run-again', detail: 'read-only: it runs again' };
  if (a.effect === 'non-idempotent' && a.decision) {
    return a.decision === 'happened'
      ? { reconcile: 'decided-happened', detail: 'a person decided it happened: marked committed without executing' }
      : { reconcile: 'decided-not-happened', detail: 'a person decided it did not happen: it executes with the same key' };
  }
  if (!loaded) return { reconcile: 'unknown', detail: 'the script could not be loaded: verify if it defines one, otherwise as its effect allows' };
  if (def?.verify) return { reconcile: 'verify', detail: 'verify asks the outside system: found → committed without executing; not found → executed with the same key' };
  if (a.effect === 'idempotent') return { reconcile: 're-execute-with-key', detail: 'idempotent: it executes again with the same key' };
  return { reconcile: 'needs-decision', detail: 'no verify: the resume stops (exit 3) until a person decides with --decide' };
}

export function planResume(store: Store, runId: string, defs: Definitions, scriptLoaded: boolean): ResumePlan {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  const view = store.reader.view(row);
  let blocker: string | null = null;
  if (row.status === 'completed') blocker = 'the run completed: there is nothing to resume';
  else if (row.status === 'compensating' || row.status === 'compensated' || row.status === 'compensation-failed') blocker = `the run is ${view.effectiveStatus === 'interrupted' ? 'interrupted while compensating' : row.status}: only \`logbook compensate\` goes on (see plan --compensate)`;
  else if (view.leaseLive) blocker = `the run is being driven by ${row.lease_owner ?? 'another process'}`;

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
      const err = s.error ? ((JSON.parse(s.error) as { message?: string }).message ?? '') : '';
      replayedFailures.push({ index: s.idx, name: s.name, error: err });
      continue;
    }
    redo.push({ index: s.idx, name: s.name, reason: s.status === 'failed' ? 'it failed last time: it runs again' : 'it was in progress when the run stopped: it runs again' });
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
    if (a.status === 'committed') {
      if (redoIdx.has(a.step_idx)) skipped.push(planned(a, 'committed: its journaled result is returned without running'));
      continue;
    }
    if (a.status === 'started') {
      const r = reconcileOf(a, defs(a.type), scriptLoaded);
      inDoubt.push({ ...planned(a, r.detail), reconcile: r.reconcile });
      if (r.reconcile === 'needs-decision') stops ??= { kind: 'needs-decision', actionId: a.id, type: a.type };
      continue;
    }
    if (a.status === 'failed') {
      const p = planned(a, 'it failed (the outside system refused it): it executes again with the same key');
      retry.push(p);
      firstTime.push(p);
      continue;
    }
    if (a.status === 'awaiting-approval') {
      const approved = a.approval === 'approved';
      approvals.push({ ...planned(a, approved ? 'approved: it executes' : 'waits for approval: the resume stops at the gate (exit 3) until `logbook approve` or `reject`'), state: approved ? 'approved' : 'pending' });
      if (approved) firstTime.push(planned(a, 'approved, not yet executed'));
      else stops ??= { kind: 'awaiting-approval', actionId: a.id, type: a.type };
      continue;
    }
    if (a.status === 'rejected') approvals.push({ ...planned(a, 'rejected: the script sees ApprovalRejectedError when it reaches it'), state: 'rejected' });
  }
  return {
    runId,
    agent: row.agent,
    status: view.effectiveStatus,
    attempt: row.attempt,
    script: row.script,
    canResume: blocker === null,
    blocker,
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
  };
}
