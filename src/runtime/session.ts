// One attempt of one run: the `run` object a script receives, with replay of steps and the action bracket.

import { AsyncLocalStorage } from 'node:async_hooks';
import { ApprovalRejectedError, ErrorCodes, LogbookError, RunSuspended, describe, errorRecord } from './errors';
import { isAction, type ActionDefinition, type AgentDefinition, type EffectContext } from './define';
import { fromJournalJson, toJournalJson } from './json';
import { validate, type InferOutput, type StandardSchema } from './schema';
import type { Faults } from './faults';
import type { ActionPhase, ActionSnapshot, PauseEvent, PauseKind, RuntimeHooks, SourceLocation, StepSnapshot } from './hooks';
import { callerLocation } from './location';
import { ReadAhead, textSize } from './readAhead';
import { StepActions } from './stepActions';
import type { ActionRow, ReplayStepRow } from './store/rows';
import type { JournalReader } from './store/reader';
import type { NewAction, RunWriter } from './store/writer';
import type { Reconciliation, RunApi, RunStatus } from './types';

export interface AttemptStats {
  stepsReplayed: number;
  stepsRun: number;
  stepsRedone: number;
  actionsSkipped: number;
  actionsExecuted: number;
  actionsObserved: number;
  reconciled: Array<{ id: string; type: string; outcome: Reconciliation | 'needs-decision' }>;
  warnings: string[];
}

export function emptyStats(): AttemptStats {
  return { stepsReplayed: 0, stepsRun: 0, stepsRedone: 0, actionsSkipped: 0, actionsExecuted: 0, actionsObserved: 0, reconciled: [], warnings: [] };
}

interface StepFrame {
  readonly idx: number;
  readonly name: string;
  readonly redone: boolean;
  readonly location: SourceLocation | undefined;
  /** Unfinished actions an earlier attempt left in this step, not yet claimed by a run.do call. */
  readonly open: Map<string, ActionRow>;
  /** For a redone step, what earlier attempts journaled in it, prefetched in start order for the skip fast path. */
  readonly journal: StepActions | undefined;
}

/** Reads journaled steps as replay reaches them, a chunk at a time, ignoring rows this attempt wrote. */
class StepCursor {
  private chunk: ReplayStepRow[] = [];
  private start = -1;
  private end = -1;
  private readonly ahead = new ReadAhead();

  constructor(
    private readonly reader: JournalReader,
    private readonly runId: string,
    private readonly attempt: number,
    readonly count: number,
  ) {}

  get(idx: number): ReplayStepRow | undefined {
    if (idx >= this.count) return undefined;
    if (this.start < 0 || idx < this.start || idx >= this.end) {
      const n = this.ahead.rows;
      this.chunk = this.reader.replaySteps(this.runId, idx, idx + n);
      this.start = idx;
      this.end = idx + n;
      this.ahead.update(this.chunk.length, textSize(this.chunk.map((r) => r.result)));
    }
    let row = this.chunk[idx - this.start];
    if (row?.idx !== idx) row = this.chunk.find((r) => r.idx === idx);
    return row && row.attempt < this.attempt ? row : undefined;
  }
}

export interface SessionDeps {
  readonly reader: JournalReader;
  readonly writer: RunWriter;
  readonly agent: AgentDefinition;
  readonly input: unknown;
  readonly faults: Faults;
  readonly hooks: RuntimeHooks | undefined;
  readonly stats: AttemptStats;
  readonly log: (line: string) => void;
}

export class RunSession {
  readonly api: RunApi;
  /** Set when any branch suspended the run: every later step or action call stops before doing anything. */
  suspended: RunSuspended | undefined;
  /** The steps inside which the run was suspended. */
  private readonly suspendedSteps = new Set<number>();
  private readonly runId: string;
  private readonly attempt: number;
  private readonly als = new AsyncLocalStorage<StepFrame>();
  private readonly cursor: StepCursor;
  private readonly inflight = new Map<string, { args: string; promise: Promise<unknown> }>();
  private readonly pending = new Set<Promise<unknown>>();
  private stepCounter = 0;
  private currentStatus: RunStatus = 'running';

  constructor(private readonly d: SessionDeps) {
    this.runId = d.writer.lease.runId;
    this.attempt = d.writer.lease.attempt;
    this.cursor = new StepCursor(d.reader, this.runId, this.attempt, d.reader.stepCount(this.runId));
    const api: RunApi = {
      id: this.runId,
      agent: d.agent.name,
      attempt: this.attempt,
      step: (name, fn) => this.replayFast(name, fn) ?? this.track(this.step(name, fn)),
      do: (action, args) => this.skipFast(action, args) ?? this.track(this.doAction(action, args)),
      currentStep: () => {
        const frame = this.als.getStore();
        return frame ? { index: frame.idx, name: frame.name } : undefined;
      },
      note: (kind, data) => this.note(kind, data),
    };
    this.api = Object.freeze(api);
  }

  /** Waits for every step and action still in flight (a branch of Promise.all may outlive the script's await). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = (): void => void this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  private note(kind: string, data: unknown): void {
    if (typeof kind !== 'string' || kind.length === 0) {
      throw new LogbookError(ErrorCodes.INVALID_ARGS, 'run.note was called without a kind.', 'Name the note, e.g. run.note("model.partial", { text }).');
    }
    const json = toJournalJson(data, `The note ${kind}`, 'Pass plain JSON to run.note.');
    this.d.writer.note(kind, json === null ? null : (JSON.parse(json) as unknown), this.als.getStore()?.idx ?? null);
  }

  // ---- pausing -------------------------------------------------------------------------------------------

  private runSnapshot(): PauseEvent['run'] {
    return { id: this.runId, agent: this.d.agent.name, attempt: this.attempt, status: this.currentStatus, input: this.d.input };
  }

  private async pause(kind: PauseKind, detail: string, step?: StepSnapshot, action?: ActionSnapshot): Promise<void> {
    const hooks = this.d.hooks;
    if (!hooks?.pause) return;
    // A host that stops here shows the journal: the records written behind go in first.
    this.d.writer.writePending();
    await hooks.pause({ kind, run: this.runSnapshot(), detail, ...(step ? { step } : {}), ...(action ? { action } : {}) });
  }

  /** Callers test `hooks.pause` first, so a run with no host builds no snapshot or detail text and awaits nothing. */
  private pauseAction(kind: PauseKind, detail: string, action: ActionSnapshot): Promise<void> {
    return this.pause(kind, detail, undefined, action);
  }

  private checkStop(): void {
    if (this.suspended) throw this.suspended;
    if (this.d.hooks?.shouldStop?.()) {
      this.suspended = new RunSuspended('interrupted', 'The host asked the run to stop; it is resumable.');
      throw this.suspended;
    }
  }

  private suspend(s: RunSuspended): never {
    this.suspended ??= s;
    const frame = this.als.getStore();
    if (frame) this.suspendedSteps.add(frame.idx);
    throw s;
  }

  // ---- steps ---------------------------------------------------------------------------------------------

  /**
   * Replay's fast path, taken for every journaled step of a resumed run: a completed step at the next position with
   * the same name returns its checkpoint without an async frame or tracking. Anything else (a host that pauses, a
   * nested call, a mismatch, a failed or unfinished step) returns undefined and takes the full path, which re-checks.
   */
  private replayFast<T>(name: unknown, fn: unknown): Promise<T> | undefined {
    if (this.d.hooks?.pause || typeof name !== 'string' || typeof fn !== 'function') return undefined;
    const journaled = this.cursor.get(this.stepCounter);
    if (journaled?.status !== 'completed' || journaled.name !== name || this.als.getStore()) return undefined;
    this.stepCounter++;
    this.d.stats.stepsReplayed++;
    try {
      return Promise.resolve(fromJournalJson(journaled.result) as T);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new LogbookError(ErrorCodes.STEP_OUTSIDE_RUN, 'run.step was called without a name.', 'Give every step a stable, descriptive name: run.step("load recipients", () => …).');
    }
    if (typeof fn !== 'function') {
      throw new LogbookError(ErrorCodes.STEP_OUTSIDE_RUN, `run.step(${JSON.stringify(name)}) was called without a function.`, 'Pass the step body as the second argument.');
    }
    const parent = this.als.getStore();
    if (parent) {
      throw new LogbookError(
        ErrorCodes.STEP_OUTSIDE_RUN,
        `run.step(${JSON.stringify(name)}) was called inside step ${JSON.stringify(parent.name)}; steps do not nest.`,
        'Call the inner work with run.do inside the outer step, or make it a step of its own after it.',
      );
    }
    const idx = this.stepCounter++;
    const location = this.d.hooks?.captureLocations ? callerLocation() : undefined;
    const journaled = this.cursor.get(idx);
    if (journaled && journaled.name !== name) {
      throw new LogbookError(
        ErrorCodes.NONDETERMINISM,
        `Step #${idx + 1} is ${JSON.stringify(name)} in the script, but the journal of run ${this.runId} has ${JSON.stringify(journaled.name)} at that position: the script's steps changed since the run started. Nothing new was executed.`,
        'Restore the original step order (new steps may only be added after the last journaled one), or start a new run with `logbook run`.',
        { position: idx + 1, journaled: journaled.name, current: name },
      );
    }
    if (journaled?.status === 'completed') {
      this.d.stats.stepsReplayed++;
      const result = fromJournalJson(journaled.result) as T;
      if (this.d.hooks?.pause) {
        await this.pause('step:before', `replay: step "${name}" completed in an earlier attempt; its checkpointed result is returned`, {
          idx, name, replayed: true, redone: false, result, ...(location ? { location } : {}),
        });
      }
      return result;
    }
    if (journaled?.status === 'failed' && idx + 1 < this.cursor.count) {
      // The script caught this failure and went on in an earlier attempt: replay the failure, not a retry.
      const rec = JSON.parse(journaled.error ?? '{}') as { name?: string; message?: string };
      const err = new Error(rec.message ?? 'step failed');
      err.name = rec.name ?? 'Error';
      throw err;
    }
    this.checkStop();
    this.d.faults.hit('step:before', name);
    const redone = journaled !== undefined;
    const snapshot = (result?: unknown): StepSnapshot => ({ idx, name, replayed: false, redone, ...(result !== undefined ? { result } : {}), ...(location ? { location } : {}) });
    if (this.d.hooks?.pause) await this.pause('step:before', redone ? `step "${name}" was in progress when the run stopped: it runs again` : `step "${name}" is about to run`, snapshot());
    // A host that paused here may have asked to stop; nothing of this step is written yet.
    this.checkStop();
    const open = new Map<string, ActionRow>();
    if (redone) for (const a of this.d.reader.openActionsOfStep(this.runId, idx)) if (a.attempt < this.attempt) open.set(a.id, a);
    this.d.writer.stepStarted(idx, name, redone);
    if (redone) this.d.stats.stepsRedone++;
    else this.d.stats.stepsRun++;
    let result: T;
    try {
      const journal = redone ? new StepActions(this.d.reader, this.runId, idx, this.attempt) : undefined;
      result = await this.als.run({ idx, name, redone, location, open, journal }, fn);
    } catch (err) {
      if (!(err instanceof RunSuspended) && !(err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST)) this.d.writer.stepFailed(idx, errorRecord(err));
      throw err;
    }
    // A step in which the run was suspended (an approval gate inside a tool the model called, whose error an SDK
    // caught) must not be checkpointed as if it had finished; a parallel step that did finish still is.
    if (this.suspended && this.suspendedSteps.has(idx)) throw this.suspended;
    const json = toJournalJson(result, `The result of step "${name}"`, 'Return plain JSON from the step: strings, numbers, booleans, arrays and plain objects.');
    this.d.writer.stepCompleted(idx, json);
    this.d.faults.hit('step:after-checkpoint', name);
    if (this.d.hooks?.pause) await this.pause('step:after', `step "${name}" checkpointed`, snapshot(result));
    return result;
  }

  // ---- actions -------------------------------------------------------------------------------------------

  /**
   * Replay's fast path for actions: in a redone step, an action its journal holds as committed, with the same type,
   * version and args, returns the journaled result without an async frame. Anything else (a host that pauses or may
   * stop the run, invalid args, a mismatch, any other status) returns undefined and takes the full path, which
   * validates and decides again, so every check and every error stays in one place.
   */
  private skipFast<R>(action: unknown, args: unknown): Promise<R> | undefined {
    if (this.suspended || this.d.hooks?.pause || this.d.hooks?.shouldStop || !isAction(action)) return undefined;
    const journal = this.als.getStore()?.journal;
    if (!journal) return undefined;
    try {
      const v = action.args['~standard'].validate(args);
      if (v instanceof Promise || v.issues) return undefined;
      const argsJson = toJournalJson(v.value, action.type, '') ?? 'null';
      const key = action.key(v.value, this.api);
      if (typeof key !== 'string' || key.length === 0 || this.inflight.has(key)) return undefined;
      const row = journal.peek(key);
      if (row?.status !== 'committed' || row.type !== action.type || row.version !== action.version || row.args !== argsJson) return undefined;
      const result = fromJournalJson(row.result) as R;
      journal.take(key);
      this.d.stats.actionsSkipped++;
      return Promise.resolve(result);
    } catch {
      return undefined;
    }
  }

  private async doAction<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: InferOutput<S>): Promise<R> {
    this.checkStop();
    const frame = this.als.getStore();
    if (!isAction(action)) {
      throw new LogbookError(ErrorCodes.INVALID_DEFINITION, 'run.do was called with something that is not an action.', 'Pass an action made with defineAction({...}).');
    }
    if (!frame) {
      throw new LogbookError(
        ErrorCodes.ACTION_OUTSIDE_STEP,
        `run.do(${action.type}) was called outside a step.`,
        `Wrap it in a step: await run.step("…", () => run.do(${action.type.replace(/\W+(\w)/g, (_, c: string) => c.toUpperCase())}, args)).`,
      );
    }
    const location = this.d.hooks?.captureLocations ? callerLocation() : undefined;
    const v = await validate(action.args, args);
    if (!v.ok) {
      throw new LogbookError(ErrorCodes.INVALID_ARGS, `The args of ${action.type} are invalid: ${v.message}.`, `Fix the values passed to run.do(${action.type}, …) so they match its args schema.`, { type: action.type });
    }
    const parsed = v.value as InferOutput<S>;
    const argsJson = toJournalJson(parsed, `The args of ${action.type}`, 'Pass plain JSON values (strings, numbers, booleans, arrays, plain objects) as action args.') ?? 'null';
    let key: unknown;
    try {
      key = action.key(parsed, this.api);
    } catch (err) {
      throw new LogbookError(ErrorCodes.INVALID_DEFINITION, `The key function of ${action.type} threw: ${describe(err)}.`, 'Make key(args, run) a pure function of the args and run id.', { type: action.type });
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new LogbookError(ErrorCodes.INVALID_DEFINITION, `The key function of ${action.type} returned ${JSON.stringify(key)}, not a non-empty string.`, 'Return a string derived from the action\'s meaning, e.g. `email:${run.id}:${args.to}`.', { type: action.type });
    }
    const same = this.inflight.get(key);
    if (same) {
      if (same.args !== argsJson) throw keyConflict(action.type, key, same.args, argsJson);
      return (await same.promise) as R;
    }
    const na: NewAction = { id: key, stepIdx: frame.idx, type: action.type, version: action.version, effect: action.effect, args: argsJson };
    const promise = this.runAction(frame, action, parsed, na, location);
    this.inflight.set(key, { args: argsJson, promise });
    try {
      return (await promise) as R;
    } finally {
      this.inflight.delete(key);
    }
  }

  private snapshot(def: { readonly verify?: unknown; readonly compensate?: unknown; readonly approval?: boolean }, na: NewAction, args: unknown, phase: ActionPhase, row: ActionRow | undefined, location: SourceLocation | undefined, extra: Partial<ActionSnapshot> = {}): ActionSnapshot {
    return {
      id: na.id,
      type: na.type,
      version: na.version,
      effect: na.effect,
      args,
      phase,
      status: row?.status ?? 'new',
      executions: row?.executions ?? 0,
      stepIdx: na.stepIdx,
      hasVerify: typeof def.verify === 'function',
      hasCompensate: typeof def.compensate === 'function',
      approval: def.approval === true,
      ...(row?.reconciliation ? { reconciliation: row.reconciliation } : {}),
      ...(location ? { location } : {}),
      ...extra,
    };
  }

  private async runAction<S extends StandardSchema, R>(frame: StepFrame, def: ActionDefinition<S, R>, args: InferOutput<S>, na: NewAction, location: SourceLocation | undefined): Promise<R> {
    if (this.d.writer.holdsPending(na.id)) this.d.writer.writePending();
    const row = this.d.reader.action(this.runId, na.id);
    if (row) {
      if (row.type !== na.type || row.args !== na.args) throw keyConflict(na.type, na.id, row.args, na.args, row.type);
      frame.open.delete(na.id);
      if (row.version !== na.version) {
        const w = `${na.type} ${na.id} was journaled by version ${row.version} and is now version ${na.version}`;
        this.d.stats.warnings.push(w);
        this.d.log(`warning: ${w}; continuing because its key is unchanged.`);
        this.d.writer.note('action.version-changed', { from: row.version, to: na.version }, na.stepIdx, na.id);
      }
      switch (row.status) {
        case 'committed': {
          this.d.stats.actionsSkipped++;
          const result = fromJournalJson(row.result) as R;
          if (this.d.hooks?.pause) await this.pauseAction('action:skipped', `skip: ${na.type} ${na.id} is committed in the journal; its result is returned without running`, this.snapshot(def, na, args, 'skipped', row, location, { result }));
          return result;
        }
        case 'started':
          return this.reconcile(def, na, args, row, location);
        case 'failed':
          return this.execute(def, na, args, row, location, null);
        case 'awaiting-approval':
          return this.gate(def, na, args, row, location);
        case 'rejected':
          throw new ApprovalRejectedError(na.type, na.id, row.approval_note ?? undefined);
      }
    }
    for (const open of frame.open.values()) {
      if (open.type === na.type && open.version !== na.version && open.status === 'started') {
        throw new LogbookError(
          ErrorCodes.VERSION_CHANGED,
          `${na.type} ${open.id} is in doubt from version ${open.version}, and version ${na.version} now derives a different key (${na.id}) in step "${frame.name}": running it could repeat the effect. Nothing new was executed.`,
          `Settle the in-doubt action first with the old script (\`logbook resume ${this.runId} --decide ${open.id}=happened|not-happened\`), or keep the old key format until in-flight runs finish.`,
          { inDoubt: open.id, newKey: na.id },
        );
      }
    }
    if (def.effect === 'read-only') return this.observe(def, na, args, location);
    if (def.approval) return this.gate(def, na, args, undefined, location);
    return this.execute(def, na, args, undefined, location, null);
  }

  private ctx(id: string): EffectContext {
    return { idempotencyKey: id, runId: this.runId, attempt: this.attempt };
  }

  /** The bracket: `started` durable, execute, `committed` with the result. */
  private async execute<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow | undefined, location: SourceLocation | undefined, reconciliation: Reconciliation | null): Promise<R> {
    this.checkStop();
    this.d.faults.hit('action:before-start', na.type);
    const executions = row?.executions ?? 0;
    const nonIdem = def.effect === 'non-idempotent';
    if (this.d.hooks?.pause) await this.pauseAction('action:before-start', `${nonIdem ? 'non-idempotent ' : ''}${na.type} ${na.id} is about to start`, this.snapshot(def, na, args, 'before-start', row, location));
    this.checkStop();
    this.d.writer.actionStarted(na, row !== undefined, reconciliation);
    this.d.faults.hit('action:after-start', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:after-start', `${na.type} ${na.id}: started is durable; execute runs next`, this.snapshot(def, na, args, 'started', row, location, { status: 'started', executions }));
    this.d.writer.actionExecuting(na.stepIdx, na.id);
    let result: R;
    try {
      result = await def.execute(args, this.ctx(na.id));
    } catch (err) {
      this.d.writer.actionFailed(na.stepIdx, na.id, errorRecord(err));
      if (this.d.hooks?.pause) await this.pauseAction('action:failed', `${na.type} ${na.id} failed: ${describe(err)}`, this.snapshot(def, na, args, 'failed', row, location, { status: 'failed', executions: executions + 1, error: errorRecord(err) }));
      throw err;
    }
    this.d.faults.hit('action:after-execute', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:after-execute', `${na.type} ${na.id} executed; committed is written next`, this.snapshot(def, na, args, 'executed', row, location, { status: 'started', executions: executions + 1, result }));
    const json = toJournalJson(result, `The result of ${na.type} ${na.id}`, 'Return plain JSON from execute; the action stays in doubt and is reconciled on resume.');
    this.d.writer.actionCommitted(na.stepIdx, na.id, json, reconciliation);
    this.d.stats.actionsExecuted++;
    if (reconciliation) this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: reconciliation });
    this.d.faults.hit('action:after-commit', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:committed', `${na.type} ${na.id} committed`, this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', executions: executions + 1, result, ...(reconciliation ? { reconciliation } : {}) }));
    return result;
  }

  /** A read-only action: recorded for visibility, no bracket and no fsync. */
  private async observe<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, location: SourceLocation | undefined): Promise<R> {
    this.checkStop();
    this.d.faults.hit('action:before-start', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:before-start', `read-only ${na.type} ${na.id} is about to run`, this.snapshot(def, na, args, 'before-start', undefined, location));
    this.checkStop();
    const result = await def.execute(args, this.ctx(na.id));
    this.d.faults.hit('action:after-execute', na.type);
    const json = toJournalJson(result, `The result of ${na.type} ${na.id}`, 'Return plain JSON from execute.');
    this.d.writer.actionObserved(na, json);
    this.d.stats.actionsObserved++;
    this.d.faults.hit('action:after-commit', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:committed', `read-only ${na.type} ${na.id} recorded`, this.snapshot(def, na, args, 'committed', undefined, location, { status: 'committed', executions: 1, result }));
    return result;
  }

  private async reconcile<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined): Promise<R> {
    this.checkStop();
    const how =
      def.effect === 'read-only'
        ? 'it is read-only, so it runs again'
        : row.decision
          ? `a person decided it ${row.decision === 'happened' ? 'happened' : 'did not happen'}`
          : def.verify
            ? 'verify asks the outside system whether it happened'
            : def.effect === 'idempotent'
              ? 'it is idempotent, so it runs again with the same key'
              : 'it has no verify, so a person must decide';
    if (this.d.hooks?.pause) await this.pauseAction('action:reconcile', `in doubt: ${na.type} ${na.id} was started but not committed; ${how}`, this.snapshot(def, na, args, 'in-doubt', row, location));
    if (def.effect === 'read-only') return this.execute(def, na, args, row, location, 're-executed');
    if (def.effect === 'non-idempotent' && row.decision) return this.applyDecision(def, na, args, row, location, row.decision);
    if (def.verify) return this.verify(def, na, args, row, location);
    if (def.effect === 'idempotent') return this.execute(def, na, args, row, location, 're-executed');
    const ev = { kind: 'action:decision' as const, run: this.runSnapshot(), detail: `${na.type} ${na.id} has no verify: did it happen?`, action: this.snapshot(def, na, args, 'in-doubt', row, location, { reconciliation: 'needs-decision' as const }) };
    const decided = this.d.hooks?.decision ? await this.d.hooks.decision(ev) : undefined;
    if (decided) {
      this.d.writer.decision(na.stepIdx, na.id, decided);
      return this.applyDecision(def, na, args, row, location, decided);
    }
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: 'needs-decision' });
    this.currentStatus = 'needs-decision';
    this.d.writer.runStatus('needs-decision', { data: { actionId: na.id, type: na.type, reason: `${na.type} has no verify` } });
    return this.suspend(new RunSuspended('needs-decision', `${na.type} ${na.id} was started but not committed, and it has no verify: a person must decide whether it happened.`, na.id));
  }

  private async applyDecision<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined, decision: 'happened' | 'not-happened'): Promise<R> {
    if (decision === 'not-happened') return this.execute(def, na, args, row, location, 'decided-not-happened');
    this.d.writer.actionCommitted(na.stepIdx, na.id, null, 'decided-happened');
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: 'decided-happened' });
    if (this.d.hooks?.pause) await this.pauseAction('action:reconciled', `${na.type} ${na.id}: decided it happened; marked committed without executing`, this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', reconciliation: 'decided-happened' }));
    return undefined as R;
  }

  private async verify<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined): Promise<R> {
    let found: R | undefined;
    try {
      found = await def.verify?.(args, this.ctx(na.id));
    } catch (err) {
      throw new LogbookError(
        ErrorCodes.VERIFY_FAILED,
        `verify of ${na.type} ${na.id} threw: ${describe(err)}. The action is still in doubt and nothing was executed.`,
        `Fix verify (or the system it asks) and run \`logbook resume ${this.runId}\` again, or decide with --decide ${na.id}=happened|not-happened.`,
        { actionId: na.id },
      );
    }
    if (found === undefined) return this.execute(def, na, args, row, location, 'verified-absent');
    const verified: R = found;
    const json = toJournalJson(found, `The verified result of ${na.type} ${na.id}`, 'Return plain JSON (or undefined when not found) from verify.');
    this.d.writer.actionCommitted(na.stepIdx, na.id, json, 'verified');
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: 'verified' });
    if (this.d.hooks?.pause) await this.pauseAction('action:reconciled', `${na.type} ${na.id}: verify found it; marked committed without executing`, this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', reconciliation: 'verified', result: verified }));
    return verified;
  }

  /** An approval gate: execute once approved; otherwise wait for the host or suspend in awaiting-approval. */
  private async gate<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow | undefined, location: SourceLocation | undefined): Promise<R> {
    this.checkStop();
    if (row?.approval === 'approved') return this.execute(def, na, args, row, location, null);
    if (!row) this.d.writer.awaitingApproval(na);
    const current = row ?? this.d.reader.action(this.runId, na.id);
    const ev = { kind: 'action:approval' as const, run: this.runSnapshot(), detail: `approval gate: ${na.type} ${na.id} waits for a person to approve or reject`, action: this.snapshot(def, na, args, 'awaiting-approval', current, location) };
    if (this.d.hooks?.pause) await this.pauseAction('action:approval', ev.detail, ev.action);
    const decided = this.d.hooks?.approval ? await this.d.hooks.approval(ev) : undefined;
    if (decided) {
      this.d.writer.approval(na.stepIdx, na.id, decided.approved, decided.note ?? null);
      if (!decided.approved) throw new ApprovalRejectedError(na.type, na.id, decided.note);
      return this.execute(def, na, args, current, location, null);
    }
    this.currentStatus = 'awaiting-approval';
    this.d.writer.runStatus('awaiting-approval', { data: { actionId: na.id, type: na.type } });
    return this.suspend(new RunSuspended('awaiting-approval', `${na.type} ${na.id} waits for approval.`, na.id));
  }
}

function keyConflict(type: string, id: string, before: string, now: string, beforeType?: string): LogbookError {
  return new LogbookError(
    ErrorCodes.KEY_CONFLICT,
    `Action id ${id} was used ${beforeType && beforeType !== type ? `by ${beforeType} and now by ${type}` : `twice by ${type}`} with different args (${clip(before)} then ${clip(now)}). Nothing new was executed.`,
    'Make the key include whatever distinguishes the two effects (e.g. the recipient), or pass the same args.',
    { id, type, before, now, ...(beforeType ? { beforeType } : {}) },
  );
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
