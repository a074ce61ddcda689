// One attempt of one run: the `run` object a script receives, with replay of steps and the action bracket.

import { AsyncLocalStorage } from 'node:async_hooks';
import { ApprovalRejectedError, ErrorCodes, LogbookError, RunSuspended, describe, errorRecord, isDefiniteFailure, markInDoubt } from './errors';
import { actionRegistry, isAction, type ActionDefinition, type AgentDefinition, type DoOptions, type EffectContext, type ErrorClass } from './define';
import { reviveError } from './errorRevive';
import { requireWellFormed } from './wellFormed';
import { VERIFY_TIMEOUT_MS, verifyTimedOut, withTimeout } from './timeout';
import { isStorageError } from './store/storageError';
import { actionPlace, fromJournalJson, toJournalJson, type JournalPlace } from './json';
import { validate, type InferOutput, type StandardSchema } from './schema';
import { InjectedFault, formatCrashSpec, type Faults } from './faults';
import type { ActionPhase, ActionSnapshot, PauseEvent, PauseKind, RuntimeHooks, SourceLocation, StepSnapshot } from './hooks';
import { actionPlan, afterExecuteError, failedMayHaveHappened, reconcilePlan, type ReconcilePlan } from './policy';
import { journaledError, settleInDoubt } from './settle';
import { journaledDecision, type JournaledDecision } from './decisions';
import { callerLocation, validSite, wantLocations } from './location';
import { ReadAhead, textSize } from './readAhead';
import { StepActions } from './stepActions';
import type { ActionRow, ReplayStepRow } from './store/rows';
import type { JournalReader } from './store/reader';
import type { NewAction, RunWriter } from './store/writer';
import type { Reconciliation, RunApi, RunStatus } from './types';
import type { AttemptStats } from './outcomes';
import { SECRET_FIELD_HINT, warnSecretFields } from './warnings';

export type { AttemptStats } from './outcomes';


export function emptyStats(): AttemptStats {
  return { stepsReplayed: 0, stepsRun: 0, stepsRedone: 0, actionsSkipped: 0, actionsExecuted: 0, actionsObserved: 0, reconciled: [], leftInDoubt: [], warnings: [] };
}

/**
 * The step each async context is in, for every session of the process: one storage, never one per session. Node 20
 * keeps an enabled AsyncLocalStorage for good, and every promise created anywhere pays for each one, so a storage per
 * session made a long-lived worker or server slower with every run it drove. An entry names its session; `outer`
 * keeps the frame of another session whose step this one runs inside.
 */
interface StepContext {
  readonly session: RunSession;
  readonly frame: StepFrame;
  readonly outer: StepContext | undefined;
}
const stepContexts = new AsyncLocalStorage<StepContext>();

interface StepFrame {
  readonly idx: number;
  readonly name: string;
  readonly redone: boolean;
  readonly location: SourceLocation | undefined;
  /** Unfinished actions an earlier attempt left in this step, not yet claimed by a run.do call. */
  readonly open: Map<string, ActionRow>;
  /** For a redone step, what earlier attempts journaled in it, prefetched in start order for the skip fast path. */
  readonly journal: StepActions | undefined;
  /**
   * Every run.do this step started and not yet settled, awaited or not: the step ends only once none is left; and the
   * first of them that stopped the run (needs a decision, awaits approval), which then stops the step too.
   */
  readonly actions: { readonly pending: Set<Promise<unknown>>; stopped: RunSuspended | undefined };
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
  private readonly cursor: StepCursor;
  private readonly inflight = new Map<string, { type: string; args: string; promise: Promise<unknown> }>();
  private readonly pending = new Set<Promise<unknown>>();
  private stepCounter = 0;
  private readonly runningSteps = new Map<number, string>();
  private currentStatus: RunStatus = 'running';
  /** Fields of args named like a secret already warned about in this attempt: one warning per field. */
  private readonly warnedFields = new Set<string>();

  constructor(private readonly d: SessionDeps) {
    if (d.hooks?.captureLocations) wantLocations();
    this.runId = d.writer.lease.runId;
    this.attempt = d.writer.lease.attempt;
    this.cursor = new StepCursor(d.reader, this.runId, this.attempt, d.reader.stepCount(this.runId));
    const api: RunApi = {
      id: this.runId,
      agent: d.agent.name,
      attempt: this.attempt,
      step: (name, fn) => this.replayFast(name, fn) ?? this.track(this.step(name, fn)),
      do: (action, args, options) => this.skipFast(action, args) ?? this.inStep(this.track(this.doAction(action, args, options))),
      currentStep: () => {
        const frame = this.currentFrame();
        return frame ? { index: frame.idx, name: frame.name } : undefined;
      },
      note: (kind, data) => this.note(kind, data),
      log: (line) => this.d.log(String(line)),
    };
    this.api = Object.freeze(api);
  }

  /** What the run waits on right now, for a stuck or exiting process's message: the running steps and actions. */
  waitingOn(): string {
    const steps = [...this.runningSteps.values()].map((n) => `step ${JSON.stringify(n)}`);
    const actions = [...this.inflight].map(([id, a]) => `${a.type} ${id}`);
    return [...steps, ...(actions.length ? [`action ${actions.join(', ')}`] : [])].join(', ');
  }

  /** Waits for every step and action still in flight (a branch of Promise.all may outlive the script's await). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Ties an action to the step it was started in, so that step cannot end while the action is unsettled. */
  private inStep<T>(p: Promise<T>): Promise<T> {
    const actions = this.currentFrame()?.actions;
    if (actions) {
      actions.pending.add(p);
      p.then(
        () => void actions.pending.delete(p),
        (err: unknown) => {
          if (err instanceof RunSuspended) actions.stopped ??= err;
          actions.pending.delete(p);
        },
      );
    }
    return p;
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
    requireWellFormed(kind, 'The kind of a note');
    const json = toJournalJson(data, `The note ${kind}`, 'Pass plain JSON to run.note.');
    this.d.writer.note(kind, json === null ? null : (JSON.parse(json) as unknown), this.currentFrame()?.idx ?? null);
  }

  // ---- pausing -------------------------------------------------------------------------------------------

  private runSnapshot(): PauseEvent['run'] {
    return { id: this.runId, agent: this.d.agent.name, attempt: this.attempt, status: this.currentStatus, input: this.d.input };
  }

  /** A typed boundary event (no prose: the host words it). */
  private async pause(ev: Omit<PauseEvent, 'run'>): Promise<void> {
    const hooks = this.d.hooks;
    if (!hooks?.pause) return;
    // A host that stops here shows the journal: the records written behind go in first.
    this.d.writer.writePending();
    await hooks.pause({ ...ev, run: this.runSnapshot() });
  }

  /** Callers test `hooks.pause` first, so a run with no host builds no snapshot and awaits nothing. */
  private pauseAction(kind: PauseKind, action: ActionSnapshot, plan?: ReconcilePlan): Promise<void> {
    return this.pause({ kind, action, ...(plan ? { plan } : {}) });
  }

  private checkStop(): void {
    if (this.suspended) throw this.suspended;
    // A journal that failed stays failed for this attempt, even for a script that caught its error: nothing new starts.
    if (this.d.writer.broken) throw this.d.writer.broken;
    // A lost lease stops the run before any new effect, even one no fenced write precedes (a read-only action).
    this.d.writer.assertHolds();
    if (this.d.hooks?.shouldStop?.()) {
      this.suspended = new RunSuspended('interrupted', 'The host asked the run to stop; it is resumable.');
      throw this.suspended;
    }
  }

  private suspension(): RunSuspended | undefined {
    return this.suspended;
  }

  private suspend(s: RunSuspended): never {
    this.suspended ??= s;
    const frame = this.currentFrame();
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
    try {
      return this.replayFastRead<T>(name);
    } catch (err) {
      this.readFailed(err);
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private replayFastRead<T>(name: string): Promise<T> | undefined {
    const journaled = this.cursor.get(this.stepCounter);
    if (journaled?.status !== 'completed' || journaled.name !== name || this.currentFrame()) return undefined;
    const idx = this.stepCounter++;
    this.d.stats.stepsReplayed++;
    return Promise.resolve(fromJournalJson(journaled.result, () => this.stepPlace(idx, name, 'result')) as T);
  }

  private stepPlace(idx: number, name: string, column: 'result' | 'error'): JournalPlace {
    return { runId: this.runId, table: 'steps', idx, name, column };
  }

  /**
   * A journal that cannot be read back (a damaged value, a row that does not match) is not the script's failure: like a
   * write that failed, every later write of this attempt throws the same error, so a script that catches it cannot go
   * on, and the engine stops the run resumable with no declared policy.
   */
  private readFailed(err: unknown): void {
    if (isStorageError(err)) this.d.writer.broken ??= err;
  }

  /** A read of the journal inside the attempt, through readFailed. */
  private read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this.readFailed(err);
      throw err;
    }
  }

  private async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new LogbookError(ErrorCodes.STEP_MISUSE, 'run.step was called without a name.', 'Give every step a stable, descriptive name: run.step("load recipients", () => …).');
    }
    if (typeof fn !== 'function') {
      throw new LogbookError(ErrorCodes.STEP_MISUSE, `run.step(${JSON.stringify(name)}) was called without a function.`, 'Pass the step body as the second argument.');
    }
    requireWellFormed(name, `The name of step #${this.stepCounter + 1}`);
    const parent = this.currentFrame();
    if (parent) {
      throw new LogbookError(
        ErrorCodes.STEP_MISUSE,
        `run.step(${JSON.stringify(name)}) was called inside step ${JSON.stringify(parent.name)}; steps do not nest.`,
        'Call the inner work with run.do inside the outer step, or make it a step of its own after it.',
      );
    }
    const idx = this.stepCounter++;
    const location = this.d.hooks?.captureLocations ? callerLocation() : undefined;
    const journaled = this.read(() => this.cursor.get(idx));
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
      const result = this.read(() => fromJournalJson(journaled.result, () => this.stepPlace(idx, name, 'result'))) as T;
      if (this.d.hooks?.pause) {
        await this.pause({ kind: 'step:before', step: { idx, name, replayed: true, redone: false, result, ...(location ? { location } : {}) } });
      }
      return result;
    }
    if (journaled?.status === 'failed' && idx + 1 < this.cursor.count) {
      // The script caught this failure and went on in an earlier attempt: replay the failure, not a retry, as the
      // same error (class, code, message) so the script's catch takes the same path again.
      throw this.read(() => reviveError(journaled.error, () => this.stepPlace(idx, name, 'error')));
    }
    this.checkStop();
    this.d.faults.hit('step:before', name);
    const redone = journaled !== undefined;
    const snapshot = (result?: unknown): StepSnapshot => ({ idx, name, replayed: false, redone, ...(result !== undefined ? { result } : {}), ...(location ? { location } : {}) });
    if (this.d.hooks?.pause) await this.pause({ kind: 'step:before', step: snapshot() });
    // A host that paused here may have asked to stop; nothing of this step is written yet.
    this.checkStop();
    const open = new Map<string, ActionRow>();
    if (redone) for (const a of this.read(() => this.d.reader.openActionsOfStep(this.runId, idx))) if (a.attempt < this.attempt) open.set(a.id, a);
    this.d.writer.stepStarted(idx, name, redone);
    if (redone) this.d.stats.stepsRedone++;
    else this.d.stats.stepsRun++;
    let result: T;
    try {
      const journal = redone ? new StepActions(this.d.reader, this.runId, idx, this.attempt) : undefined;
      const actions: StepFrame['actions'] = { pending: new Set(), stopped: undefined };
      this.runningSteps.set(idx, name);
      try {
        result = await stepContexts.run({ session: this, frame: { idx, name, redone, location, open, journal, actions }, outer: stepContexts.getStore() }, fn);
      } finally {
        // A run.do the body did not await must not outlive the step: checkpointed before its action committed, a
        // crash would leave the step replayed as completed and the action in doubt for good.
        while (actions.pending.size > 0) await Promise.allSettled([...actions.pending]);
        this.runningSteps.delete(idx);
      }
      if (actions.stopped) throw actions.stopped;
    } catch (err) {
      // A storage error is not the step's failure: recorded as one, a script that caught it would replay it forever.
      if (!(err instanceof RunSuspended) && !(err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST) && !isStorageError(err)) this.d.writer.stepFailed(idx, errorRecord(err));
      throw err;
    }
    // A step in which the run was suspended (a catch-all retry loop that swallowed a stop for a decision, or an approval
    // gate inside a tool the model called, whose error an SDK caught) returns a result it never earned: not
    // checkpointed. A parallel step that did finish still is. (Read through a call: the body may have set it.)
    const caught = this.suspension();
    if (caught && this.suspendedSteps.has(idx)) throw caught;
    const json = toJournalJson(result, `The result of step "${name}"`, 'Return plain JSON from the step: strings, numbers, booleans, arrays and plain objects.');
    this.d.writer.stepCompleted(idx, json);
    this.d.faults.hit('step:after-checkpoint', name);
    if (this.d.hooks?.pause) await this.pause({ kind: 'step:after', step: snapshot(result) });
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
    const journal = this.currentFrame()?.journal;
    if (!journal) return undefined;
    try {
      const v = action.args['~standard'].validate(args);
      if (v instanceof Promise || v.issues) return undefined;
      const argsJson = toJournalJson(v.value, action.type, '') ?? 'null';
      const key = action.key(v.value, this.api);
      if (typeof key !== 'string' || key.length === 0 || this.inflight.has(key)) return undefined;
      const row = journal.peek(key);
      if (row?.status !== 'committed' || row.type !== action.type || row.version !== action.version || row.args !== argsJson) return undefined;
      // A damaged result throws here, and the full path reads the row again and stops the run.
      const result = fromJournalJson(row.result, () => ({ runId: this.runId, table: 'actions', id: key, column: 'result' })) as R;
      journal.take(key);
      this.d.stats.actionsSkipped++;
      return Promise.resolve(result);
    } catch {
      return undefined;
    }
  }

  private async doAction<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: unknown, options?: DoOptions): Promise<R> {
    this.checkStop();
    const frame = this.currentFrame();
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
    // An integration names the user's line it acted for; else the first frame of the user's own code calls run.do.
    const location = this.d.hooks?.captureLocations ? (validSite(options?.at) ?? callerLocation()) : undefined;
    const v = await validate(action.args, args);
    if (!v.ok) {
      throw new LogbookError(ErrorCodes.INVALID_ARGS, `The args of ${action.type} are invalid: ${v.message}.`, `Fix the values passed to run.do(${action.type}, …) so they match its args schema.`, { type: action.type });
    }
    const parsed = v.value as InferOutput<S>;
    const argsJson = toJournalJson(parsed, `The args of ${action.type}`, 'Pass plain JSON values (strings, numbers, booleans, arrays, plain objects) as action args.') ?? 'null';
    if (SECRET_FIELD_HINT.test(argsJson)) warnSecretFields(parsed, 'args', `the args of ${action.type}`, this.d.log, this.warnedFields);
    let key: unknown;
    try {
      key = action.key(parsed, this.api);
    } catch (err) {
      throw new LogbookError(ErrorCodes.INVALID_DEFINITION, `The key function of ${action.type} threw: ${describe(err)}.`, 'Make key(args, run) a pure function of the args and run id.', { type: action.type });
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new LogbookError(ErrorCodes.INVALID_DEFINITION, `The key function of ${action.type} returned ${JSON.stringify(key)}, not a non-empty string.`, 'Return a string derived from the action\'s meaning, e.g. `email:${run.id}:${args.to}`.', { type: action.type });
    }
    requireWellFormed(key, `The key of ${action.type}`, { type: action.type });
    const same = this.inflight.get(key);
    if (same) {
      // The same id in flight is the same effect only when both the type and the args agree, as in the journal's check.
      if (same.type !== action.type || same.args !== argsJson) throw keyConflict(action.type, key, same.args, argsJson, same.type);
      return (await same.promise) as R;
    }
    const na: NewAction = { id: key, stepIdx: frame.idx, type: action.type, version: action.version, effect: action.effect, args: argsJson, inverse: typeof action.compensate === 'function' };
    const promise = this.runAction(frame, action, parsed, na, location);
    this.inflight.set(key, { type: action.type, args: argsJson, promise });
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

  /** The step of this session the calling code runs inside, if any. */
  private currentFrame(): StepFrame | undefined {
    for (let c = stepContexts.getStore(); c; c = c.outer) if (c.session === this) return c.frame;
    return undefined;
  }

  private async runAction<S extends StandardSchema, R>(frame: StepFrame, def: ActionDefinition<S, R>, args: InferOutput<S>, na: NewAction, location: SourceLocation | undefined): Promise<R> {
    if (this.d.writer.holdsPending(na.id)) this.d.writer.writePending();
    const row = this.read(() => this.d.reader.action(this.runId, na.id));
    if (row) {
      if (row.type !== na.type || row.args !== na.args) throw keyConflict(na.type, na.id, row.args, na.args, row.type);
      frame.open.delete(na.id);
      if (row.version !== na.version) {
        const w = `${na.type} ${na.id} was journaled by version ${row.version} and is now version ${na.version}`;
        this.d.stats.warnings.push(w);
        this.d.log(`warning: ${w}; continuing because its key is unchanged.`);
        this.d.writer.note('action.version-changed', { from: row.version, to: na.version }, na.stepIdx, na.id);
      }
      const plan = actionPlan({ effect: def.effect, hasVerify: typeof def.verify === 'function', status: row.status, afterError: row.error !== null, decision: row.decision, approval: row.approval });
      switch (plan.kind) {
        case 'skip': {
          this.d.stats.actionsSkipped++;
          const result = row.result === null && row.reconciliation === 'decided-happened' ? unrecorded(def, args) : (this.read(() => fromJournalJson(row.result, () => actionPlace(row, 'result'))) as R);
          if (this.d.hooks?.pause) await this.pauseAction('action:skipped', this.snapshot(def, na, args, 'skipped', row, location, { result }));
          return result;
        }
        case 'reconcile':
          return this.reconcile(def, na, args, row, location, plan.plan);
        case 'retry':
          return this.execute(def, na, args, row, location, null);
        case 'gate':
        case 'execute-approved':
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
    return { idempotencyKey: id, runId: this.runId, attempt: this.attempt, ...this.d.writer.leaseChecks };
  }

  /** The bracket: `started` (durable, or lazy for a new idempotent action), execute, `committed` with the result. */
  private async execute<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow | undefined, location: SourceLocation | undefined, reconciliation: Reconciliation | null): Promise<R> {
    this.checkStop();
    this.d.faults.hit('action:before-start', na.type);
    const executions = row?.executions ?? 0;
    if (this.d.hooks?.pause) await this.pauseAction('action:before-start', this.snapshot(def, na, args, 'before-start', row, location));
    this.checkStop();
    // A new idempotent action's `started` need not be fsynced: lost in a power cut, the action is simply not found and
    // runs again with its key, which is what reconciling it in doubt would do. Its `committed` stays durable.
    // One declared `started: 'with-result'` goes further: its `started` waits for its result's commit (see defineAction).
    const fresh = row === undefined && reconciliation === null;
    const behind = fresh && def.started === 'with-result' && def.effect === 'idempotent';
    if (behind) this.d.writer.actionStartedBehind(na);
    else this.d.writer.actionStarted(na, row !== undefined, reconciliation, def.effect !== 'idempotent' || !fresh);
    this.d.faults.hit('action:after-start', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:after-start', this.snapshot(def, na, args, 'started', row, location, { status: 'started', executions }));
    this.d.writer.actionExecuting(na.stepIdx, na.id, behind);
    // The last check before the effect, synchronous with the call: past its lease by this process's clock, the run
    // stops here (LB_LEASE_LOST), whatever was awaited since the writes above.
    const ended = this.d.writer.effectStarting(na.type, na.id);
    let result: R;
    try {
      result = await def.execute(args, this.ctx(na.id));
      ended();
      // Only a non-idempotent action is hurt by an error after its effect; for the others it is a failure, redone by key.
      if (def.effect === 'non-idempotent') this.d.faults.hit('action:after-execute-throw', na.type);
    } catch (err) {
      ended();
      await this.executeThrew(def, na, args, row, location, executions + 1, err);
      throw err;
    }
    this.d.faults.hit('action:after-execute', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:after-execute', this.snapshot(def, na, args, 'executed', row, location, { status: 'started', executions: executions + 1, result }));
    const json = toJournalJson(result, `The result of ${na.type} ${na.id}`, 'Return plain JSON from execute; the action stays in doubt and is reconciled on resume.');
    this.d.writer.actionCommitted(na.stepIdx, na.id, json, reconciliation);
    this.d.stats.actionsExecuted++;
    if (reconciliation) this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: reconciliation });
    this.d.faults.hit('action:after-commit', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:committed', this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', executions: executions + 1, result, ...(reconciliation ? { reconciliation } : {}) }));
    return result;
  }

  /**
   * Execute threw. That is not proof that nothing happened: unless the error is definite (the definition's `failure`
   * classifier or a DefiniteFailure says the outside system refused it), a non-idempotent action stays in doubt (started,
   * with the error) and is reconciled like a crash in flight. The caller rethrows, so the script sees the error.
   */
  private async executeThrew<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow | undefined, location: SourceLocation | undefined, executions: number, err: unknown): Promise<void> {
    const error = errorRecord(err);
    this.noteInjected(err, na);
    const classified = this.classify(def, args, err);
    if (afterExecuteError(def.effect, classified) === 'failed') {
      // The journal keeps whether the effect may have happened all the same: compensation settles such an action first.
      this.d.writer.actionFailed(na.stepIdx, na.id, failedMayHaveHappened(def.effect, classified) ? { ...error, mayHaveHappened: true } : error);
      if (this.d.hooks?.pause) await this.pauseAction('action:failed', this.snapshot(def, na, args, 'failed', row, location, { status: 'failed', executions, error }));
      return;
    }
    this.d.writer.actionInDoubt(na.stepIdx, na.id, error);
    markInDoubt(err);
    this.d.stats.leftInDoubt.push({ id: na.id, type: na.type, error: error.message });
    if (this.d.hooks?.pause) {
      const plan = reconcilePlan({ effect: def.effect, hasVerify: typeof def.verify === 'function', decision: null }, 'resume');
      await this.pauseAction('action:failed', this.snapshot(def, na, args, 'in-doubt', row, location, { status: 'started', executions, error, afterError: true }), plan);
    }
  }

  /** A rehearsal learns from the journal that its armed throw point fired, even when the script caught the error. */
  private noteInjected(err: unknown, na: NewAction): void {
    if (err instanceof InjectedFault) this.d.writer.note('fault.injected', { spec: formatCrashSpec(err.spec) }, na.stepIdx, na.id);
  }

  private classify<S extends StandardSchema, R>(def: ActionDefinition<S, R>, args: InferOutput<S>, err: unknown): ErrorClass | undefined {
    if (isDefiniteFailure(err)) return 'not-happened';
    if (!def.failure) return undefined;
    try {
      const c = def.failure(err, args);
      if (c === 'not-happened' || c === 'in-doubt') return c;
      this.d.log(`warning: the failure classifier of ${def.type} returned ${JSON.stringify(c)}, not "not-happened" or "in-doubt"; the action is kept in doubt.`);
    } catch (thrown) {
      this.d.log(`warning: the failure classifier of ${def.type} threw (${describe(thrown)}); the action is kept in doubt.`);
    }
    return 'in-doubt';
  }

  /** A read-only action: recorded for visibility, no bracket and no fsync. */
  private async observe<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, location: SourceLocation | undefined): Promise<R> {
    this.checkStop();
    this.d.faults.hit('action:before-start', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:before-start', this.snapshot(def, na, args, 'before-start', undefined, location));
    this.checkStop();
    const ended = this.d.writer.effectStarting(na.type, na.id);
    let result: R;
    try {
      result = await def.execute(args, this.ctx(na.id));
    } catch (err) {
      ended();
      // Nothing was journaled for it: a read-only action that failed simply runs again next time.
      if (this.d.hooks?.pause) await this.pauseAction('action:failed', this.snapshot(def, na, args, 'failed', undefined, location, { status: 'failed', executions: 1, error: errorRecord(err) }));
      throw err;
    }
    ended();
    this.d.faults.hit('action:after-execute', na.type);
    const json = toJournalJson(result, `The result of ${na.type} ${na.id}`, 'Return plain JSON from execute.');
    this.d.writer.actionObserved(na, json);
    this.d.stats.actionsObserved++;
    this.d.faults.hit('action:after-commit', na.type);
    if (this.d.hooks?.pause) await this.pauseAction('action:committed', this.snapshot(def, na, args, 'committed', undefined, location, { status: 'committed', executions: 1, result }));
    return result;
  }

  /** An in-doubt action (a crash in flight, or an error from execute) reached again: the policy's plan carried out. */
  private async reconcile<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined, plan: ReconcilePlan): Promise<R> {
    this.checkStop();
    const afterError = row.error !== null;
    const error = afterError ? journaledError(row.error) : undefined;
    if (this.d.hooks?.pause) await this.pauseAction('action:reconcile', this.snapshot(def, na, args, 'in-doubt', row, location, { afterError, ...(error ? { error } : {}) }), plan);
    switch (plan.how) {
      case 'run-again':
      case 'nothing-to-undo':
      case 're-execute-with-key':
        return this.execute(def, na, args, row, location, 're-executed');
      case 'decided-happened':
        return this.applyDecision(def, na, args, row, location, { decision: 'happened', result: row.result });
      case 'decided-not-happened':
        return this.applyDecision(def, na, args, row, location, { decision: 'not-happened', result: null });
      case 'verify':
        return this.verify(def, na, args, row, location);
      case 'needs-decision':
      case 'unknown':
        break;
    }
    const ev = { kind: 'action:decision' as const, run: this.runSnapshot(), plan, action: this.snapshot(def, na, args, 'in-doubt', row, location, { reconciliation: 'needs-decision' as const, afterError, ...(error ? { error } : {}) }) };
    const given = this.d.hooks?.decision ? await this.d.hooks.decision(ev) : undefined;
    if (given) {
      const decided = journaledDecision(na.id, given, 'the decision hook');
      this.d.writer.decision(na.stepIdx, na.id, decided.decision, decided.result);
      return this.applyDecision(def, na, args, row, location, decided);
    }
    return this.needsDecision(na.id, na.type, afterError);
  }

  private needsDecision(id: string, type: string, afterError: boolean): never {
    this.d.stats.reconciled.push({ id, type, outcome: 'needs-decision' });
    this.currentStatus = 'needs-decision';
    this.d.writer.runStatus('needs-decision', { data: { actionId: id, type, reason: `${type} has no verify`, ...(afterError ? { afterError } : {}) } });
    const how = afterError ? 'execute threw an error that does not prove nothing happened' : 'it was started but not committed';
    return this.suspend(new RunSuspended('needs-decision', `${type} ${id} is in doubt (${how}), and it has no verify: a person must decide whether it happened.`, id));
  }


  /**
   * Before a run completes: an action left in doubt by an error the script caught (its step completed, or failed and was
   * caught) is never reached again, so it is settled here: verify, a decision, or the run stops for one. Uses the partial
   * index of in-doubt-after-error actions, so a run with none pays one empty index probe.
   */
  async settleLeftovers(only: (a: ActionRow) => boolean = () => true): Promise<void> {
    // Every action still `started` here is a doubt no call of this attempt claimed: one its execute left after an
    // error the script caught, or one a crash left that the script, taking another branch, never called again.
    for (const a of this.read(() => this.d.reader.inDoubt(this.runId)).filter(only)) {
      this.checkStop();
      const def = actionRegistry().get(a.type);
      if (!def) {
        throw new LogbookError(ErrorCodes.UNKNOWN_ACTION_TYPE, `${a.type} ${a.id} is in doubt, but the script defines no ${a.type} action.`, 'Resume with the script that ran it, or decide it with --decide.', { type: a.type });
      }
      const afterError = a.error !== null;
      const plan = reconcilePlan({ effect: a.effect, hasVerify: typeof def.verify === 'function', decision: a.decision }, 'settle');
      const na: NewAction = { id: a.id, stepIdx: a.step_idx, type: a.type, version: a.version, effect: a.effect, args: a.args };
      const args = this.read(() => fromJournalJson(a.args, () => actionPlace(a, 'args')));
      if (this.d.hooks?.pause) await this.pauseAction('action:reconcile', this.snapshot(def, na, args, 'in-doubt', a, undefined, afterError ? { afterError: true, error: journaledError(a.error) } : {}), plan);
      const hooks = this.d.hooks;
      const ask = hooks?.decision ? () => hooks.decision?.({ kind: 'action:decision', run: this.runSnapshot(), plan, action: this.snapshot(def, na, args, 'in-doubt', a, undefined, { ...(afterError ? { afterError: true, error: journaledError(a.error) } : {}), reconciliation: 'needs-decision' }) }) ?? Promise.resolve(undefined) : undefined;
      const out = await settleInDoubt(a, def, {
        writer: this.d.writer,
        ctx: this.ctx(a.id),
        ...(ask ? { ask } : {}),
        verifyFailed: (err) => this.verifyFailed(a.type, a.id, err),
      });
      if (out.happened === undefined) this.needsDecision(a.id, a.type, afterError);
      else this.d.stats.reconciled.push({ id: a.id, type: a.type, outcome: out.how === 'verify' ? (out.happened ? 'verified' : 'verified-absent') : out.happened ? 'decided-happened' : 'decided-not-happened' });
    }
  }

  /**
   * Before a run is recorded failed: a doubt the script caught in a step that a resume replays instead of running
   * (completed, or failed and caught before a later step) is never reached again, so it is settled now, as before a
   * run completes, or the run stops for a decision instead of failing with it. A doubt in a step that a resume runs
   * again is reconciled there.
   */
  async settleReplayedDoubts(): Promise<void> {
    const count = this.read(() => this.d.reader.stepCount(this.runId));
    await this.settleLeftovers((a) => {
      const step = this.read(() => this.d.reader.step(this.runId, a.step_idx));
      return step?.status === 'completed' || (step?.status === 'failed' && a.step_idx + 1 < count);
    });
  }

  private verifyFailed(type: string, id: string, err: unknown): LogbookError {
    if (err instanceof LogbookError && err.code === ErrorCodes.VERIFY_TIMEOUT) return err;
    return new LogbookError(
      ErrorCodes.VERIFY_FAILED,
      `verify of ${type} ${id} threw: ${describe(err)}. The action is still in doubt and nothing was executed.`,
      `Fix verify (or the system it asks) and run \`logbook resume ${this.runId}\` again, or decide with --decide ${id}=happened|not-happened.`,
      { actionId: id },
    );
  }

  /** A person's decision carried out: not happened, it executes; happened, it is committed with the result they gave
   *  (what run.do returns), or with none, and run.do returns the definition's `unrecordedResult`. */
  private async applyDecision<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined, decided: JournaledDecision): Promise<R> {
    if (decided.decision === 'not-happened') return this.execute(def, na, args, row, location, 'decided-not-happened');
    this.d.writer.actionCommitted(na.stepIdx, na.id, decided.result, 'decided-happened');
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: 'decided-happened' });
    const result = decided.result === null ? unrecorded(def, args) : (JSON.parse(decided.result) as R); // the JSON journaled just now
    if (this.d.hooks?.pause) await this.pauseAction('action:reconciled', this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', reconciliation: 'decided-happened', ...(decided.result !== null ? { result } : {}) }));
    return result;
  }

  private async verify<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow, location: SourceLocation | undefined): Promise<R> {
    let found: R | undefined;
    try {
      found = await withTimeout(def.verify?.(args, this.ctx(na.id)), def.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS, () => verifyTimedOut(na, this.runId, def.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS));
    } catch (err) {
      throw this.verifyFailed(na.type, na.id, err);
    }
    if (found === undefined) return this.execute(def, na, args, row, location, 'verified-absent');
    const verified: R = found;
    const json = toJournalJson(found, `The verified result of ${na.type} ${na.id}`, 'Return plain JSON (or undefined when not found) from verify.');
    this.d.writer.actionCommitted(na.stepIdx, na.id, json, 'verified');
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: 'verified' });
    if (this.d.hooks?.pause) await this.pauseAction('action:reconciled', this.snapshot(def, na, args, 'committed', row, location, { status: 'committed', reconciliation: 'verified', result: verified }));
    return verified;
  }

  /** An approval gate: execute once approved; otherwise wait for the host or suspend in awaiting-approval. */
  private async gate<S extends StandardSchema, R>(def: ActionDefinition<S, R>, na: NewAction, args: InferOutput<S>, row: ActionRow | undefined, location: SourceLocation | undefined): Promise<R> {
    this.checkStop();
    if (row?.approval === 'approved') return this.execute(def, na, args, row, location, null);
    if (!row) this.d.writer.awaitingApproval(na);
    const current = row ?? this.read(() => this.d.reader.action(this.runId, na.id));
    const ev = { kind: 'action:approval' as const, run: this.runSnapshot(), action: this.snapshot(def, na, args, 'awaiting-approval', current, location) };
    if (this.d.hooks?.pause) await this.pauseAction('action:approval', ev.action);
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
    beforeType && beforeType !== type
      ? `Action id ${id} was used by ${beforeType} and now by ${type} (args ${clip(before)} then ${clip(now)}): two action types cannot share an id. Nothing new was executed.`
      : `Action id ${id} was used twice by ${type} with different args (${clip(before)} then ${clip(now)}). Nothing new was executed.`,
    'Make the key include whatever distinguishes the two effects (e.g. the action type or the recipient), or pass the same args.',
    { id, type, before, now, ...(beforeType ? { beforeType } : {}) },
  );
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** What run.do returns for an action decided happened with no result given: the definition's word for it, or undefined. */
function unrecorded<S extends StandardSchema, R>(def: ActionDefinition<S, R>, args: InferOutput<S>): R {
  return (def.unrecordedResult ? def.unrecordedResult(args) : undefined) as R;
}
