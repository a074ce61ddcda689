// What `logbook compensate` would do, from the journal alone: settle doubts, inverses newest-first, irreversible.

import type { Store } from '../runtime/store';
import { runNotFound } from '../runtime/errors';
import type { ActionRow } from '../runtime/store/rows';
import type { Definitions } from './resumePlan';
import { reconcilePlan, type ReconcileHow } from '../runtime/policy';

export interface PlannedInverse {
  readonly id: string;
  readonly type: string;
  readonly step: number;
  /** `if-found`: the action is in doubt; its inverse runs only if verify finds that it happened. */
  readonly when: 'always' | 'if-found' | 'again-in-doubt';
  readonly detail: string;
  /** Set for a child run (run.child) undone at this place in the walk: `id` is its run id, and this its own plan. */
  readonly child?: CompensationPlan;
}

export interface CompensationPlan {
  readonly runId: string;
  readonly agent: string;
  readonly status: string;
  readonly scriptLoaded: boolean;
  readonly settleFirst: ReadonlyArray<{ id: string; type: string; how: Exclude<ReconcileHow, 'run-again'>; detail: string }>;
  readonly rejectApprovals: ReadonlyArray<{ id: string; type: string }>;
  /** Newest-first, in the order they would run. */
  readonly inverses: readonly PlannedInverse[];
  readonly irreversible: ReadonlyArray<{ id: string; type: string; detail: string }>;
  readonly alreadyCompensated: ReadonlyArray<{ id: string; type: string }>;
  readonly stops: { readonly actionId: string; readonly type: string } | null;
}

/** What settling means before compensation, in words (the choice itself is the policy's). */
const SETTLE_DETAIL: Record<Exclude<ReconcileHow, 'run-again'>, string> = {
  'decided-happened': 'decided it happened: marked committed, then undone',
  'decided-not-happened': 'decided it did not happen: nothing to undo',
  unknown: 'the script could not be loaded',
  verify: 'verify asks the outside system; if found it is undone like the rest',
  're-execute-with-key': 'idempotent: executed again with its key to reach a known state, then undone',
  'no-inverse': 'idempotent without compensate: not executed again (that could only add an effect nothing undoes); left irreversible',
  'nothing-to-undo': 'read-only: nothing to undo',
  'needs-decision': 'no verify: compensation stops (exit 3) until a person decides with --decide',
};

export function planCompensation(store: Store, runId: string, defs: Definitions, scriptLoaded: boolean): CompensationPlan {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  const settleFirst: Array<CompensationPlan['settleFirst'][number]> = [];
  const first: PlannedInverse[] = [];
  const irreversible: Array<{ id: string; type: string; detail: string }> = [];
  let stops: CompensationPlan['stops'] = null;
  const inverseOf = (a: ActionRow, when: PlannedInverse['when'], detail: string, into = first): void => {
    if (defs(a.type)?.compensate || !scriptLoaded) into.push({ id: a.id, type: a.type, step: a.step_idx, when, detail });
    else irreversible.push({ id: a.id, type: a.type, detail: `${a.type} has no compensate${when === 'if-found' ? ' (if it happened)' : ''}` });
  };
  // In-doubt actions are settled first, by the policy's settle plan (what compensation itself carries out); those that
  // turn out to have happened commit now, so their inverses run first.
  for (const a of store.reader.inDoubt(runId)) {
    const def = defs(a.type);
    const plan = reconcilePlan(
      {
        effect: a.effect,
        hasVerify: scriptLoaded ? typeof def?.verify === 'function' : undefined,
        decision: a.decision,
        hasInverse: scriptLoaded ? typeof def?.compensate === 'function' : undefined,
      },
      'compensate',
    );
    const how = plan.how === 'run-again' ? 'nothing-to-undo' : plan.how;
    const after = a.error !== null ? 'in doubt after an error; ' : '';
    settleFirst.push({ id: a.id, type: a.type, how, detail: `${after}${SETTLE_DETAIL[how]}` });
    if (how === 'decided-happened') inverseOf(a, 'always', 'decided it happened');
    else if (how === 'verify') inverseOf(a, 'if-found', 'in doubt: undone only if verify finds it happened');
    else if (how === 're-execute-with-key') inverseOf(a, 'always', 're-executed with its key, then undone');
    else if (how === 'no-inverse') irreversible.push({ id: a.id, type: a.type, detail: `${a.type} has no compensate (in doubt: not executed again)` });
    else if (how === 'needs-decision') {
      inverseOf(a, 'if-found', 'in doubt: undone only if decided that it happened');
      stops ??= { actionId: a.id, type: a.type };
    }
  }
  const rejectApprovals = store.reader.pendingApprovals(runId).map((a) => ({ id: a.id, type: a.type }));
  // Settled in journal order, each committing as it goes: the last one settled is the newest, so it is undone first.
  const inverses: PlannedInverse[] = [...first.reverse()];
  const alreadyCompensated: Array<{ id: string; type: string }> = [];
  // Its children (run.child) at their places in the walk: by the seq of their start against the commit order.
  const children = store.reader
    .children(runId)
    .map((row) => ({ row, seq: store.reader.firstEventSeq(row.id) ?? 0 }))
    .sort((a, b) => b.seq - a.seq);
  const childrenNewerThan = (seq: number): void => {
    for (let next = children[0]; next && next.seq > seq; next = children[0]) {
      children.shift();
      const c = next.row;
      if (c.status === 'queued') continue;
      if (c.status === 'compensated') {
        alreadyCompensated.push({ id: c.id, type: 'child run' });
        continue;
      }
      const inner = planCompensation(store, c.id, defs, scriptLoaded);
      inverses.push({
        id: c.id,
        type: 'child run',
        step: c.parent_step ?? 0,
        when: 'always',
        detail: `child run of ${c.agent} (${inner.status}): ${inner.inverses.length} inverse(s) of its own, newest first`,
        child: inner,
      });
      stops ??= inner.stops;
    }
  };
  for (const a of store.reader.committedNewestFirst(runId)) {
    childrenNewerThan(a.commit_seq ?? 0);
    if (a.effect === 'read-only') continue;
    if (a.compensation === 'committed') alreadyCompensated.push({ id: a.id, type: a.type });
    else if (a.compensation === 'irreversible') irreversible.push({ id: a.id, type: a.type, detail: `${a.type} has no compensate (already reported)` });
    else if (a.compensation === 'started' || a.compensation === 'failed')
      inverses.push({ id: a.id, type: a.type, step: a.step_idx, when: 'again-in-doubt', detail: 'its inverse was in doubt: it runs again with the same key' });
    else inverseOf(a, 'always', 'committed', inverses);
  }
  childrenNewerThan(-1);
  return {
    runId,
    agent: row.agent,
    status: store.reader.view(row).effectiveStatus,
    scriptLoaded,
    settleFirst,
    rejectApprovals,
    inverses,
    irreversible,
    alreadyCompensated,
    stops,
  };
}
