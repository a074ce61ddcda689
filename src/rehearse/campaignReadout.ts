// What the rehearsal reads from a scratch journal: where the run stands, and everything the invariants look at.

import * as fs from 'node:fs';
import { isPostgresUrl, openStore, type Store } from '../runtime/store';
import type { ActionRow, EventRow, RunRow } from '../runtime/store/rows';
import type { StoredRunStatus } from '../runtime/types';

export interface RunState {
  readonly status: StoredRunStatus;
  /** The latest lease was taken to compensate (by command or by the agent's declared policy). */
  readonly compensating: boolean;
  /** The action named by the latest needs-decision stop. */
  readonly decisionFor: string | null;
  /** The run that action is in: the run itself, or its child (run.child) whose stop stopped it. */
  readonly decisionRun: string | null;
  /** How many processes had an armed throw point fire (execute threw after its effect). */
  readonly injected: number;
}

export interface JournalSummary {
  readonly status: StoredRunStatus;
  readonly output: unknown;
  readonly steps: number;
  readonly actions: readonly ActionRow[];
  /** Steps that ran again, per attempt: the work one resume redid. */
  readonly restartsByAttempt: ReadonlyMap<number, number>;
  /** The run's error as journaled, when it failed. */
  readonly error?: { readonly code?: string; readonly message: string } | null;
}

function withReader<T>(db: string, fn: (s: Store) => T): T | undefined {
  if (!isPostgresUrl(db) && !fs.existsSync(db)) return undefined;
  const store = openStore(db, { readonly: true });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function* allEvents(store: Store, runId: string): Generator<EventRow> {
  let after = 0;
  for (;;) {
    const page = store.reader.events(runId, after, 1000);
    yield* page;
    const last = page[page.length - 1];
    if (page.length < 1000 || !last) return;
    after = last.seq;
  }
}

function eventData(e: EventRow): Record<string, unknown> {
  try {
    return e.data ? (JSON.parse(e.data) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function readRunState(db: string, runId: string): RunState | undefined {
  return withReader(db, (store) => {
    const row = store.reader.run(runId);
    if (!row) return undefined;
    let compensating = false;
    let decisionFor: string | null = null;
    let decisionRun: string | null = null;
    const injected = new Set<string>();
    for (const e of allEvents(store, runId)) {
      if (e.kind === 'fault.injected') injected.add(`${runId}#${e.attempt}`);
      const data = eventData(e);
      if (e.kind === 'run.lease-acquired') compensating = data.status === 'compensating';
      if (e.kind === 'run.needs-decision' && typeof data.actionId === 'string') {
        decisionFor = data.actionId;
        decisionRun = typeof data.childRunId === 'string' ? data.childRunId : runId;
      }
    }
    // A throw point armed in a child run (run.child) fires in the child's journal.
    for (const c of descendants(store, runId)) for (const e of allEvents(store, c.id)) if (e.kind === 'fault.injected') injected.add(`${c.id}#${e.attempt}`);
    return { status: row.status, compensating, decisionFor, decisionRun, injected: injected.size };
  });
}

/** The runs `runId` started with run.child, and theirs. */
function descendants(store: Store, runId: string): RunRow[] {
  const out: RunRow[] = [];
  for (const c of store.reader.children(runId)) out.push(c, ...descendants(store, c.id));
  return out;
}

export function readSummary(db: string, runId: string): JournalSummary | undefined {
  return withReader(db, (store) => {
    const row = store.reader.run(runId);
    if (!row) return undefined;
    const restartsByAttempt = new Map<number, number>();
    for (const e of allEvents(store, runId)) {
      if (e.kind === 'step.restarted') restartsByAttempt.set(e.attempt, (restartsByAttempt.get(e.attempt) ?? 0) + 1);
    }
    return {
      status: row.status,
      output: row.output === null ? null : (JSON.parse(row.output) as unknown),
      steps: store.reader.stepCount(runId),
      // Its children's too (run.child): an effect a child ran twice is the run's.
      actions: [runId, ...descendants(store, runId).map((c) => c.id)].flatMap((id) => [...store.reader.allActions(id)]),
      restartsByAttempt,
      error: runError(row.error),
    };
  });
}

export function actionOf(db: string, runId: string, id: string): ActionRow | undefined {
  return withReader(db, (store) => store.reader.action(runId, id));
}

/** The gates waiting for a person in the run and its children (run.child), each with its run_id. */
export function pendingApprovals(db: string, runId: string): ActionRow[] {
  return (
    withReader(db, (store) =>
      [runId, ...descendants(store, runId).map((c) => c.id)].flatMap((id) => store.reader.pendingApprovals(id).filter((a) => a.approval === 'pending')),
    ) ?? []
  );
}

/** Effects that were durable when a kill struck, per action type: what a restart from scratch would repeat. */
export function committedByType(db: string, runId: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of readSummary(db, runId)?.actions ?? []) {
    if (a.status === 'committed' && a.effect !== 'read-only') out[a.type] = (out[a.type] ?? 0) + 1;
  }
  return out;
}

function runError(text: string | null): JournalSummary['error'] {
  if (text === null) return null;
  try {
    const e = JSON.parse(text) as { code?: unknown; message?: unknown };
    return { ...(typeof e.code === 'string' ? { code: e.code } : {}), message: typeof e.message === 'string' ? e.message : text };
  } catch {
    return { message: text };
  }
}
