// What `logbook compensate` would do, from the journal alone: settle doubts, inverses newest-first, irreversible.

import type { Store } from '../runtime/store';
import { runNotFound } from '../runtime/errors';
import type { ActionRow } from '../runtime/store/rows';
import type { Definitions } from './resumePlan';

export interface PlannedInverse {
  readonly id: string;
  readonly type: string;
  readonly step: number;
  /** `if-found`: the action is in doubt; its inverse runs only if verify finds that it happened. */
  readonly when: 'always' | 'if-found' | 'again-in-doubt';
  readonly detail: string;
}

export interface CompensationPlan {
  readonly runId: string;
  readonly agent: string;
  readonly status: string;
  readonly scriptLoaded: boolean;
  readonly settleFirst: ReadonlyArray<{ id: string; type: string; how: 'verify' | 're-execute-with-key' | 'nothing-to-undo' | 'decided-happened' | 'decided-not-happened' | 'needs-decision' | 'unknown'; detail: string }>;
  readonly rejectApprovals: ReadonlyArray<{ id: string; type: string }>;
  /** Newest-first, in the order they would run. */
  readonly inverses: readonly PlannedInverse[];
  readonly irreversible: ReadonlyArray<{ id: string; type: string; detail: string }>;
  readonly alreadyCompensated: ReadonlyArray<{ id: string; type: string }>;
  readonly stops: { readonly actionId: string; readonly type: string } | null;
}

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
  // In-doubt actions are settled first; those that turn out to have happened commit now, so their inverses run first.
  for (const a of store.reader.inDoubt(runId)) {
    const def = defs(a.type);
    if (a.decision === 'happened') {
      settleFirst.push({ id: a.id, type: a.type, how: 'decided-happened', detail: 'decided it happened: marked committed, then undone' });
      inverseOf(a, 'always', 'decided it happened');
    } else if (a.decision === 'not-happened') {
      settleFirst.push({ id: a.id, type: a.type, how: 'decided-not-happened', detail: 'decided it did not happen: nothing to undo' });
    } else if (!scriptLoaded) {
      settleFirst.push({ id: a.id, type: a.type, how: 'unknown', detail: 'the script could not be loaded' });
    } else if (def?.verify) {
      settleFirst.push({ id: a.id, type: a.type, how: 'verify', detail: 'verify asks the outside system; if found it is undone like the rest' });
      inverseOf(a, 'if-found', 'in doubt: undone only if verify finds it happened');
    } else if (a.effect === 'idempotent') {
      settleFirst.push({ id: a.id, type: a.type, how: 're-execute-with-key', detail: 'idempotent: executed again with its key to reach a known state, then undone' });
      inverseOf(a, 'always', 're-executed with its key, then undone');
    } else if (a.effect === 'read-only') {
      settleFirst.push({ id: a.id, type: a.type, how: 'nothing-to-undo', detail: 'read-only: nothing to undo' });
    } else {
      settleFirst.push({ id: a.id, type: a.type, how: 'needs-decision', detail: 'no verify: compensation stops (exit 3) until a person decides with --decide' });
      inverseOf(a, 'if-found', 'in doubt: undone only if decided that it happened');
      stops ??= { actionId: a.id, type: a.type };
    }
  }
  const rejectApprovals = store.reader.pendingApprovals(runId).map((a) => ({ id: a.id, type: a.type }));
  // Settled in journal order, each committing as it goes: the last one settled is the newest, so it is undone first.
  const inverses: PlannedInverse[] = [...first.reverse()];
  const alreadyCompensated: Array<{ id: string; type: string }> = [];
  for (const a of store.reader.committedNewestFirst(runId)) {
    if (a.effect === 'read-only') continue;
    if (a.compensation === 'committed') alreadyCompensated.push({ id: a.id, type: a.type });
    else if (a.compensation === 'irreversible') irreversible.push({ id: a.id, type: a.type, detail: `${a.type} has no compensate (already reported)` });
    else if (a.compensation === 'started' || a.compensation === 'failed') inverses.push({ id: a.id, type: a.type, step: a.step_idx, when: 'again-in-doubt', detail: 'its inverse was in doubt: it runs again with the same key' });
    else inverseOf(a, 'always', 'committed', inverses);
  }
  return { runId, agent: row.agent, status: store.reader.view(row).effectiveStatus, scriptLoaded, settleFirst, rejectApprovals, inverses, irreversible, alreadyCompensated, stops };
}
