// Runner side: what a stop shows (run, step, action, checkpoint state) and the journal pages, as wire values.

import type { ActionSnapshot, RunSnapshot, SleepSnapshot, StepSnapshot } from '../runtime/hooks';
import type { JournalReader } from '../runtime/store';
import type { ActionView, RunView, SleepView, StepView, StopContext } from '../link/runnerProtocol';
import { toWire } from '../link/wire';
import { ACTION_WORDS } from '../runtime/policy';

/** The value of journaled JSON text; the text itself when it does not parse, so the debugger shows a damaged value as it is. */
function jsonOrText(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function runView(run: RunSnapshot, forkedFrom: { runId: string; stepIdx: number } | undefined): RunView {
  return { id: run.id, agent: run.agent, attempt: run.attempt, status: run.status, input: toWire(run.input), ...(forkedFrom ? { forkedFrom } : {}) };
}

export function stepView(s: StepSnapshot): StepView {
  return {
    idx: s.idx,
    name: s.name,
    replayed: s.replayed,
    redone: s.redone,
    ...('result' in s ? { result: toWire(s.result) } : {}),
    ...(s.location ? { location: s.location } : {}),
    ...(s.sleep ? { sleep: true } : {}),
  };
}

export function sleepView(s: SleepSnapshot): SleepView {
  return {
    name: s.name,
    stepIdx: s.stepIdx,
    durationMs: s.durationMs,
    wakeAt: new Date(s.wakeAt).toISOString(),
    leftMs: s.leftMs,
    replayed: s.replayed,
  };
}

export function actionView(a: ActionSnapshot): ActionView {
  return {
    id: a.id,
    type: a.type,
    version: a.version,
    effect: a.effect,
    args: toWire(a.args),
    phase: a.phase,
    // The policy's word where the journal's status alone ("started") would hide that an error left it in doubt.
    status: a.afterError ? ACTION_WORDS['in-doubt-after-error'].word : a.status,
    executions: a.executions,
    stepIdx: a.stepIdx,
    hasVerify: a.hasVerify,
    hasCompensate: a.hasCompensate,
    approval: a.approval,
    ...(a.reconciliation ? { reconciliation: a.reconciliation } : {}),
    ...('result' in a ? { result: toWire(a.result) } : {}),
    ...(a.error !== undefined ? { error: toWire(a.error) } : {}),
    ...(a.location ? { location: a.location } : {}),
  };
}

/** The journal's state for the run right now: checkpoints, in-doubt actions, pending approvals. */
export function checkpointView(reader: JournalReader, runId: string): StopContext['checkpoint'] {
  const n = reader.stepCount(runId);
  const tail = reader.steps(runId, Math.max(0, n - 8), n).reverse();
  const last = tail.find((s) => s.status === 'completed');
  return {
    stepsJournaled: n,
    ...(last ? { lastCheckpoint: { idx: last.idx, name: last.name, ...(last.result !== null ? { result: jsonOrText(last.result) } : {}) } } : {}),
    inDoubt: reader.inDoubt(runId).map((a) => ({ id: a.id, type: a.type, stepIdx: a.step_idx })),
    awaitingApproval: reader.pendingApprovals(runId).map((a) => ({ id: a.id, type: a.type, stepIdx: a.step_idx })),
  };
}

export function journalPage(reader: JournalReader, runId: string, start: number, count: number): unknown[] {
  return reader.eventsAt(runId, start, count).map((e) => ({
    seq: e.seq,
    attempt: e.attempt,
    at: new Date(e.at).toISOString(),
    kind: e.kind,
    ...(e.step_idx !== null ? { step: e.step_idx } : {}),
    ...(e.action_id !== null ? { action: e.action_id } : {}),
    ...(e.data !== null ? { data: toWire(jsonOrText(e.data)) } : {}),
  }));
}

export function stepsPage(reader: JournalReader, runId: string, start: number, count: number): unknown[] {
  return reader.steps(runId, start, start + count).map((s) => ({
    idx: s.idx,
    name: s.name,
    status: s.status,
    attempt: s.attempt,
    ...(s.result !== null ? { result: toWire(jsonOrText(s.result)) } : {}),
    ...(s.error !== null ? { error: toWire(jsonOrText(s.error)) } : {}),
  }));
}

/** The names an expression can use at a stop: run, step, action, args, result, error, input, kind, phase, sleep. */
export function evalScope(
  kind: string,
  detail: string,
  run: RunSnapshot,
  step: StepSnapshot | undefined,
  action: ActionSnapshot | undefined,
  sleep?: SleepSnapshot,
): Record<string, unknown> {
  const result = action ? action.result : step?.result;
  return {
    run: { id: run.id, agent: run.agent, attempt: run.attempt, status: run.status, input: run.input },
    step: step ? { idx: step.idx, index: step.idx, name: step.name, replayed: step.replayed, redone: step.redone, result: step.result } : undefined,
    action: action ? { ...action, key: action.id, idempotencyKey: action.id } : undefined,
    args: action?.args,
    result,
    error: action?.error,
    input: run.input,
    kind,
    phase: action?.phase,
    detail,
    sleep: sleep ? { ...sleepView(sleep), wakeAtMs: sleep.wakeAt } : undefined,
  };
}
