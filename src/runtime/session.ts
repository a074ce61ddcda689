// One attempt of one run: the `run` object a script receives, with replay of steps and what run.do does with the journal.

import { parseDuration, waitUntil, type SleepPolicy } from './sleep';
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApprovalRejectedError, ErrorCodes, LogbookError, RunSuspended, describe, errorRecord } from './errors';
import { actionRegistry, isAction, type ActionDefinition, type AgentDefinition, type DoOptions, type StepOptions } from './define';
import { reviveError } from './errorRevive';
import { isStorageError } from './store/storageError';
import { actionPlace, fromJournalJson, journalInvalid, toJournalJson, type JournalPlace } from './json';
import type { InferOutput, StandardSchema } from './schema';
import type { Faults } from './faults';
import type { RuntimeHooks, SourceLocation, StepSnapshot } from './hooks';
import { actionPlan, type ReconcilePlan } from './policy';
import { journaledError, settleInDoubt, settlePlan } from './settle';
import { carryOut, decisionAsker } from './carryOut';
import { callerLocation, validSite, wantLocations } from './location';
import { OpenActions, StepActions } from './stepActions';
import { StepCursor } from './stepCursor';
import { LAZY_ABOVE_BYTES, lazyJournalValue, settledWith } from './lazyValue';
import { AttemptHost, actionSnapshot } from './attemptHost';
import { Bracket, type ActionCall } from './bracket';
import { actionKey, checkActionCall, checkStepCall, checkedArgs, checkedNote, keyConflict } from './apiChecks';
import type { ActionRow, ReplayStepHead } from './store/rows';
import type { JournalReader } from './store';
import type { NewAction, RunWriter } from './store';
import type { RunApi } from './types';
import type { AttemptStats } from './outcomes';
import { approvalEventName, checkWaitCall, journaledDeadline, replayedWait } from './wait';
import { validate } from './schema';
import type { InboxRow } from './store/rows';
import { ChildCalls, checkChildCall, type ChildEngine } from './child';
import type { PauseEvent } from './hooks';

export type { AttemptStats } from './outcomes';

export function emptyStats(): AttemptStats {
  return {
    stepsReplayed: 0,
    stepsRun: 0,
    stepsRedone: 0,
    actionsSkipped: 0,
    actionsExecuted: 0,
    actionsObserved: 0,
    reconciled: [],
    leftInDoubt: [],
    warnings: [],
  };
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
  readonly open: OpenActions;
  /** For a redone step, what earlier attempts journaled in it, prefetched in start order for the skip fast path. */
  readonly journal: StepActions | undefined;
  /**
   * Every run.do this step started and not yet settled, awaited or not: the step ends only once none is left; and the
   * first of them that stopped the run (needs a decision, awaits approval), which then stops the step too.
   */
  readonly actions: { readonly inFlight: Set<Promise<unknown>>; stopped: RunSuspended | undefined };
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
  /** The journal's target (safe to print): integrations that keep their own records beside the run's find it on the run object. */
  readonly journal?: string;
  readonly sleep?: SleepPolicy;
  /** What run.child needs of the engine (driving and resuming child runs); absent, run.child is refused. */
  readonly children?: ChildEngine;
  /** When this run is itself a child: its parent's child:start boundary (see PauseEvent.caller). */
  readonly caller?: PauseEvent;
}

/** How many action ids a session keeps to skip looking up new ones (see RunSession.journaledHere); past it, it looks up. */
const JOURNALED_HERE_MAX = 100_000;

/** The key of the journal target on a run object, shared by every copy of the runtime (agent-logbook/langgraph reads it). */
export const RUN_JOURNAL = Symbol.for('agent-logbook.run-journal');

/**
 * The key of the run's lease fence on a run object: its epoch, and the check of the lease by this process's own clock.
 * agent-logbook/langgraph's saver fences the thread's checkpoints with it, as the writer fences every transition.
 */
export const RUN_FENCE = Symbol.for('agent-logbook.run-fence');

export class RunSession {
  readonly api: RunApi;
  private readonly h: AttemptHost;
  private readonly bracket: Bracket;
  /** The steps inside which the run was suspended. */
  private readonly suspendedSteps = new Set<number>();
  private readonly runId: string;
  private readonly attempt: number;
  private readonly cursor: StepCursor;
  /** The actions running now, by id: a second call with the same id waits for the first. */
  private readonly running = new Map<string, { type: string; args: string; promise: Promise<unknown> }>();
  /** Every step and action call of the script not yet settled, awaited or not. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private stepCounter = 0;
  private readonly runningSteps = new Map<number, string>();
  /** Fields of args named like a secret already warned about in this attempt: one warning per field. */
  private readonly warnedFields = new Set<string>();
  /**
   * The action ids this attempt started, in a run that held no action when it began: any other id is certainly not
   * journaled (no one else writes to a run whose lease this session holds), so run.do does not look it up. Undefined
   * when that is not known: the run had actions before, or this attempt started more than JOURNALED_HERE_MAX.
   */
  private journaledHere: Set<string> | undefined;
  /** The run object's methods the script calls: a source line is captured just below the one called (callerLocation). */
  private readonly entries: Readonly<Record<'step' | 'do' | 'sleep' | 'waitFor', (...args: never[]) => unknown>>;

  constructor(private readonly d: SessionDeps) {
    if (d.hooks?.captureLocations) wantLocations();
    this.h = new AttemptHost({ writer: d.writer, faults: d.faults, hooks: d.hooks, agent: d.agent.name, input: d.input });
    this.bracket = new Bracket({ host: this.h, writer: d.writer, stats: d.stats, log: d.log });
    this.runId = this.h.runId;
    this.attempt = this.h.attempt;
    this.cursor = new StepCursor(d.reader, this.runId, this.attempt, d.reader.stepCount(this.runId));
    this.journaledHere = d.reader.nextActionSeq(this.runId) === 1 ? new Set() : undefined;
    const step: RunApi['step'] = (name, fn, options) => this.replayFast(name, fn) ?? this.track(this.step(name, fn, options));
    const act: RunApi['do'] = (action, args, options) => this.skipFast(action, args) ?? this.trackAction(this.doAction(action, args, options));
    const sleep: RunApi['sleep'] = (name, duration) => this.track(this.sleep(name, duration));
    const waitFor = (name: string, options?: unknown): Promise<never> => this.track(this.waitFor(name, options)) as Promise<never>;
    this.entries = { step, do: act, sleep, waitFor };
    const api: RunApi = {
      id: this.runId,
      agent: d.agent.name,
      attempt: this.attempt,
      step,
      do: act,
      sleep,
      waitFor,
      child: <O>(agent: unknown, input: unknown, options?: unknown) => this.track(this.child(agent, input, options)) as Promise<O>,
      currentStep: () => {
        const frame = this.currentFrame();
        return frame ? { index: frame.idx, name: frame.name } : undefined;
      },
      note: (kind, data) => this.d.writer.note(kind, checkedNote(kind, data), this.currentFrame()?.idx ?? null),
      log: (line) => this.d.log(String(line)),
    };
    if (d.journal !== undefined) Object.defineProperty(api, RUN_JOURNAL, { value: d.journal, enumerable: false });
    const fence = Object.freeze({ runId: this.runId, epoch: d.writer.lease.epoch, assert: (): void => d.writer.leaseChecks.assertLease() });
    Object.defineProperty(api, RUN_FENCE, { value: fence, enumerable: false });
    this.api = Object.freeze(api);
    const hooks = d.hooks;
    if (hooks?.cancelled) {
      // The signal also aborts on a lost lease: only a cancel is told.
      const tell = (): void => {
        const c = d.writer.cancelRequest;
        if (c) hooks.cancelled?.(c.reason);
      };
      if (d.writer.cancelRequest) queueMicrotask(tell);
      else d.writer.leaseChecks.signal.addEventListener('abort', tell, { once: true });
    }
  }

  /**
   * run.sleep: a step whose checkpoint is the wake time (journaled when the sleep starts; a replay returns it), then the
   * wait for what is left. A long one under a worker stops the run `sleeping` instead; a cancel or a lost lease ends
   * the wait, and the boundary after it stops the run. A host that pauses sees it at `sleep:waiting` (each time it
   * starts to wait: first, and after the host interrupted the wait to have the run's attention).
   */
  private async sleep(name: string, duration: number | string): Promise<void> {
    const ms = parseDuration(duration);
    const location = this.d.hooks?.captureLocations ? callerLocation(this.entries.sleep) : undefined;
    const idx = this.stepCounter;
    let fresh = false;
    const begin = (): { sleep: number; wakeAt: number } => {
      fresh = true;
      return { sleep: ms, wakeAt: Date.now() + ms };
    };
    const started = await (this.replayFast<unknown>(name, begin) ?? this.track(this.step<unknown>(name, begin, undefined, 'sleep')));
    const wakeAt = (started as { wakeAt?: unknown } | null)?.wakeAt;
    if (typeof wakeAt !== 'number' || !Number.isFinite(wakeAt))
      throw new LogbookError(
        ErrorCodes.NONDETERMINISM,
        `run.sleep(${JSON.stringify(name)}): the journal holds a step of that name that is not a sleep (its result has no wake time).`,
        'Give the sleep a name of its own, or start a new run.',
        { runId: this.runId },
      );
    // The wake time is durable: a kill here leaves a sleep the resume waits out from its first start.
    if (fresh) this.h.boundary({ fault: { point: 'sleep:after-start', target: name } });
    const policy = this.d.sleep ?? {};
    const waits = (): boolean => wakeAt > Date.now() && !policy.wakeNow;
    const lease = this.d.writer.leaseChecks.signal;
    // A replayed sleep already over shows nothing to a host: nothing happens there.
    let show = this.h.pauses && (fresh || waits());
    while (waits() || show) {
      const left = wakeAt - Date.now();
      if (policy.releaseOverMs !== undefined && left > policy.releaseOverMs && !policy.wakeNow) {
        this.h.suspended ??= new RunSuspended('sleeping', `sleeping until ${new Date(wakeAt).toISOString()}`, undefined, wakeAt);
        throw this.h.suspended;
      }
      if (show) {
        const sleep = { name, stepIdx: idx, durationMs: ms, wakeAt, leftMs: Math.max(0, left), replayed: !fresh };
        const step = { idx, name, replayed: !fresh, redone: false, result: started, sleep: true, ...(location ? { location } : {}) };
        const paused = this.h.boundary({ stopFirst: true, event: () => ({ kind: 'sleep:waiting', step, sleep }), stopAfter: true });
        if (paused) await paused;
        show = false;
      }
      if (!waits()) break;
      const host = this.d.hooks?.sleepInterrupt?.();
      await waitUntil(wakeAt, lease, host);
      if (lease.aborted) break;
      show = host?.aborted === true && waits();
    }
    this.h.boundary({ stopFirst: true });
  }

  /**
   * run.child: a step named after the child's agent, whose checkpoint is the child's output (a replay returns it). Its
   * body starts the child, or re-attaches to the one the journal holds at this place (see child.ts).
   */
  private async child(agent: unknown, input: unknown, options: unknown): Promise<unknown> {
    const c = checkChildCall(agent, options);
    const engine = this.d.children;
    if (!engine)
      throw new LogbookError(ErrorCodes.STEP_MISUSE, 'run.child is not available in this run.', 'Start the run with the engine (logbook run, the host API).');
    this.childCalls ??= new ChildCalls(engine, {
      host: this.h,
      writer: this.d.writer,
      caller: this.d.caller,
      suspend: (s) => this.suspend(s),
      read: (fn) => this.read(fn),
    });
    const calls = this.childCalls;
    return this.api.step(`child ${c.agent.name}`, () => {
      const frame = this.currentFrame();
      if (!frame) throw new Error('internal: run.child ran outside its step');
      const step = { idx: frame.idx, name: frame.name, replayed: false, redone: frame.redone, ...(frame.location ? { location: frame.location } : {}) };
      return calls.call({ step, agent: c.agent, input, id: c.id });
    });
  }

  private childCalls: ChildCalls | undefined;

  /** Set when any branch suspended the run: every later step or action call stops before doing anything. */
  get suspended(): RunSuspended | undefined {
    return this.h.suspended;
  }

  /** What the run waits on right now, for a stuck or exiting process's message: the running steps and actions. */
  waitingOn(): string {
    const steps = [...this.runningSteps.values()].map((n) => `step ${JSON.stringify(n)}`);
    const actions = [...this.running].map(([id, a]) => `${a.type} ${id}`);
    return [...steps, ...(actions.length ? [`action ${actions.join(', ')}`] : [])].join(', ');
  }

  /** Waits for every step and action still in flight (a branch of Promise.all may outlive the script's await). */
  async awaitInFlight(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * An action call in flight: tracked as every call is (track), and tied to the step it was started in, so that step
   * cannot end while the action is unsettled. One settle handler for both: an action pays for one, not two.
   */
  private trackAction<T>(p: Promise<T>): Promise<T> {
    const actions = this.currentFrame()?.actions;
    this.inFlight.add(p);
    actions?.inFlight.add(p);
    p.then(
      () => {
        this.inFlight.delete(p);
        actions?.inFlight.delete(p);
      },
      (err: unknown) => {
        if (actions && err instanceof RunSuspended) actions.stopped ??= err;
        this.inFlight.delete(p);
        actions?.inFlight.delete(p);
      },
    );
    return p;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = (): void => void this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  private suspend(s: RunSuspended): never {
    this.h.suspended ??= s;
    const frame = this.currentFrame();
    if (frame) this.suspendedSteps.add(frame.idx);
    throw s;
  }

  /** The step of this session the calling code runs inside, if any. */
  private currentFrame(): StepFrame | undefined {
    for (let c = stepContexts.getStore(); c; c = c.outer) if (c.session === this) return c.frame;
    return undefined;
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

  // ---- steps ---------------------------------------------------------------------------------------------

  /**
   * Replay's fast path, taken for every journaled step of a resumed run: a completed step at the next position with
   * the same name returns its checkpoint without an async frame or tracking. Anything else (a host that pauses, a
   * nested call, a mismatch, a failed or unfinished step) returns undefined and takes the full path, which re-checks.
   */
  private replayFast<T>(name: unknown, fn: unknown): Promise<T> | undefined {
    if (this.h.pauses || typeof name !== 'string' || typeof fn !== 'function') return undefined;
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
    // A large checkpoint is read and parsed when the script first uses it (lazyValue.ts); damaged, it stops the run then.
    if (journaled.large !== null) return this.largeResult<T>(journaled, idx, name);
    return Promise.resolve(fromJournalJson(journaled.result, () => this.stepPlace(idx, name, 'result')) as T);
  }

  private largeResult<T>(journaled: ReplayStepHead, idx: number, name: string): Promise<T> {
    const place = (): JournalPlace => this.stepPlace(idx, name, 'result');
    const lead = journaled.large !== null && journaled.large >= LAZY_ABOVE_BYTES ? journaled.lead : undefined;
    if (lead === '{' || lead === '[')
      return settledWith(
        lazyJournalValue(
          lead,
          () => this.cursor.result(journaled) ?? 'null',
          place,
          (err) => this.readFailed(err),
        ) as T,
      );
    return Promise.resolve(fromJournalJson(this.cursor.result(journaled), place) as T);
  }

  private stepPlace(idx: number, name: string, column: 'result' | 'error'): JournalPlace {
    return { runId: this.runId, table: 'steps', idx, name, column };
  }

  private async step<T>(name: string, fn: () => Promise<T> | T, options?: StepOptions, kind?: 'sleep'): Promise<T> {
    checkStepCall(name, fn, this.stepCounter + 1, this.currentFrame()?.name);
    const idx = this.stepCounter++;
    // An integration names the user's line the step stands for; else the first frame of the user's code calls run.step.
    const location = this.d.hooks?.captureLocations ? (validSite(options?.at) ?? callerLocation(this.entries.step)) : undefined;
    const journaled = this.read(() => this.cursor.get(idx));
    if (journaled && journaled.name !== name) throw stepMismatch(this.runId, idx, name, journaled.name);
    if (journaled?.status === 'completed') {
      this.d.stats.stepsReplayed++;
      const result = this.read(() => fromJournalJson(this.cursor.result(journaled), () => this.stepPlace(idx, name, 'result'))) as T;
      const paused = this.h.boundary({
        event: () => ({
          kind: 'step:before',
          step: { idx, name, replayed: true, redone: false, result, ...(location ? { location } : {}), ...(kind ? { sleep: true } : {}) },
        }),
      });
      if (paused) await paused;
      return result;
    }
    if (journaled?.status === 'failed' && idx + 1 < this.cursor.count) {
      // The script caught this failure and went on in an earlier attempt: replay the failure, not a retry, as the
      // same error (class, code, message) so the script's catch takes the same path again.
      throw this.read(() => reviveError(journaled.error, () => this.stepPlace(idx, name, 'error')));
    }
    const redone = journaled !== undefined;
    const snapshot = (result?: unknown): StepSnapshot => ({
      idx,
      name,
      replayed: false,
      redone,
      ...(result !== undefined ? { result } : {}),
      ...(location ? { location } : {}),
      ...(kind ? { sleep: true } : {}),
    });
    // Nothing of this step is written before the stop check after the pause.
    let paused = this.h.boundary({
      stopFirst: true,
      fault: { point: 'step:before', target: name },
      event: () => ({ kind: 'step:before', step: snapshot() }),
      stopAfter: true,
    });
    if (paused) await paused;
    const open = new OpenActions(() =>
      redone ? this.read(() => this.d.reader.openActionsOfStep(this.runId, idx)).filter((a) => a.attempt < this.attempt) : [],
    );
    this.d.writer.stepStarted(idx, name, redone);
    if (redone) this.d.stats.stepsRedone++;
    else this.d.stats.stepsRun++;
    let result: T;
    try {
      const journal = redone ? new StepActions(this.d.reader, this.runId, idx, this.attempt) : undefined;
      const actions: StepFrame['actions'] = { inFlight: new Set(), stopped: undefined };
      this.runningSteps.set(idx, name);
      try {
        result = await stepContexts.run({ session: this, frame: { idx, name, redone, location, open, journal, actions }, outer: stepContexts.getStore() }, fn);
      } finally {
        // A run.do the body did not await must not outlive the step: checkpointed before its action committed, a
        // crash would leave the step replayed as completed and the action in doubt for good.
        while (actions.inFlight.size > 0) await Promise.allSettled([...actions.inFlight]);
        this.runningSteps.delete(idx);
      }
      if (actions.stopped) throw actions.stopped;
    } catch (err) {
      // A storage error is not the step's failure: recorded as one, a script that caught it would replay it forever.
      if (!(err instanceof RunSuspended) && !(err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST) && !isStorageError(err))
        this.d.writer.stepFailed(idx, errorRecord(err));
      throw err;
    }
    // A step in which the run was suspended (a catch-all retry loop that swallowed a stop for a decision, or an approval
    // gate inside a tool the model called, whose error an SDK caught) returns a result it never earned: not
    // checkpointed. A parallel step that did finish still is. (Read through a getter: the body may have set it.)
    const caught = this.suspended;
    if (caught && this.suspendedSteps.has(idx)) throw caught;
    const json = toJournalJson(
      result,
      `The result of step "${name}"`,
      'Return plain JSON from the step: strings, numbers, booleans, arrays and plain objects.',
    );
    this.d.writer.stepCompleted(idx, json);
    paused = this.h.boundary({ fault: { point: 'step:after-checkpoint', target: name }, event: () => ({ kind: 'step:after', step: snapshot(result) }) });
    if (paused) await paused;
    return result;
  }

  // ---- run.waitFor -----------------------------------------------------------------------------------------

  /**
   * run.waitFor: a step that completes, in one transaction with the event's taking from the inbox, with that event (the
   * checkpoint a replay returns) or with its timeout. With none pending, a host may send one (the debugger stops here);
   * else the run stops `waiting`, released, unless one arrived meanwhile (RunWriter.waiting): `logbook send` or a worker
   * goes on from there. The timeout is journaled when the wait first starts, so a resume waits only what is left.
   */
  private async waitFor(nameArg: unknown, options: unknown): Promise<unknown> {
    const { name, timeoutMs, schema } = checkWaitCall(nameArg, options, this.currentFrame()?.name);
    const idx = this.stepCounter++;
    const location = this.d.hooks?.captureLocations ? callerLocation(this.entries.waitFor) : undefined;
    const journaled = this.read(() => this.cursor.get(idx));
    if (journaled && journaled.name !== name) throw stepMismatch(this.runId, idx, name, journaled.name);
    const record = (): unknown => this.read(() => fromJournalJson(journaled?.result ?? null, () => this.stepPlace(idx, name, 'result')));
    if (journaled?.status === 'completed') {
      this.d.stats.stepsReplayed++;
      const done = record();
      const wait = replayedWait(done, name, this.runId);
      const paused = this.h.boundary({
        event: () => ({ kind: 'step:before', step: { idx, name, replayed: true, redone: false, result: done, ...(location ? { location } : {}) } }),
      });
      if (paused) await paused;
      return wait.timedOut ? undefined : this.eventValue(name, wait.data, schema);
    }
    const redone = journaled !== undefined;
    const snapshot = (result?: unknown): StepSnapshot => ({
      idx,
      name,
      replayed: false,
      redone,
      ...(result !== undefined ? { result } : {}),
      ...(location ? { location } : {}),
    });
    let paused = this.h.boundary({
      stopFirst: true,
      fault: { point: 'step:before', target: name },
      event: () => ({ kind: 'step:before', step: snapshot() }),
      stopAfter: true,
    });
    if (paused) await paused;
    this.d.writer.stepStarted(idx, name, redone);
    if (redone) this.d.stats.stepsRedone++;
    else this.d.stats.stepsRun++;
    // The deadline an earlier attempt journaled when this wait started (null: no timeout); undefined: not started yet.
    let deadline = redone ? journaledDeadline(record(), name) : undefined;
    const pending = (): InboxRow | undefined => this.read(() => this.d.reader.inbox.pending(this.runId, name, deadline ?? Number.MAX_SAFE_INTEGER));
    this.runningSteps.set(idx, name);
    try {
      for (;;) {
        const ev = pending();
        if (ev) {
          const taken = await this.takeEvent(idx, name, ev, schema);
          if (!taken) continue;
          paused = this.h.boundary({
            fault: { point: 'event:after-deliver', target: name },
            event: () => ({ kind: 'step:after', step: snapshot(taken.record) }),
          });
          if (paused) await paused;
          return taken.value;
        }
        if (deadline === undefined) {
          deadline = timeoutMs === undefined ? null : Date.now() + timeoutMs;
          this.d.writer.waitStarted(idx, name, JSON.stringify({ waitFor: name, deadline, timeout: timeoutMs ?? null }));
        }
        if (deadline !== null && Date.now() >= deadline) {
          const timedOut = { waitFor: name, timedOut: true, deadline };
          this.d.writer.waitTimedOut(idx, JSON.stringify(timedOut), { name, deadline });
          paused = this.h.boundary({ event: () => ({ kind: 'step:after', step: snapshot(timedOut) }) });
          if (paused) await paused;
          return undefined;
        }
        const until = deadline;
        paused = this.h.boundary({ stopFirst: true, event: () => ({ kind: 'event:wait', step: snapshot(), wait: { name, deadline: until } }) });
        if (paused) {
          await paused;
          if (pending()) continue;
        }
        // A stop asked while the host paused, or another branch that stopped the run, goes first: nothing is written.
        this.h.boundary({ stopFirst: true });
        if (!this.d.writer.waiting('waiting', name, deadline, { step: idx, name, deadline })) continue;
        this.h.status = 'waiting';
        const why = `waits for event ${JSON.stringify(name)}${deadline === null ? '' : ` until ${new Date(deadline).toISOString()}`}`;
        return this.suspend(new RunSuspended('waiting', why, undefined, deadline ?? undefined, name));
      }
    } finally {
      this.runningSteps.delete(idx);
    }
  }

  /**
   * Takes event `ev` for the wait at step `idx`: its step completes with the data as sent (in the same transaction as
   * the taking), and the script gets the schema's output. One the schema refuses is taken as refused (shown by `show`,
   * never lost), and the wait goes on: undefined.
   */
  private async takeEvent(
    idx: number,
    name: string,
    ev: InboxRow,
    schema: StandardSchema | undefined,
  ): Promise<{ value: unknown; record: unknown } | undefined> {
    const data =
      ev.data === null ? null : this.read(() => fromJournalJson(ev.data, () => ({ runId: this.runId, table: 'inbox', seq: ev.seq, name, column: 'data' })));
    const checked = schema ? await validate(schema, data) : ({ ok: true, value: data } as const);
    if (!checked.ok) {
      this.d.writer.eventRefused(idx, ev.seq, JSON.stringify({ message: checked.message }));
      this.d.log(
        `run.waitFor(${JSON.stringify(name)}): event ${JSON.stringify(ev.id)} does not match its schema (${checked.message}); it is kept as refused, and the run waits for the next one.`,
      );
      return undefined;
    }
    const record = { waitFor: name, event: { id: ev.id, seq: ev.seq, sentAt: ev.sent_at, by: ev.sent_by }, data };
    this.d.writer.eventDelivered(idx, ev.seq, JSON.stringify(record));
    return { value: checked.value, record };
  }

  /** A replayed event's data through the wait's schema again (the checkpoint holds the data as sent). */
  private async eventValue(name: string, data: unknown, schema: StandardSchema | undefined): Promise<unknown> {
    if (!schema) return data;
    const v = await validate(schema, data);
    if (v.ok) return v.value;
    throw new LogbookError(
      ErrorCodes.NONDETERMINISM,
      `run.waitFor(${JSON.stringify(name)}): the event journaled for this wait no longer matches its schema (${v.message}): the schema changed since the run took it.`,
      'Keep the schema the run took the event with until in-flight runs finish, or start a new run.',
      { runId: this.runId },
    );
  }

  // ---- actions -------------------------------------------------------------------------------------------

  /**
   * Replay's fast path for actions: in a redone step, an action its journal holds as committed, with the same type,
   * version and args, returns the journaled result without an async frame. Anything else (a host that pauses or may
   * stop the run, invalid args, a mismatch, any other status) returns undefined and takes the full path, which
   * validates and decides again, so every check and every error stays in one place.
   */
  private skipFast<R>(action: unknown, args: unknown): Promise<R> | undefined {
    if (this.h.suspended || this.h.pauses || this.d.hooks?.shouldStop || !isAction(action)) return undefined;
    const journal = this.currentFrame()?.journal;
    if (!journal) return undefined;
    try {
      const v = action.args['~standard'].validate(args);
      if (v instanceof Promise || v.issues) return undefined;
      const argsJson = toJournalJson(v.value, action.type, '') ?? 'null';
      const key = action.key(v.value, this.api);
      if (typeof key !== 'string' || key.length === 0 || this.running.has(key)) return undefined;
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
    this.h.boundary({ stopFirst: true });
    const frame = this.currentFrame();
    checkActionCall(action, frame);
    // An integration names the user's line it acted for; else the first frame of the user's own code calls run.do.
    const location = this.d.hooks?.captureLocations ? (validSite(options?.at) ?? callerLocation(this.entries.do)) : undefined;
    const checked = checkedArgs(action, args, this.d.log, this.warnedFields);
    const { parsed, json: argsJson } = checked instanceof Promise ? await checked : checked;
    const key = actionKey(action, parsed, this.api);
    const same = this.running.get(key);
    if (same) {
      // The same id in flight is the same effect only when both the type and the args agree, as in the journal's check.
      if (same.type !== action.type || same.args !== argsJson) throw keyConflict(action.type, key, same.args, argsJson, same.type);
      return (await same.promise) as R;
    }
    const na: NewAction = {
      id: key,
      stepIdx: frame.idx,
      type: action.type,
      version: action.version,
      effect: action.effect,
      args: argsJson,
      inverse: typeof action.compensate === 'function',
    };
    const promise = this.runAction(frame, action, parsed, na, location);
    this.running.set(key, { type: action.type, args: argsJson, promise });
    try {
      return await promise;
    } finally {
      this.running.delete(key);
    }
  }

  private async runAction<S extends StandardSchema, R>(
    frame: StepFrame,
    def: ActionDefinition<S, R>,
    args: InferOutput<S>,
    na: NewAction,
    location: SourceLocation | undefined,
  ): Promise<R> {
    if (this.d.writer.holdsPending(na.id)) this.d.writer.writePending();
    // A page of this step's journaled actions that could not be read may hold the row this key names, damaged so that
    // the lookup below misses it (a key stored as a BLOB): that is the journal's failure, never a new action to run.
    const unread = frame.journal?.failure;
    if (unread !== undefined)
      this.read(() => {
        throw unread instanceof Error ? unread : new Error("a page of the step's journaled actions could not be read");
      });
    const row = this.journaledHere?.has(na.id) === false ? undefined : this.read(() => this.d.reader.action(this.runId, na.id));
    if (row) {
      if (row.type !== na.type || row.args !== na.args) throw keyConflict(na.type, na.id, row.args, na.args, row.type);
      frame.open.reach(na.id);
      if (row.version !== na.version) {
        const w = `${na.type} ${na.id} was journaled by version ${row.version} and is now version ${na.version}`;
        this.d.stats.warnings.push(w);
        this.d.log(`warning: ${w}; continuing because its key is unchanged.`);
        this.d.writer.note('action.version-changed', { from: row.version, to: na.version }, na.stepIdx, na.id);
      }
      const c = { def, na, args, row, location };
      const plan = actionPlan({
        effect: def.effect,
        hasVerify: typeof def.verify === 'function',
        status: row.status,
        afterError: row.error !== null,
        decision: row.decision,
        approval: row.approval,
      });
      switch (plan.kind) {
        case 'skip': {
          this.d.stats.actionsSkipped++;
          const result =
            row.result === null && row.reconciliation === 'decided-happened'
              ? unrecorded(def, args)
              : (this.read(() => fromJournalJson(row.result, () => actionPlace(row, 'result'))) as R);
          const paused = this.h.boundary({
            event: () => ({ kind: 'action:skipped', action: actionSnapshot(def, na, args, 'skipped', row, location, { result }) }),
          });
          if (paused) await paused;
          return result;
        }
        case 'reconcile':
          return this.reconcile(c, plan.plan);
        case 'retry':
          return this.bracket.execute(c, null);
        case 'gate':
        case 'execute-approved':
          return this.gate(c);
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
    const c = { def, na, args, row: undefined, location };
    // From here on, a row of this id may be journaled.
    if (this.journaledHere && this.journaledHere.size >= JOURNALED_HERE_MAX) this.journaledHere = undefined;
    this.journaledHere?.add(na.id);
    if (def.effect === 'read-only') return this.bracket.observe(c);
    if (def.approval) return this.gate(c);
    return this.bracket.execute(c, null);
  }

  /** An in-doubt action (a crash in flight, or an error from execute) reached again: the policy's plan carried out. */
  private async reconcile<S extends StandardSchema, R>(c: ActionCall<S, R> & { readonly row: ActionRow }, plan: ReconcilePlan): Promise<R> {
    const { def, na, args, row, location } = c;
    const afterError = row.error !== null;
    const inDoubt = () => actionSnapshot(def, na, args, 'in-doubt', row, location, { afterError, ...(afterError ? { error: journaledError(row.error) } : {}) });
    const paused = this.h.boundary({ stopFirst: true, event: () => ({ kind: 'action:reconcile', action: inDoubt(), plan }) });
    if (paused) await paused;
    const out = await carryOut(plan, row, {
      writer: this.d.writer,
      def,
      args,
      ctx: this.h.ctx(na.id),
      ask: decisionAsker(this.d.hooks, plan, () => this.h.runSnapshot(), inDoubt),
      verifyFailed: (err) => this.verifyFailed(na.type, na.id, err),
      execute: (why) => this.bracket.execute(c, why),
    });
    switch (out.done) {
      case 'executed':
        return out.result;
      case 'verified':
        return this.reconciled(c, 'verified', out.found, true);
      case 'decided-happened':
        // Committed with the result the person gave (the JSON journaled just now), or with none: the definition's word.
        return this.reconciled(c, 'decided-happened', out.result === null ? unrecorded(def, args) : (JSON.parse(out.result) as R), out.result !== null);
      case 'needs-decision':
        return this.needsDecision(na.id, na.type, afterError);
      case 'marked-not-happened':
        // A resume plan executes what did not happen (ifNotHappened: 'execute'): it never only marks it.
        throw new Error(`internal: a resume plan marked ${na.type} ${na.id} not happened instead of executing it`);
      case 'left-in-doubt':
        throw new Error(`internal: a resume plan left ${na.type} ${na.id} in doubt, as only compensation may`);
    }
  }

  /** Committed without executing (verify found it, or a person decided it happened): counted, and shown to the host. */
  private async reconciled<S extends StandardSchema, R>(c: ActionCall<S, R>, how: 'verified' | 'decided-happened', result: R, shown: boolean): Promise<R> {
    const { def, na, args, row, location } = c;
    this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: how });
    const paused = this.h.boundary({
      event: () => ({
        kind: 'action:reconciled',
        action: actionSnapshot(def, na, args, 'committed', row, location, { status: 'committed', reconciliation: how, ...(shown ? { result } : {}) }),
      }),
    });
    if (paused) await paused;
    return result;
  }

  private needsDecision(id: string, type: string, afterError: boolean): never {
    this.d.stats.reconciled.push({ id, type, outcome: 'needs-decision' });
    this.h.status = 'needs-decision';
    this.d.writer.runStatus('needs-decision', { data: { actionId: id, type, reason: `${type} has no verify`, ...(afterError ? { afterError } : {}) } });
    const how = afterError ? 'execute threw an error that does not prove nothing happened' : 'it was started but not committed';
    return this.suspend(
      new RunSuspended('needs-decision', `${type} ${id} is in doubt (${how}), and it has no verify: a person must decide whether it happened.`, id),
    );
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
      this.h.boundary({ stopFirst: true });
      const def = actionRegistry().get(a.type);
      if (!def) {
        throw new LogbookError(
          ErrorCodes.UNKNOWN_ACTION_TYPE,
          `${a.type} ${a.id} is in doubt, but the script defines no ${a.type} action.`,
          'Resume with the script that ran it, or decide it with --decide.',
          { type: a.type },
        );
      }
      const afterError = a.error !== null;
      const plan = settlePlan(a, def);
      const na: NewAction = { id: a.id, stepIdx: a.step_idx, type: a.type, version: a.version, effect: a.effect, args: a.args };
      const args = this.read(() => fromJournalJson(a.args, () => actionPlace(a, 'args')));
      const inDoubt = () => actionSnapshot(def, na, args, 'in-doubt', a, undefined, afterError ? { afterError: true, error: journaledError(a.error) } : {});
      const paused = this.h.boundary({ event: () => ({ kind: 'action:reconcile', action: inDoubt(), plan }) });
      if (paused) await paused;
      const out = await settleInDoubt(a, def, plan, {
        writer: this.d.writer,
        ctx: this.h.ctx(a.id),
        ask: decisionAsker(this.d.hooks, plan, () => this.h.runSnapshot(), inDoubt),
        verifyFailed: (err) => this.verifyFailed(a.type, a.id, err),
      });
      if (out.happened === undefined) this.needsDecision(a.id, a.type, afterError);
      else if (out.happened === null) throw new Error(`internal: settling ${a.type} ${a.id} at a run's end left it in doubt, as only compensation may`);
      else this.d.stats.reconciled.push({ id: a.id, type: a.type, outcome: out.reconciliation });
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
    return new LogbookError(
      ErrorCodes.VERIFY_FAILED,
      `verify of ${type} ${id} threw: ${describe(err)}. The action is still in doubt and nothing was executed.`,
      `Fix verify (or the system it asks) and run \`logbook resume ${this.runId}\` again, or decide with --decide ${id}=happened|not-happened.`,
      { actionId: id },
    );
  }

  /**
   * An approval gate: a wait for the event `logbook approve` sends (approvalEventName), taken as run.waitFor takes its
   * events. Execute once approved; otherwise take a decision already sent, ask the host, or stop awaiting-approval
   * (released), unless a decision arrived meanwhile.
   */
  private async gate<S extends StandardSchema, R>(c: ActionCall<S, R>): Promise<R> {
    const { def, na, args, row, location } = c;
    this.h.boundary({ stopFirst: true });
    if (row?.approval === 'approved') return this.bracket.execute(c, null);
    if (!row) this.d.writer.awaitingApproval(na);
    const current = row ?? this.read(() => this.d.reader.action(this.runId, na.id));
    const name = approvalEventName(na.id);
    const decide = (approved: boolean, note: string | undefined, fromInbox?: number): Promise<R> => {
      this.d.writer.approval(na.stepIdx, na.id, approved, note ?? null, fromInbox);
      if (!approved) throw new ApprovalRejectedError(na.type, na.id, note);
      return this.bracket.execute({ ...c, row: current }, null);
    };
    const sent = (): { approved: boolean; note: string | undefined; seq: number } | undefined => {
      const ev = this.read(() => this.d.reader.inbox.pending(this.runId, name));
      return ev ? { ...this.read(() => approvalDecision(ev, this.runId)), seq: ev.seq } : undefined;
    };
    let inbox = sent();
    if (inbox) return decide(inbox.approved, inbox.note, inbox.seq);
    const ev = { kind: 'action:approval' as const, run: this.h.runSnapshot(), action: actionSnapshot(def, na, args, 'awaiting-approval', current, location) };
    const paused = this.h.boundary({ event: () => ({ kind: 'action:approval', action: ev.action }) });
    if (paused) await paused;
    const decided = this.d.hooks?.approval ? await this.d.hooks.approval(ev) : undefined;
    if (decided) return decide(decided.approved, decided.note);
    this.h.status = 'awaiting-approval';
    while (!this.d.writer.waiting('awaiting-approval', name, null, { actionId: na.id, type: na.type })) {
      inbox = sent();
      if (inbox) return decide(inbox.approved, inbox.note, inbox.seq);
    }
    return this.suspend(new RunSuspended('awaiting-approval', `${na.type} ${na.id} waits for approval.`, na.id));
  }
}

/** The step at `idx` is another in the journal than in the script: nothing new runs. */
function stepMismatch(runId: string, idx: number, name: string, journaled: string): LogbookError {
  return new LogbookError(
    ErrorCodes.NONDETERMINISM,
    `Step #${idx + 1} is ${JSON.stringify(name)} in the script, but the journal of run ${runId} has ${JSON.stringify(journaled)} at that position: the script's steps changed since the run started. Nothing new was executed.`,
    'Restore the original step order (new steps may only be added after the last journaled one), or start a new run with `logbook run`.',
    { position: idx + 1, journaled, current: name },
  );
}

/** A decision sent to a gate (`logbook approve`): `{ approved, note }`, or LB_JOURNAL_INVALID naming the event. */
function approvalDecision(ev: InboxRow, runId: string): { approved: boolean; note: string | undefined } {
  const place = () => ({ runId, table: 'inbox', seq: ev.seq, name: ev.name, column: 'data' }) as const;
  const d = fromJournalJson(ev.data, place) as { approved?: unknown; note?: unknown } | null | undefined;
  if (typeof d !== 'object' || d === null || typeof d.approved !== 'boolean' || (d.note != null && typeof d.note !== 'string'))
    throw journalInvalid(place(), 'is not an approval decision ({ approved, note })');
  return { approved: d.approved, note: typeof d.note === 'string' ? d.note : undefined };
}

/** What run.do returns for an action decided happened with no result given: the definition's word for it, or undefined. */
function unrecorded<S extends StandardSchema, R>(def: ActionDefinition<S, R>, args: InferOutput<S>): R {
  return (def.unrecordedResult ? def.unrecordedResult(args) : undefined) as R;
}
