// What the domain reader says about every run of a journal: the golden a migration must leave unchanged, row for row.

import { showRun } from '../../src/cli/inspect';
import type { Store } from '../../src/runtime/store';

/** A run's derived reads, each by the reader's own query (the ones a v2 layout must answer from its own tables). */
function derived(store: Store, runId: string): Record<string, unknown> {
  const r = store.reader;
  const ids = (rows: ReadonlyArray<{ id: string }>): string[] => rows.map((a) => a.id);
  const actions = [...r.allActions(runId)];
  return {
    stepCount: r.stepCount(runId),
    actionCount: r.actionCount(runId),
    eventCount: r.eventCount(runId),
    nextActionSeq: r.nextActionSeq(runId),
    inDoubt: ids(r.inDoubt(runId)),
    inDoubtAfterError: ids(r.inDoubtAfterError(runId)),
    failedMayHaveHappened: ids(r.failedMayHaveHappened(runId)),
    pendingApprovals: ids(r.pendingApprovals(runId)),
    committedNewestFirst: ids([...r.committedNewestFirst(runId)]),
    firstDamage: r.firstDamage(runId, { steps: r.stepCount(runId), actions: 'all' }) ?? null,
    actionHadInverse: Object.fromEntries(actions.map((a) => [a.id, r.actionHadInverse(runId, a.id) ?? null])),
    actionsByStep: Object.fromEntries(
      r.steps(runId, 0, r.stepCount(runId)).map((s) => [s.idx, { all: ids(r.actionsOfStep(runId, s.idx)), open: ids(r.openActionsOfStep(runId, s.idx)) }]),
    ),
    replaySteps: r.replaySteps(runId, 0, r.stepCount(runId)),
    replayActions: r.steps(runId, 0, r.stepCount(runId)).map((s) => r.replayActionsOfStep(runId, s.idx, 0, 1000)),
  };
}

/**
 * Every run (newest first, as `logbook ls` pages them) with its raw rows (run, steps, actions, events: every column
 * the reader validates), its `logbook show --json` view, and the reader's derived answers. Nothing is normalised:
 * timestamps, lease fields and sequence numbers are what the fixture's journal holds, and a migration must keep them.
 */
export function journalView(store: Store): Record<string, unknown> {
  const r = store.reader;
  const runs = r.runs(1000);
  return {
    runCount: r.runCount(),
    latestRun: r.latestRun()?.id ?? null,
    lastEventSeq: r.lastEventSeq(),
    runs: runs.map((row) => ({
      row,
      effectiveStatus: r.view(row).effectiveStatus,
      steps: r.steps(row.id, 0, Number.MAX_SAFE_INTEGER),
      actions: [...r.allActions(row.id)],
      events: r.events(row.id, 0, 100_000),
      show: JSON.parse(showRun(store, row.id, true)) as unknown,
      derived: derived(store, row.id),
    })),
  };
}
