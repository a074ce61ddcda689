// Starting and resuming runs: input validation, the lease, one attempt of the script, and its final status.

import { randomBytes } from 'node:crypto';
import { ErrorCodes, LogbookError, RunSuspended, describe, errorRecord, isScriptBugCode, runNotFound } from './errors';
import type { AgentDefinition } from './define';
import { Faults } from './faults';
import { damageAt, journalInvalid, toJournalJson } from './json';
import { LAZY_ABOVE_BYTES } from './lazyValue';
import { checkRunId, parseRawInput, readBackFirst, type ParsedInput } from './input';
import { requireWellFormed } from './wellFormed';
import { announceDriving, type OnDriving, type PauseEvent, type RuntimeHooks } from './hooks';
import type { ChildEngine } from './child';
import { RunSession, emptyStats } from './session';
import {
  endSession,
  processOwner,
  withNewSession,
  storageError,
  type Claimed,
  type Durability,
  type ForkPoint,
  type ForkSeed,
  type Lease,
  type ReadScope,
  type RunWriter,
  type Store,
} from './store';
import { journaledDecisions, type DecisionInput, type JournaledDecision } from './decisions';
import { checkCompensable, compensateWithLease } from './compensate';
import { afterAttempt, traceAttempt } from './trace/attempt';
import type { TraceExportConfig } from './trace/config';
import type { CallerContext } from './trace/spans';
import { ACTION_WORDS, actionDisplay, runAllows } from './policy';
import { guardProcess } from './processGuard';
import { maskedLog } from './warnings';
import type { SleepPolicy } from './sleep';
import { approvalEventName } from './wait';
import type { AttemptStats, CompensationReport, RunOutcome } from './outcomes';

export type { RunOutcome } from './outcomes';

export interface EngineOptions {
  readonly faults?: Faults;
  readonly hooks?: RuntimeHooks;
  readonly durability?: Durability;
  /** Who is driving, shown to anyone who finds the lease held (cli, debugger, rehearsal). */
  readonly role?: string;
  readonly log?: (line: string) => void;
  /**
   * Called once this session holds the run's lease, before the script (or the compensation) runs: a host that answers
   * before the run ends (HTTP 202) answers here. A refusal (LB_LEASE_HELD, LB_RUN_EXISTS) rejects instead.
   */
  readonly onDriving?: OnDriving;
  /** Traces after each attempt (see trace/export.ts): false turns them off; undefined follows the OTEL_* variables. */
  readonly traces?: TraceExportConfig | false;
  /** A new run's caller's W3C trace context, journaled with it so every attempt's spans join the caller's trace. */
  readonly traceContext?: CallerContext;
  /** How run.sleep waits: a worker releases long sleeps; `resume --now` wakes at once. */
  readonly sleep?: SleepPolicy;
  /** Set by run.child for the session that drives a child: the parent's child:start boundary (see PauseEvent.caller). */
  readonly caller?: PauseEvent;
}

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

interface NewRunOptions extends EngineOptions {
  readonly script: string;
  readonly scriptVersion?: string;
  readonly runId?: string;
}

/** Starts a new run with a user's raw input, which the agent's schema parses here, once. */
export async function startRun(store: Store, agent: AgentDefinition, opts: NewRunOptions & { readonly input: unknown }): Promise<RunOutcome> {
  const runId = opts.runId ?? newRunId();
  return createAndDrive(store, agent, runId, await parseRawInput(agent, runId, opts.input, maskedLog(opts.log)), opts);
}

/**
 * Starts a new run that replays run `from` up to step `stepIdx` (and inherits `seeds`), with the origin's input as
 * journaled: that is the schema's output already, so it is not parsed again. The caller cannot pass an input.
 */
export async function forkRun(
  store: Store,
  agent: AgentDefinition,
  opts: NewRunOptions & { readonly from: string; readonly stepIdx: number; readonly seeds?: readonly ForkSeed[] },
): Promise<RunOutcome> {
  const origin = store.reader.run(opts.from);
  if (!origin) throw runNotFound(opts.from);
  const runId = opts.runId ?? newRunId();
  checkRunId(runId);
  // What the fork inherits is read back first: a damaged checkpoint before the fork point is refused, not replayed.
  const input = readBackFirst(store.reader, origin, { steps: opts.stepIdx, actions: 'none', deferAbove: LAZY_ABOVE_BYTES });
  const forkedFrom: ForkPoint = { runId: opts.from, stepIdx: opts.stepIdx, ...(opts.seeds ? { seeds: opts.seeds } : {}) };
  return createAndDrive(store, agent, runId, input, opts, forkedFrom);
}

async function createAndDrive(
  store: Store,
  agent: AgentDefinition,
  runId: string,
  input: ParsedInput,
  opts: NewRunOptions,
  forkedFrom?: ForkPoint,
): Promise<RunOutcome> {
  const lease = withNewSession(opts.role ?? 'cli', (owner) =>
    store.createRun(
      {
        id: runId,
        agent: agent.name,
        script: opts.script,
        input: input.json,
        ...(opts.scriptVersion ? { scriptVersion: opts.scriptVersion } : {}),
        ...(forkedFrom ? { forkedFrom } : {}),
        ...(opts.traceContext ? { traceContext: opts.traceContext } : {}),
      },
      owner,
    ),
  );
  return drive(store, agent, lease, input, opts);
}

/**
 * Drives a run whose lease a worker has just claimed (store/queue.ts): a queued run's first attempt, a resume with the
 * normal reconciliation, or the rest of a compensation. What the run needs from a person stops it as it would anywhere.
 */
export async function driveClaimed(store: Store, agent: AgentDefinition, claimed: Claimed, opts: EngineOptions): Promise<RunOutcome | CompensationReport> {
  const { lease, row } = claimed;
  let input: ParsedInput;
  try {
    // The claim has written (its attempt and epoch): past it, a damaged run is given back with nothing more written.
    input = readBackFirst(store.reader, row, READS[claimed.kind], false);
  } catch (err) {
    if (!(err instanceof LogbookError) || err.code !== ErrorCodes.JOURNAL_INVALID) throw err;
    store.releaseLease(lease);
    return {
      runId: lease.runId,
      agent: agent.name,
      attempt: lease.attempt,
      stats: emptyStats(),
      status: 'interrupted',
      error: { name: err.name, message: err.message, code: err.code },
    };
  }
  if (claimed.kind === 'compensate') return afterAttempt(compensateWithLease(store, lease, opts), store, lease, opts);
  return drive(store, agent, lease, input, opts);
}

/**
 * What each kind of attempt reads back of the journal before it writes (see ReadScope). A replayed checkpoint too
 * large to parse unless used is checked where it is used (lazyValue.ts), as a damaged value found while the script
 * runs always is: the run stops as a journal failure, resumable, and nothing derived from the value was written.
 */
const READS: Record<'start' | 'resume' | 'compensate', ReadScope> = {
  start: { steps: 0, actions: 'none' },
  resume: { steps: Number.MAX_SAFE_INTEGER, actions: 'open', deferAbove: LAZY_ABOVE_BYTES },
  compensate: { steps: 0, actions: 'all' },
};

/** Checks that a run can be resumed by this agent, before anything is written; returns the input its attempt gets. */
export function checkResumable(store: Store, agent: AgentDefinition, runId: string, decisions: Readonly<Record<string, JournaledDecision>>): ParsedInput {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  if (row.agent !== agent.name) {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} belongs to agent ${row.agent}, but the script defines ${agent.name}.`,
      `Resume it with its own script (${row.script}).`,
      { runId },
    );
  }
  // The policy says what may go forward; the lease (taken next) says whether someone else is driving it.
  const view = store.reader.view(row);
  const blocker = runAllows(row.status, false, view.compensationStopped).resumeBlocker;
  if (blocker === 'completed') {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} already completed; there is nothing to resume.`,
      `Start a new run with \`logbook run ${row.script}\`, or compensate this one with \`logbook compensate ${runId}\`.`,
      { runId, status: row.status },
    );
  }
  if (blocker === 'cancelled') {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} is cancelled; it cannot go forward any more.`,
      `Undo what it did with \`logbook compensate ${runId}\`, or start a new run with \`logbook run ${row.script}\`.`,
      { runId, status: row.status },
    );
  }
  if (blocker === 'compensation' && view.compensationStopped) {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} is being compensated, and its compensation stopped for a decision; it cannot go forward any more (it may have undone actions already).`,
      `Decide and finish the compensation with \`logbook compensate ${runId} --decide <action-id>=happened|not-happened\` (\`logbook show ${runId}\` lists the action in doubt).`,
      { runId, status: row.status },
    );
  }
  if (blocker === 'compensation') {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} is ${row.status}; it cannot go forward any more.`,
      `Finish the compensation with \`logbook compensate ${runId}\`.`,
      { runId, status: row.status },
    );
  }
  if (blocker === 'queued') {
    throw new LogbookError(
      ErrorCodes.RUN_NOT_RESUMABLE,
      `Run ${runId} is queued and has not started yet; a worker starts it.`,
      `Start a worker that has its script: \`logbook worker --scripts <folder of ${row.script}>\` (with the same --db).`,
      { runId, status: row.status },
    );
  }
  // The journal read back first: a damaged action key would otherwise be reported as "no action to decide".
  const input = readBackFirst(store.reader, row, READS.resume);
  for (const [id, { decision }] of Object.entries(decisions)) {
    const a = store.reader.action(runId, id);
    if (!a)
      throw new LogbookError(
        ErrorCodes.ACTION_NOT_FOUND,
        `Run ${runId} has no action ${id} to decide.`,
        `See the in-doubt actions with \`logbook show ${runId}\`.`,
        { runId, actionId: id },
      );
    if (!ACTION_WORDS[actionDisplay(a, false)].canDecide) {
      throw new LogbookError(
        ErrorCodes.BAD_DECISION,
        `Action ${id} is ${a.status}, not in doubt, so "${decision}" cannot be applied.`,
        'Only decide actions shown as "in doubt" by `logbook show`.',
        { runId, actionId: id },
      );
    }
  }
  return input;
}

export async function resumeRun(
  store: Store,
  agent: AgentDefinition,
  runId: string,
  opts: EngineOptions & { readonly decisions?: Readonly<Record<string, DecisionInput>> },
): Promise<RunOutcome> {
  const decisions = journaledDecisions(opts.decisions, 'resume');
  const input = checkResumable(store, agent, runId, decisions);
  let lease: Lease;
  try {
    lease = withNewSession(opts.role ?? 'cli', (owner) => store.acquireRun(runId, owner, { status: 'running', newAttempt: true, purpose: 'resume' }));
  } catch (err) {
    // Another driver ended the run between the checks above and the lease (a resume racing the one `logbook send`
    // started, which completed it): the checks, made again, refuse it as they would have; not a bug in Logbook.
    if (err instanceof LogbookError && err.code === ErrorCodes.ILLEGAL_TRANSITION) checkResumable(store, agent, runId, decisions);
    throw err;
  }
  let writer: RunWriter | undefined;
  try {
    writer = store.openWriter(lease, opts.durability);
    for (const [id, d] of Object.entries(decisions)) {
      const a = store.reader.action(runId, id);
      if (a) writer.decision(a.step_idx, id, d.decision, d.result);
    }
  } catch (err) {
    letGo(store, lease, writer);
    throw err;
  }
  return drive(store, agent, lease, input, opts, writer);
}

/** Gives back a lease taken for a session that fails before it drives, and ends the session. */
function letGo(store: Store, lease: Lease, writer: RunWriter | undefined): void {
  try {
    if (writer) writer.release();
    else store.releaseLease(lease);
  } catch {
    // The lease left behind is dead: its session ends here, and its process (this one) knows it.
  } finally {
    endSession(lease.token);
  }
}

/** Errors that mean the script or journal is wrong, not that the world refused: never auto-compensated. */
function isProgrammingError(err: unknown): boolean {
  return err instanceof LogbookError && isScriptBugCode(err.code);
}

/** One driving session of the run: whatever way it ends, the session ends with it, so its lease is never live after. */
async function drive(
  store: Store,
  agent: AgentDefinition,
  lease: Lease,
  input: ParsedInput,
  opts: EngineOptions,
  existingWriter?: RunWriter,
): Promise<RunOutcome> {
  try {
    return await driveSession(store, agent, lease, input, opts, existingWriter);
  } finally {
    endSession(lease.token);
    traceAttempt(store, lease, opts);
  }
}

async function driveSession(
  store: Store,
  agent: AgentDefinition,
  lease: Lease,
  parsedInput: ParsedInput,
  opts: EngineOptions,
  existingWriter?: RunWriter,
): Promise<RunOutcome> {
  const input = parsedInput.value;
  const writer = existingWriter ?? store.openWriter(lease, opts.durability);
  const stats = emptyStats();
  const log = maskedLog(opts.log);
  const session = new RunSession({
    reader: store.reader,
    writer,
    agent,
    input,
    faults: opts.faults ?? new Faults(),
    hooks: opts.hooks,
    stats,
    log,
    journal: store.target,
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
    children: childEngine(store, opts),
    ...(opts.caller ? { caller: opts.caller } : {}),
  });
  const stopHeartbeat = writer.keepAlive();
  const base = { runId: lease.runId, agent: agent.name, attempt: lease.attempt, stats };
  let released = false;
  const guard = guardProcess({
    runId: lease.runId,
    waitingOn: () => session.waitingOn(),
    log,
    onExit: (err) => writer.note('run.process-exited', { error: errorRecord(err) }),
  });
  try {
    announceDriving(opts, lease);
    if (opts.hooks?.pause) {
      await opts.hooks.pause({ kind: 'run:entry', run: { id: lease.runId, agent: agent.name, attempt: lease.attempt, status: 'running', input } });
    }
    const output = await Promise.race([agent.run(session.api, input), guard.drained]);
    await Promise.race([session.awaitInFlight(), guard.drained]);
    if (session.suspended) throw session.suspended;
    // A completed run holds nothing in doubt: errors the script caught are settled before it completes.
    await session.settleLeftovers();
    const outputJson = toJournalJson(output, `The output of agent ${agent.name}`, 'Return plain JSON from run().');
    writer.flush();
    writer.runStatus('completed', { output: outputJson, data: { stats: summary(stats) } });
    if (opts.hooks?.pause)
      await opts.hooks.pause({ kind: 'run:end', run: { id: lease.runId, agent: agent.name, attempt: lease.attempt, status: 'completed', input } });
    return { ...base, status: 'completed', output };
  } catch (thrown) {
    const storage = writer.broken ?? storageError(thrown, store.target, 'running the script');
    if (storage) {
      // The journal failed, not the script: no status is written (it could not be) and no declared policy fires.
      log(`${agent.name}: run ${lease.runId} stopped because its journal failed; it is resumable. [${storage.code}] ${storage.message}`);
      return { ...base, status: 'interrupted', error: { name: storage.name, message: storage.message, code: storage.code } };
    }
    const stuck = thrown instanceof LogbookError && thrown.code === ErrorCodes.NEVER_SETTLED;
    // A run whose promises never settle cannot be waited for: what is still in flight is recorded as it stands.
    if (!stuck) await Promise.race([session.awaitInFlight(), guard.drained]).catch(() => undefined);
    // A lost lease (taken over, or past what this process's clock can prove) ends the attempt whatever the script threw
    // on its way out (it may have caught LB_LEASE_LOST): nothing is written, no policy fires. The fenced release below
    // leaves a run taken over alone and hands back one no one took.
    const lost = writer.lostError;
    if (lost) return { ...base, status: 'interrupted', error: { name: lost.name, message: lost.message, code: lost.code } };
    const err = session.suspended ?? thrown;
    // A cancelled run ends cancelled whatever it stopped with: the boundary's stop, or what an execute that heard
    // ctx.signal threw (its action already settled by the usual rules), or another stop it reached before the boundary.
    const cancel = writer.cancelRequest;
    if (cancel) {
      try {
        writer.runStatus('cancelled', { kind: 'run.cancelled', data: { reason: cancel.reason, by: cancel.by, stats: summary(stats) } });
        log(`${agent.name}: run ${lease.runId} was cancelled${cancel.reason ? ` (${cancel.reason})` : ''}.`);
        (opts.faults ?? new Faults()).hit('cancel:after-stop', agent.name);
        if (!cancel.compensate) return { ...base, status: 'cancelled' };
        const refusal = compensationRefusal(store, lease.runId);
        if (refusal) {
          log(`${agent.name}: run ${lease.runId} was cancelled, but it cannot be compensated here: ${describe(refusal)}`);
          return { ...base, status: 'cancelled', error: { name: refusal.name, message: refusal.message, code: refusal.code } };
        }
        writer.release();
        released = true;
        const relock = withNewSession(opts.role ?? 'cli', (owner) =>
          store.acquireRun(lease.runId, owner, { status: 'compensating', newAttempt: false, purpose: 'compensate (cancel --compensate)' }),
        );
        const compensation = await compensateWithLease(store, relock, { ...opts, onDriving: undefined });
        return { ...base, status: compensation.status, compensation };
      } catch (late) {
        const why =
          late instanceof LogbookError && (late.code === ErrorCodes.LEASE_LOST || late.code === ErrorCodes.LEASE_HELD)
            ? late
            : storageError(late, store.target, 'recording the cancel');
        if (!why) throw late;
        log(`${agent.name}: run ${lease.runId} was cancelled, and then [${why.code}] ${why.message}`);
        return { ...base, status: 'interrupted', error: { name: why.name, message: why.message, code: why.code } };
      }
    }
    if (err instanceof RunSuspended && err.status === 'sleeping' && err.wakeAt !== undefined) {
      // Released until it is due: a worker claims it again then, as it claims an interrupted run.
      try {
        writer.sleeping(err.wakeAt, { wakeAt: err.wakeAt, stats: summary(stats) });
      } catch (late) {
        const why = late instanceof LogbookError && late.code === ErrorCodes.LEASE_LOST ? late : storageError(late, store.target, 'recording the sleep');
        if (!why) throw late;
        return { ...base, status: 'interrupted', error: { name: why.name, message: why.message, code: why.code } };
      }
      return { ...base, status: 'sleeping', wakeAt: err.wakeAt };
    }
    if (err instanceof RunSuspended) {
      if (err.status === 'interrupted') writer.note('run.stopped', { reason: err.reason });
      const child = err.childRunId ? { runId: err.childRunId } : {};
      const waitingFor = err.status === 'waiting' && err.event !== undefined ? { waitingFor: { event: err.event, until: err.wakeAt ?? null, ...child } } : {};
      return { ...base, status: err.status, ...(err.actionId ? { waitingOn: { actionId: err.actionId, reason: err.reason, ...child } } : {}), ...waitingFor };
    }
    const record = errorRecord(err);
    const error = { name: record.name, message: record.message, ...(record.code ? { code: record.code } : {}) };
    if (err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST) return { ...base, status: 'interrupted', error };
    // Writing the failure, or the declared compensation after it, can meet a lost lease or a failing journal: that
    // ends the attempt as an outcome (resumable), never as a rejection of the caller's promise.
    try {
      const stopped = await settleReplayedDoubts(session, log);
      if (stopped)
        return { ...base, status: stopped.status, ...(stopped.actionId ? { waitingOn: { actionId: stopped.actionId, reason: stopped.reason } } : {}) };
      writer.runStatus('failed', { error: record, data: { error: { ...error }, stats: summary(stats) } });
      // An error that left an action in doubt does not say the run failed (it may have succeeded): the run stays resumable,
      // and the declared policy does not undo effects whose outcome nobody knows yet.
      const unknownOutcome = store.reader.inDoubtAfterError(lease.runId).length > 0 || childLeftInDoubt(store, err);
      if (unknownOutcome && agent.onFailure === 'compensate')
        log(`${agent.name}: the run failed with an action in doubt after an error; it is not compensated: resume reconciles it.`);
      // The inverses are called with the journal's args and results: a damaged one is found before any runs.
      const damaged =
        agent.onFailure === 'compensate' && !isProgrammingError(err) && !unknownOutcome ? store.reader.firstDamage(lease.runId, READS.compensate) : undefined;
      if (damaged)
        log(
          `${agent.name}: the run failed (${describe(err)}); its declared policy does not compensate it: ${journalInvalid(damaged, damageAt(damaged)).message}`,
        );
      if (agent.onFailure === 'compensate' && !isProgrammingError(err) && !unknownOutcome && !damaged) {
        // A compensation that would be refused (an inverse this process cannot call) is refused before anything is
        // written: the run stays failed and resumable.
        const refusal = compensationRefusal(store, lease.runId);
        if (refusal) {
          log(`${agent.name}: the run failed (${describe(err)}); its declared policy cannot compensate it, so it stays failed: ${describe(refusal)}`);
          return { ...base, status: 'failed', error };
        }
        log(`${agent.name}: the run failed (${describe(err)}); its declared policy compensates it.`);
        writer.release();
        released = true;
        // A new session: the one that failed has let the lease go, and another driver may have taken it meanwhile.
        const relock = withNewSession(opts.role ?? 'cli', (owner) =>
          store.acquireRun(lease.runId, owner, { status: 'compensating', newAttempt: false, purpose: 'compensate (declared policy)' }),
        );
        const compensation = await compensateWithLease(store, relock, { ...opts, onDriving: undefined });
        return { ...base, status: compensation.status, error, compensation };
      }
      return { ...base, status: 'failed', error };
    } catch (late) {
      const why =
        late instanceof LogbookError && (late.code === ErrorCodes.LEASE_LOST || late.code === ErrorCodes.LEASE_HELD)
          ? late
          : storageError(late, store.target, 'recording the failure');
      if (!why) throw late;
      log(`${agent.name}: run ${lease.runId} failed (${describe(err)}), and then [${why.code}] ${why.message}`);
      return {
        ...base,
        status: why.code === ErrorCodes.LEASE_HELD ? 'failed' : 'interrupted',
        error: { name: why.name, message: why.message, code: why.code },
      };
    }
  } finally {
    guard.dispose();
    stopHeartbeat();
    if (!released) {
      try {
        writer.release();
      } catch {
        // The run's status is already durable; a lease left behind is recognised as dead by its pid.
      }
    }
  }
}

/**
 * What run.child needs of the engine: a child is driven in this process, by a session of its own (its own lease and
 * writer), with this session's options but not its host's onDriving, the caller's trace context or the decisions given
 * for the parent's actions; its boundaries reach this session's host with the parent's child:start as their caller.
 */
function childEngine(store: Store, opts: EngineOptions): ChildEngine {
  // Not the parent's decisions either: they were checked against the parent's actions, and a child resumed with them
  // refused each as an action it does not have, which failed the parent's run (and compensated it).
  const {
    onDriving: _onDriving,
    traceContext: _traceContext,
    caller: _caller,
    hooks,
    decisions: _decisions,
    ...rest
  } = opts as EngineOptions & {
    readonly decisions?: unknown;
  };
  const forChild = (caller: PauseEvent): EngineOptions => ({ ...rest, caller, ...(hooks ? { hooks: withCaller(hooks, caller) } : {}) });
  return {
    store,
    role: opts.role ?? 'cli',
    log: maskedLog(opts.log),
    faults: opts.faults ?? new Faults(),
    start: (agent, lease, input, caller) => drive(store, agent, lease, input, forChild(caller)),
    resume: (agent, runId, caller) => resumeRun(store, agent, runId, forChild(caller)),
  };
}

/** The host's hooks for a child's session: every boundary it pauses at carries the parent's call as its caller. */
function withCaller(hooks: RuntimeHooks, caller: PauseEvent): RuntimeHooks {
  const pause = hooks.pause?.bind(hooks);
  return {
    ...(hooks.captureLocations !== undefined ? { captureLocations: hooks.captureLocations } : {}),
    ...(pause ? { pause: (ev: PauseEvent) => pause(ev.caller ? ev : { ...ev, caller }) } : {}),
    ...(hooks.shouldStop ? { shouldStop: hooks.shouldStop.bind(hooks) } : {}),
    ...(hooks.approval ? { approval: hooks.approval.bind(hooks) } : {}),
    ...(hooks.decision ? { decision: hooks.decision.bind(hooks) } : {}),
  };
}

/**
 * A run that fails settles the doubts its script caught in steps a resume only replays (see RunSession), as a run that
 * completes does: the run that stops for a decision instead is returned. A verify that fails, or an action type the
 * script no longer defines, leaves the doubt as it was (the run fails, resumable); a lost lease or journal goes on up.
 */
async function settleReplayedDoubts(session: RunSession, log: (line: string) => void): Promise<RunSuspended | undefined> {
  try {
    await session.settleReplayedDoubts();
    return undefined;
  } catch (err) {
    if (err instanceof RunSuspended) return err;
    const left = [ErrorCodes.VERIFY_FAILED, ErrorCodes.VERIFY_TIMEOUT, ErrorCodes.UNKNOWN_ACTION_TYPE] as readonly string[];
    if (err instanceof LogbookError && left.includes(err.code)) {
      log(`a doubt the script caught stays in doubt: [${err.code}] ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

/**
 * Whether the error is a child's failure (run.child's ChildRunFailedError) that left an action in doubt in that child or
 * below it: its outcome is as unknown as the parent's own would be, and resuming the parent resumes the child, which
 * reconciles it.
 */
function childLeftInDoubt(store: Store, err: unknown): boolean {
  if (!(err instanceof LogbookError) || err.code !== ErrorCodes.CHILD_FAILED || err.details.status !== 'failed') return false;
  const inDoubt = (runId: string): boolean => store.reader.inDoubtAfterError(runId).length > 0 || store.reader.children(runId).some((c) => inDoubt(c.id));
  return typeof err.details.childRunId === 'string' && inDoubt(err.details.childRunId);
}

function compensationRefusal(store: Store, runId: string): LogbookError | undefined {
  try {
    checkCompensable(store, runId);
    return undefined;
  } catch (err) {
    if (err instanceof LogbookError) return err;
    throw err;
  }
}

function summary(s: AttemptStats): Record<string, number> {
  return {
    stepsReplayed: s.stepsReplayed,
    stepsRun: s.stepsRun,
    stepsRedone: s.stepsRedone,
    actionsSkipped: s.actionsSkipped,
    actionsExecuted: s.actionsExecuted,
    reconciled: s.reconciled.length,
  };
}

/**
 * Records an approval or rejection for an action waiting at its gate. The decision is an event sent to the run
 * (approvalEventName, the gate's dedupe id), taken at once when no session drives the run (as `action.approved`,
 * in the transaction that takes the event); a session that holds the run (a resume racing this) takes it at the gate.
 * Returns which of the two happened.
 */
export function recordApproval(store: Store, runId: string, actionId: string, approved: boolean, note: string | null, role = 'cli'): 'recorded' | 'sent' {
  // A note is kept as text: one PostgreSQL cannot hold is refused before anything is written, on either journal.
  if (note !== null) requireWellFormed(note, 'The note of the approval');
  const a = store.reader.action(runId, actionId);
  if (!store.reader.run(runId)) throw runNotFound(runId);
  if (!a)
    throw new LogbookError(
      ErrorCodes.ACTION_NOT_FOUND,
      `Run ${runId} has no action ${actionId}.`,
      `See the actions waiting for approval with \`logbook show ${runId}\`.`,
      { runId, actionId },
    );
  if (a.status !== 'awaiting-approval' || a.approval !== 'pending') {
    throw new LogbookError(
      ErrorCodes.BAD_DECISION,
      `Action ${actionId} is not waiting for approval (it is ${a.approval === 'approved' ? 'already approved' : a.status}).`,
      'Only actions shown as "awaiting approval" can be approved or rejected.',
      { runId, actionId },
    );
  }
  const name = approvalEventName(actionId);
  const sent = store.sendEvent(runId, { name, id: name, data: JSON.stringify({ approved, note }), by: processOwner(role).label });
  if (sent.kind === 'duplicate') {
    const was = (JSON.parse(sent.event.data ?? '{}') as { approved?: unknown }).approved === true ? 'an approval' : 'a rejection';
    throw new LogbookError(
      ErrorCodes.BAD_DECISION,
      `Action ${actionId} already has ${was}, sent ${new Date(sent.event.sent_at).toISOString()}, that the run takes at its gate; nothing was written.`,
      `Resume the run (\`logbook resume ${runId}\`) to go on with that decision.`,
      { runId, actionId },
    );
  }
  let lease: Lease;
  try {
    lease = withNewSession(role, (owner) =>
      store.acquireRun(runId, owner, { status: 'awaiting-approval', newAttempt: false, purpose: approved ? 'approve' : 'reject' }),
    );
  } catch (err) {
    // Held (its session takes the decision at the gate), or in a status that does not stop at a gate (a run waiting for
    // an event, with a gate a parallel branch left): kept for the gate, which takes it when the run gets there.
    if (err instanceof LogbookError && (err.code === ErrorCodes.LEASE_HELD || err.code === ErrorCodes.ILLEGAL_TRANSITION)) return 'sent';
    throw err;
  }
  let writer: RunWriter | undefined;
  try {
    writer = store.openWriter(lease);
    writer.approval(a.step_idx, actionId, approved, note, sent.event.seq);
  } finally {
    letGo(store, lease, writer);
  }
  return 'recorded';
}
