// Turns journal rows into the reader protocol's DTOs: paged, clipped, with the display statuses people read.

import { holderOnThisNode, parseCancelRequest, type JournalOverview, type Store } from '../runtime/store';
import type { ActionRow, RunRow, StepRow } from '../runtime/store/rows';
import { actionDisplay, runAllows } from '../runtime/policy';
import { isSleepCheckpoint } from '../runtime/sleep';
import { childOfWait } from '../runtime/childWait';
import { CLIP, type ActionDto, type AiCallDto, type Params, type Result, type RunDto, type StepDisplay, type StepDto } from './readerProtocol';
import { buildTimeline } from './timeline';
import { aiCallLine, aiCallMarkdown, aiCallSummary } from '../ai/view';

export function clip(text: string | null, n = CLIP): string | null {
  if (text === null) return null;
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function errorMessage(text: string | null): string | null {
  if (text === null) return null;
  try {
    const e = JSON.parse(text) as { message?: unknown; code?: unknown };
    const msg = typeof e.message === 'string' ? e.message : text;
    return clip(typeof e.code === 'string' ? `[${e.code}] ${msg}` : msg);
  } catch {
    return clip(text);
  }
}

export { actionDisplay };

export function stepDisplay(s: Pick<StepRow, 'status' | 'attempt'>, run: Pick<RunRow, 'attempt'>, leaseLive: boolean): StepDisplay {
  if (s.status === 'completed') return s.attempt < run.attempt ? 'replayed' : 'completed';
  if (s.status === 'failed') return 'failed';
  return leaseLive ? 'in-progress' : 'interrupted';
}

/** A step's checkpoint as a run.sleep's (its duration and wake time), or undefined for any other step's. */
export function sleepOf(result: string | null): { sleep: number; wakeAt: number } | undefined {
  // A sleep's checkpoint is two numbers: a longer text is some other step's result, and is not parsed here.
  if (result === null || result.length > 120) return undefined;
  try {
    const v = JSON.parse(result) as unknown;
    return isSleepCheckpoint(v) ? { sleep: v.sleep, wakeAt: v.wakeAt } : undefined;
  } catch {
    return undefined;
  }
}

export class JournalQueries {
  private readonly q: JournalOverview;

  constructor(private readonly store: Store) {
    this.q = store.overview();
  }

  /** What a waiting run waits for; a parent waiting for its child's event names the event and the child that waits. */
  private waitingFor(row: RunRow, name: string): { event: string; until: number | null; runId?: string } {
    const until = row.wake_at ?? null;
    if (childOfWait(name) === undefined) return { event: name, until };
    const leaf = this.store.waitingLeaf(row);
    return leaf ? { event: leaf.event, until, runId: leaf.runId } : { event: name, until };
  }

  private get reader() {
    return this.store.reader;
  }

  runDto(row: RunRow): RunDto {
    const v = this.reader.view(row);
    const allows = runAllows(row.status, v.leaseLive, v.compensationStopped);
    const settled = row.status === 'completed' || row.status === 'compensated';
    const count = (status: string): number => (settled ? 0 : this.q.actionsIn(row.id, status));
    return {
      id: row.id,
      agent: row.agent,
      script: row.script,
      status: v.effectiveStatus,
      attempt: row.attempt,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      leaseLive: v.leaseLive,
      canResume: allows.canResume,
      canCompensate: allows.canCompensate,
      canDelete: allows.canDelete,
      canCancel: allows.canCancel,
      compensationStopped: v.compensationStopped,
      wakeAt: this.wakeAt(row, v.leaseLive),
      cancel: cancelOf(row.cancel_requested),
      owner: v.leaseLive ? row.lease_owner : null,
      ownerPid: v.leaseLive && holderOnThisNode(row.lease_host) ? row.lease_pid : null,
      stepCount: this.reader.stepCount(row.id),
      actionCount: this.reader.actionCount(row.id),
      inDoubt: v.leaseLive ? this.inDoubtAfterError(row.id, settled) : count('started'),
      awaitingApproval: count('awaiting-approval'),
      input: clip(row.input),
      output: clip(row.output),
      error: errorMessage(row.error),
      forkedFrom: row.forked_from,
      forkedAtStep: row.forked_from === null ? null : row.forked_at_step,
      waitingFor: row.status === 'waiting' && row.waiting_for != null ? this.waitingFor(row, row.waiting_for) : null,
      parentId: row.parent_id ?? null,
      parentStep: row.parent_step ?? null,
    };
  }

  /**
   * When the run wakes: a run released `sleeping` has it in its row; a live one waits in a foreground sleep when its
   * latest step is a sleep not yet due (one read, for live runs only: the tree pages many runs, few of them live).
   */
  private wakeAt(row: RunRow, leaseLive: boolean): number | null {
    if (row.status === 'sleeping') return row.wake_at ?? null;
    if (!leaseLive || row.status !== 'running') return null;
    const n = this.reader.stepCount(row.id);
    const last = n > 0 ? this.reader.steps(row.id, n - 1, n)[0] : undefined;
    const sleep = last?.status === 'completed' ? sleepOf(last.result) : undefined;
    return sleep && sleep.wakeAt > Date.now() ? sleep.wakeAt : null;
  }

  /** While a run is live, only an action an error left in doubt counts: the others are in flight. */
  private inDoubtAfterError(runId: string, settled: boolean): number {
    return settled ? 0 : this.reader.inDoubtAfterError(runId).length;
  }

  /** `children`: the run's children (run.child), read once for a page of its steps. */
  stepDto(s: StepRow, run: RunRow, leaseLive: boolean, children: readonly RunRow[] = this.reader.children(s.run_id)): StepDto {
    return {
      runId: s.run_id,
      idx: s.idx,
      name: s.name,
      status: stepDisplay(s, run, leaseLive),
      attempt: s.attempt,
      startedAt: s.started_at,
      endedAt: s.ended_at,
      actionCount: this.q.actionsInStep(s.run_id, s.idx),
      error: errorMessage(s.error),
      hasResult: s.result !== null,
      ...sleepFields(s.status === 'completed' ? sleepOf(s.result) : undefined),
      childCount: children.filter((c) => c.parent_step === s.idx).length,
    };
  }

  actionDto(a: ActionRow, leaseLive: boolean, full = false): ActionDto {
    const n = full ? Number.MAX_SAFE_INTEGER : CLIP;
    return {
      runId: a.run_id,
      id: a.id,
      seq: a.seq,
      stepIdx: a.step_idx,
      type: a.type,
      version: a.version,
      effect: a.effect,
      status: actionDisplay(a, leaseLive),
      journalStatus: a.status,
      executions: a.executions,
      reconciliation: a.reconciliation,
      decision: a.decision,
      approval: a.approval,
      approvalNote: a.approval_note,
      compensation: a.compensation,
      compensationExecutions: a.compensation_executions,
      attempt: a.attempt,
      startedAt: a.started_at,
      endedAt: a.ended_at,
      args: clip(a.args, n) ?? '',
      result: clip(a.result, n),
      error: errorMessage(a.error),
      ...aiCall(a),
    };
  }

  runs(p: Params<'runs'>): Result<'runs'> {
    if (p.topLevel) return { total: this.q.topLevelRunCount(), runs: this.q.topLevelRuns(p.limit, p.offset).map((r) => this.runDto(r)) };
    return { total: this.reader.runCount(), runs: this.reader.runs(p.limit, p.offset).map((r) => this.runDto(r)) };
  }

  children(p: Params<'children'>): Result<'children'> {
    const rows = this.reader.children(p.runId);
    return (p.stepIdx === undefined ? rows : rows.filter((c) => c.parent_step === p.stepIdx)).map((r) => this.runDto(r));
  }

  run(p: Params<'run'>): Result<'run'> {
    const row = this.reader.run(p.runId);
    return row ? this.runDto(row) : null;
  }

  steps(p: Params<'steps'>): Result<'steps'> {
    const row = this.reader.run(p.runId);
    if (!row) return { total: 0, steps: [] };
    const live = this.reader.view(row).leaseLive;
    const steps = this.reader.steps(p.runId, p.from, p.from + p.limit);
    const children = this.reader.children(p.runId);
    return { total: this.reader.stepCount(p.runId), steps: steps.map((s) => this.stepDto(s, row, live, children)) };
  }

  actions(p: Params<'actions'>): Result<'actions'> {
    const row = this.reader.run(p.runId);
    if (!row) return { total: 0, actions: [] };
    const live = this.reader.view(row).leaseLive;
    const rows = this.q.actionsOfStep(p.runId, p.stepIdx, p.afterSeq, p.limit);
    const total = this.q.actionsInStep(p.runId, p.stepIdx);
    return { total, actions: rows.map((a) => this.actionDto(a, live)) };
  }

  action(p: Params<'action'>): Result<'action'> {
    const row = this.reader.run(p.runId);
    const a = this.reader.action(p.runId, p.actionId);
    if (!row || !a) return null;
    return this.actionDto(a, this.reader.view(row).leaseLive, true);
  }

  checkpoint(p: Params<'checkpoint'>): Result<'checkpoint'> {
    const row = this.reader.run(p.runId);
    if (!row) return null;
    // Shown as it is: a value that is not JSON (edited or damaged) is shown as its text, marked, not a failed query.
    const parse = (t: string | null): unknown => {
      if (t === null) return null;
      try {
        return JSON.parse(t) as unknown;
      } catch {
        return { 'damaged (not JSON, LB_JOURNAL_INVALID)': t };
      }
    };
    if (p.stepIdx === null) {
      return {
        json: JSON.stringify(
          {
            run: row.id,
            agent: row.agent,
            status: this.reader.view(row).effectiveStatus,
            input: parse(row.input),
            output: parse(row.output),
            error: parse(row.error),
          },
          null,
          2,
        ),
      };
    }
    const s = this.reader.step(p.runId, p.stepIdx);
    if (!s) return null;
    return { json: JSON.stringify({ run: row.id, step: s.idx, name: s.name, status: s.status, result: parse(s.result), error: parse(s.error) }, null, 2) };
  }

  callRecord(p: Params<'callRecord'>): Result<'callRecord'> {
    const a = this.reader.action(p.runId, p.actionId);
    if (!a || !aiCallSummary(a.type, a.args, a.result)) return null;
    const markdown = aiCallMarkdown({
      id: a.id,
      type: a.type,
      args: a.args,
      result: a.result,
      error: a.error,
      durationMs: a.ended_at === null ? null : a.ended_at - a.started_at,
    });
    return { title: `${a.id} (${a.type})`, markdown };
  }

  timeline(p: Params<'timeline'>): Result<'timeline'> {
    const row = this.reader.run(p.runId);
    if (!row) return null;
    return buildTimeline(this.store, this.runDto(row));
  }

  /** The latest run of a script, summarised per step-name pattern and per action type, for editor decorations. */
  scriptStatus(p: Params<'scriptStatus'>): Result<'scriptStatus'> {
    const row = this.q.latestRunOf(p.script);
    const out: Result<'scriptStatus'> = { run: null, steps: {}, actions: {} };
    if (row === undefined) return out;
    const v = this.reader.view(row);
    out.run = this.runDto(row);
    const patterns = p.stepPatterns.map((s) => ({ id: s.id, re: safeRegex(s.regex) }));
    for (const s of this.q.stepStatuses(row.id)) {
      const d = stepDisplay(s, row, v.leaseLive);
      for (const pat of patterns) {
        if (pat.re?.test(s.name)) bump(out.steps, pat.id, d);
      }
    }
    const wanted = new Set(p.actionTypes);
    for (const g of this.q.actionCounts(row.id)) {
      if (wanted.has(g.type)) bump(out.actions, g.type, actionDisplay({ ...g, error: g.errored ? 'error' : null }, v.leaseLive), g.n);
    }
    return out;
  }
}

function cancelOf(raw: string | null | undefined): { reason: string | null; by: string } | null {
  if (!raw) return null;
  const c = parseCancelRequest(raw);
  return { reason: clip(c.reason, 500), by: c.by };
}

function sleepFields(z: { sleep: number; wakeAt: number } | undefined): { wakeAt: number | null; sleepMs: number | null } {
  return z ? { wakeAt: z.wakeAt, sleepMs: z.sleep } : { wakeAt: null, sleepMs: null };
}

/** The AI call view of an action row, when agent-logbook/ai journaled it (a model call or a tool call). */
export function aiCall(a: Pick<ActionRow, 'type' | 'args' | 'result'>): { ai?: AiCallDto } {
  const s = aiCallSummary(a.type, a.args, a.result);
  return s
    ? { ai: { ...s, line: aiCallLine(s), lastMessages: [...s.lastMessages], toolCalls: [...s.toolCalls], tokens: s.tokens ? { ...s.tokens } : null } }
    : {};
}

function bump(target: Record<string, Record<string, number>>, key: string, status: string, n = 1): void {
  const counts = (target[key] ??= {});
  counts[status] = (counts[status] ?? 0) + n;
}

function safeRegex(src: string): RegExp | undefined {
  try {
    return new RegExp(src);
  } catch {
    return undefined;
  }
}
