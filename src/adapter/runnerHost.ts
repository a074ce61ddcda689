// The runner's driver: loads the script, opens the journal, runs/resumes/compensates/forks, and holds the run at stops.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadScript } from '../loader/loadScript';
import { compensateRun } from '../runtime/compensate';
import { actionRegistry, type AgentDefinition } from '../runtime/define';
import { startRun, resumeRun, newRunId } from '../runtime/engine';
import { ErrorCodes, LogbookError } from '../runtime/errors';
import { Faults, parseCrashSpec } from '../runtime/faults';
import type { ActionSnapshot, PauseEvent, RunSnapshot, RuntimeHooks, StepSnapshot } from '../runtime/hooks';
import { openStore, type Store } from '../runtime/store';
import type { Decision } from '../runtime/types';
import { Evaluator, sandboxCopy } from './evaluator';
import type { Breakpoints, FromRunner, Outcome, RunnerConfig, RunnerRequest, StepMode, StopContext, ToRunner } from './protocol';
import { actionView, checkpointView, evalScope, journalPage, runView, stepView, stepsPage } from './runnerViews';
import { actionLines, runFunctionLine } from './sourceScan';
import { StopPolicy, type Boundary, type BoundaryKind, type StopDecision } from './stopPolicy';
import { boundaryText, decisionText, noDecisionNeeded, reconciledText } from './boundaryText';
import { outcomeOfCompensation, outcomeOfRun } from './outcomes';
import { postmortem } from './postmortem';
import { errorFields, thrownText, wrongNode } from './runnerErrors';
import { toWire } from './wire';

type Work =
  | { kind: 'launch'; input: unknown; runId?: string | undefined }
  | { kind: 'resume'; runId: string }
  | { kind: 'compensate'; runId: string; fromRequest: boolean }
  | { kind: 'fork'; from: string; stepIdx: number; input: unknown };

type FollowUp = { kind: 'compensate' } | { kind: 'fork'; stepIdx: number };

interface Stopped {
  readonly at: Boundary;
  readonly run: RunSnapshot;
  readonly resolve: (mode: StepMode) => void;
}

interface Current {
  runId: string;
  attempt: number;
  input: unknown;
  readonly job: 'launch' | 'resume' | 'compensate' | 'fork';
  readonly forkedFrom?: { runId: string; stepIdx: number };
  announced: boolean;
}

const ROLE = 'debugger';
const YIELD_EVERY_MS = 10;


export class RunnerHost {
  private config: RunnerConfig | undefined;
  private store: Store | undefined;
  private agent: AgentDefinition | undefined;
  private policy: StopPolicy | undefined;
  private breakpoints: Breakpoints = { lines: [], functions: [], filters: [] };
  private readonly evaluator = new Evaluator();
  private stopped: Stopped | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopRequested = false;
  private followUp: FollowUp | undefined;
  private readonly steps = new Map<number, StepSnapshot>();
  private decision: Decision | undefined;
  /** In-doubt actions between their reconcile boundary and the outcome, and decisions given in this session. */
  private readonly reconciling = new Set<string>();
  private readonly decided = new Map<string, Decision>();
  private approvalAnswer: { approved: boolean; note?: string } | undefined;
  private current: Current | undefined;
  private compensating = false;
  private programText = '';
  private runLine = 1;
  private readonly realpaths = new Map<string, string>();
  private busy = false;

  constructor(
    private readonly send: (m: FromRunner) => void,
    private readonly done: (code: number) => void,
  ) {}

  /** True while a run is being driven (so a lost adapter stops it gracefully rather than abandoning it). */
  get running(): boolean {
    return this.busy;
  }

  onMessage(m: ToRunner): void {
    switch (m.type) {
      case 'start':
        this.start(m.config, m.breakpoints).then(
          (code) => this.done(code),
          (err: unknown) => {
            this.send({ type: 'failed', ...errorFields(err) });
            this.done(2);
          },
        );
        return;
      case 'breakpoints':
        this.breakpoints = m.breakpoints;
        this.policy?.setBreakpoints(m.breakpoints);
        return;
      case 'resume':
        this.stopped?.resolve(m.mode);
        return;
      case 'pause':
        if (this.policy && !this.stopped) this.policy.pauseRequested = true;
        return;
      case 'stop':
        this.requestStop();
        return;
      case 'request':
        this.answer(m.id, m.request);
        return;
    }
  }

  requestStop(): void {
    this.stopRequested = true;
    this.stopped?.resolve('continue');
  }

  private output(text: string, category: 'console' | 'important' = 'console'): void {
    this.send({ type: 'output', category, text: text.endsWith('\n') ? text : `${text}\n` });
  }

  private real(file: string): string {
    let r = this.realpaths.get(file);
    if (r === undefined) {
      try {
        r = fs.realpathSync.native(file);
      } catch {
        r = path.resolve(file);
      }
      this.realpaths.set(file, r);
    }
    return r;
  }

  // ---- startup -------------------------------------------------------------------------------------------

  private async start(config: RunnerConfig, breakpoints: Breakpoints): Promise<number> {
    this.config = config;
    this.breakpoints = breakpoints;
    process.env.LOGBOOK_STATE_DIR ??= path.dirname(config.database);
    if (config.job.kind === 'postmortem') {
      this.send({ type: 'postmortem', report: postmortem(config.database, config.job.runId) });
      return 0;
    }
    const faults = new Faults(config.crashAt.map(parseCrashSpec));
    const script = await loadScript(config.program);
    this.agent = script.agent;
    try {
      this.store = openStore(config.database);
    } catch (err) {
      throw wrongNode(err) ?? err;
    }
    this.programText = fs.readFileSync(config.program, 'utf8');
    this.runLine = runFunctionLine(this.programText);
    const job = config.job;
    let work: Work =
      job.kind === 'launch'
        ? { kind: 'launch', input: job.input, runId: job.runId }
        : job.kind === 'resume'
          ? { kind: 'resume', runId: this.resolveRunId(job.runId) }
          : { kind: 'compensate', runId: this.resolveRunId(job.runId), fromRequest: false };
    this.busy = true;
    try {
      for (;;) {
        const outcome = await this.perform(work, faults);
        const follow = this.followUp;
        this.followUp = undefined;
        const cur = this.current;
        if (!follow || !cur || outcome === undefined) {
          if (outcome) this.send({ type: 'finished', outcome });
          return 0;
        }
        this.output(outcome.summary);
        work = follow.kind === 'compensate' ? { kind: 'compensate', runId: cur.runId, fromRequest: true } : { kind: 'fork', from: cur.runId, stepIdx: follow.stepIdx, input: cur.input };
      }
    } finally {
      this.busy = false;
      this.store.close();
    }
  }

  private resolveRunId(id: string): string {
    if (id !== 'latest') return id;
    const store = this.store;
    const agent = this.agent;
    if (!store || !agent) return id;
    for (let offset = 0; ; offset += 100) {
      const page = store.reader.runs(100, offset);
      const hit = page.find((r) => r.agent === agent.name);
      if (hit) return hit.id;
      if (page.length < 100) break;
    }
    throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run of agent ${agent.name} in ${store.file} to take as "latest".`, 'Start a run first, or name the run id in the launch configuration.');
  }

  /** Runs one job; a failure before the run was announced fails the launch (thrown), later ones end the run. */
  private async perform(work: Work, faults: Faults): Promise<Outcome | undefined> {
    const store = this.store;
    const agent = this.agent;
    const config = this.config;
    if (!store || !agent || !config) throw new Error('runner not started');
    this.stopRequested = false;
    this.steps.clear();
    this.decision = undefined;
    this.approvalAnswer = undefined;
    this.compensating = work.kind === 'compensate';
    this.policy = new StopPolicy({
      stopOnEntry: config.stopOnEntry && work.kind !== 'fork' && !(work.kind === 'compensate' && work.fromRequest),
      stopOnReplay: config.stopOnReplay,
      sameFile: (a, b) => a === b || this.real(a) === this.real(b),
      evaluate: (expr, at) => this.evaluator.evaluate(expr, this.scopeAt(at, this.lastRun)),
      warn: (msg) => this.output(msg, 'important'),
    });
    this.policy.setBreakpoints(this.breakpoints);
    const hooks: RuntimeHooks = {
      captureLocations: true,
      pause: (ev) => this.boundary(ev, ev.kind, boundaryText(ev)),
      shouldStop: () => this.stopRequested,
      approval: () => {
        const a = this.approvalAnswer;
        this.approvalAnswer = undefined;
        return Promise.resolve(a);
      },
      decision: (ev) => this.decisionHook(ev),
    };
    const common = { hooks, faults, role: ROLE, log: (line: string) => this.output(line) };
    try {
      switch (work.kind) {
        case 'launch':
          this.current = { runId: work.runId ?? '', attempt: 1, input: work.input, job: 'launch', announced: false };
          return outcomeOfRun(await startRun(store, agent, { ...common, script: config.program, input: work.input, ...(work.runId ? { runId: work.runId } : {}) }));
        case 'resume':
          this.current = { runId: work.runId, attempt: 0, input: undefined, job: 'resume', announced: false };
          return outcomeOfRun(await resumeRun(store, agent, work.runId, { ...common, decisions: config.decide }));
        case 'fork': {
          const forkedFrom = { runId: work.from, stepIdx: work.stepIdx };
          this.current = { runId: newRunId(), attempt: 1, input: work.input, job: 'fork', forkedFrom, announced: false };
          this.policy.stopAtNextNewStep();
          return outcomeOfRun(await startRun(store, agent, { ...common, script: config.program, input: work.input, runId: this.current.runId, forkedFrom }));
        }
        case 'compensate':
          return await this.compensate(store, work, common);
      }
    } catch (err) {
      if (!this.current?.announced) throw err;
      const e = errorFields(err);
      this.output(`error: ${e.message}`, 'important');
      return { runId: this.current.runId, status: 'failed', attempt: this.current.attempt, error: { name: err instanceof Error ? err.name : 'Error', message: e.message, ...(e.code ? { code: e.code } : {}) }, summary: `run ${this.current.runId} failed: ${e.message}` };
    }
  }

  private async compensate(store: Store, work: Extract<Work, { kind: 'compensate' }>, common: { hooks: RuntimeHooks; faults: Faults; role: string; log: (l: string) => void }): Promise<Outcome> {
    const row = store.reader.run(work.runId);
    if (!row) throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run ${work.runId} in ${store.file} to compensate.`, 'Name a run listed by `logbook ls` (and check "database").');
    const input: unknown = row.input === null ? undefined : JSON.parse(row.input);
    this.current = { runId: work.runId, attempt: row.attempt + 1, input, job: 'compensate', announced: false };
    this.announce(work.runId, row.agent, row.attempt + 1);
    let inverses = 0;
    let irreversible = 0;
    for (const a of store.reader.allActions(work.runId)) {
      if (a.status !== 'committed' || a.effect === 'read-only' || a.compensation === 'committed') continue;
      if (a.compensation === 'irreversible' || !this.agentHasInverse(a.type)) irreversible++;
      else inverses++;
    }
    const run: RunSnapshot = { id: work.runId, agent: row.agent, attempt: row.attempt + 1, status: 'compensating', input };
    if (work.fromRequest) this.policy?.stopAtNextBoundary();
    await this.boundary(
      { kind: 'run:entry', run },
      'compensate:entry',
      `compensation of run ${work.runId}: ${inverses} inverse(s) will run newest-first${irreversible ? `, ${irreversible} action(s) have no inverse and will be reported irreversible` : ''}; in-doubt actions are settled first`,
    );
    const report = await compensateRun(store, work.runId, { ...common, decisions: this.config?.decide ?? {} });
    return outcomeOfCompensation(report, this.current?.attempt ?? 0);
  }

  private agentHasInverse(type: string): boolean {
    return typeof actionRegistry().get(type)?.compensate === 'function';
  }

  private announce(runId: string, agent: string, attempt: number): void {
    const cur = this.current;
    if (!cur || cur.announced) return;
    cur.runId = runId;
    cur.attempt = attempt;
    cur.announced = true;
    this.send({ type: 'started', runId, agent, attempt, job: cur.job, ...(cur.forkedFrom ? { forkedFrom: cur.forkedFrom } : {}) });
  }

  // ---- boundaries ----------------------------------------------------------------------------------------

  private lastRun: RunSnapshot | undefined;
  private lastYield = 0;

  /** Serialises boundaries: parallel actions in one step stop one at a time. */
  private boundary(ev: PauseEvent, kind: BoundaryKind, detail: string): Promise<void> {
    const next = this.chain.then(() => this.atBoundary(ev, kind, detail));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async atBoundary(ev: PauseEvent, kind: BoundaryKind, detail: string): Promise<void> {
    // A script whose steps never wait on I/O would starve the event loop, and with it the adapter's pause and
    // terminate messages: give the loop a turn every few milliseconds.
    const now = performance.now();
    if (now - this.lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
    }
    if (ev.step) {
      if (kind === 'step:after') this.steps.delete(ev.step.idx);
      else this.steps.set(ev.step.idx, ev.step);
    }
    if (kind === 'run:entry') {
      if (this.current && ev.run.input !== undefined) this.current.input = ev.run.input;
      this.announce(ev.run.id, ev.run.agent, ev.run.attempt);
      detail = this.entryDetail(ev.run, detail);
    }
    if (this.stopRequested || !this.policy) return;
    let action = ev.action;
    if (action && kind.startsWith('compensate:') && !action.location) {
      const line = actionLines(this.programText, action.type);
      const at = line?.compensateLine ?? line?.typeLine;
      if (at !== undefined) action = { ...action, location: { file: this.config?.program ?? '', line: at, column: 1 } };
    }
    if (action) detail = this.reconciliationDetail(kind, action, detail);
    const step = ev.step ?? (action ? this.stepFor(ev.run.id, action.stepIdx) : undefined);
    const at: Boundary = { kind, detail, step, action };
    this.lastRun = ev.run;
    const stop = this.policy.decide(at);
    if (stop) await this.stopAt(at, ev.run, stop);
  }

  /**
   * The runtime has no boundary of its own for "verify found nothing" or "re-execute": when an in-doubt action's
   * next boundary is before-start, say which reconciliation led there, so stepping shows the whole path.
   */
  private reconciliationDetail(kind: BoundaryKind, action: ActionSnapshot, detail: string): string {
    if (kind === 'action:reconcile') {
      this.reconciling.add(action.id);
      return detail;
    }
    if (!this.reconciling.delete(action.id) || kind !== 'action:before-start') return detail;
    return reconciledText(action, this.decided.get(action.id) ?? this.config?.decide[action.id], detail);
  }

  private stepFor(runId: string, idx: number): StepSnapshot | undefined {
    const known = this.steps.get(idx);
    if (known) return known;
    const row = this.store?.reader.step(runId, idx);
    if (!row) return undefined;
    return { idx, name: row.name, replayed: false, redone: false, ...(row.result !== null ? { result: JSON.parse(row.result) as unknown } : {}) };
  }

  private entryDetail(run: RunSnapshot, detail: string): string {
    const reader = this.store?.reader;
    if (!reader || run.attempt <= 1 || this.current?.job === 'fork') {
      if (this.current?.job === 'fork' && this.current.forkedFrom) {
        return `fork of run ${this.current.forkedFrom.runId}: new run ${run.id} replays its first ${this.current.forkedFrom.stepIdx} step(s) from the journal, then runs on`;
      }
      return `${detail}; stopped on entry, before the first step`;
    }
    const replay = reader.steps(run.id, 0, reader.stepCount(run.id)).filter((s) => s.status === 'completed').length;
    const inDoubt = reader.inDoubt(run.id);
    const stopsIn = this.config?.stopOnReplay ? 'the debugger stops in them too (stopOnReplay)' : 'the debugger does not stop in them (stopOnReplay is off)';
    const doubt = inDoubt.length
      ? `${inDoubt.length} action(s) in doubt will be reconciled when the script reaches them: ${inDoubt.map((a) => `${a.type} ${a.id}`).join(', ')}`
      : 'no action is in doubt';
    return `${detail}. ${replay} completed step(s) replay their checkpoints without running, and ${stopsIn}; ${doubt}`;
  }

  private async decisionHook(ev: PauseEvent): Promise<Decision | undefined> {
    let d = this.takeDecision();
    if (d || this.stopRequested) return d;
    await this.boundary(ev, 'decision', decisionText(ev));
    d = this.takeDecision();
    return d;
  }

  private takeDecision(): Decision | undefined {
    const d = this.decision;
    this.decision = undefined;
    return d;
  }

  private async stopAt(at: Boundary, run: RunSnapshot, stop: StopDecision): Promise<void> {
    const reader = this.store?.reader;
    const context: StopContext = {
      kind: at.kind,
      detail: at.detail,
      run: runView(run, this.current?.forkedFrom),
      ...(at.step ? { step: stepView(at.step) } : {}),
      ...(at.action ? { action: actionView(at.action) } : {}),
      compensating: this.compensating,
      program: this.config?.program ?? '',
      runLocation: { file: this.config?.program ?? '', line: this.runLine, column: 1 },
      checkpoint: reader ? checkpointView(reader, run.id) : { stepsJournaled: 0, inDoubt: [], awaitingApproval: [] },
      journalEntries: reader ? reader.eventCount(run.id) : 0,
    };
    const mode = await new Promise<StepMode>((resolve) => {
      this.stopped = { at, run, resolve };
      this.send({ type: 'stopped', ...stop, context });
    });
    this.stopped = undefined;
    this.policy?.resumed(mode, at);
  }

  private scopeAt(at: Boundary, run: RunSnapshot | undefined): Record<string, unknown> {
    const fallback: RunSnapshot = { id: this.current?.runId ?? '', agent: this.agent?.name ?? '', attempt: this.current?.attempt ?? 0, status: 'running', input: this.current?.input };
    return sandboxCopy(evalScope(at.kind, at.detail, run ?? fallback, at.step, at.action)) as Record<string, unknown>;
  }

  // ---- requests ------------------------------------------------------------------------------------------

  private answer(id: number, req: RunnerRequest): void {
    try {
      this.send({ type: 'response', id, ok: true, body: this.handle(req) });
    } catch (err) {
      this.send({ type: 'response', id, ok: false, message: err instanceof LogbookError ? err.message : thrownText(err) });
    }
  }

  private notStopped(what: string): LogbookError {
    return new LogbookError(ErrorCodes.USAGE, `The run is not paused, so ${what} is not possible now.`, 'Pause the run (or wait for a stop) and try again.');
  }

  private handle(req: RunnerRequest): unknown {
    const reader = this.store?.reader;
    const runId = this.current?.runId;
    switch (req.op) {
      case 'evaluate': {
        const s = this.stopped;
        if (!s) throw this.notStopped('evaluating an expression');
        return { value: toWire(this.evaluator.evaluate(req.expression, this.scopeAt(s.at, s.run))) };
      }
      case 'journal':
        if (!reader || !runId) return [];
        return journalPage(reader, runId, req.start, req.count);
      case 'steps':
        if (!reader || !runId) return [];
        return stepsPage(reader, runId, req.start, req.count);
      case 'decide':
        return this.decide(req.decision, req.actionId, req.then);
      case 'approval':
        return this.approve(req.approved, req.note, req.then);
      case 'compensate': {
        if (!this.current?.announced) throw new LogbookError(ErrorCodes.USAGE, 'No run has started yet, so there is nothing to compensate.', 'Wait for the run to start.');
        if (this.compensating) throw new LogbookError(ErrorCodes.USAGE, `Run ${this.current.runId} is already being compensated.`, 'Step through the inverses, or continue.');
        this.followUp = { kind: 'compensate' };
        this.requestStop();
        return { message: `run ${this.current.runId} stops at its next boundary, then its compensation starts (inverses newest-first)` };
      }
      case 'fork': {
        const s = this.stopped;
        if (!s) throw this.notStopped('restarting a frame');
        if (this.compensating) throw new LogbookError(ErrorCodes.USAGE, 'A run being compensated cannot be forked.', 'Fork from a stop in a forward run.');
        const at = s.at.step?.idx;
        if (at === undefined || req.stepIdx > at) throw new LogbookError(ErrorCodes.USAGE, `Step #${req.stepIdx + 1} has not been reached, so the run cannot fork there.`, 'Restart a step frame of the current stop.');
        this.followUp = { kind: 'fork', stepIdx: req.stepIdx };
        this.requestStop();
        return { message: `forking run ${runId ?? ''} at step #${req.stepIdx + 1}` };
      }
    }
  }

  private resumeAfter(then: StepMode | 'stay'): void {
    if (then !== 'stay') this.stopped?.resolve(then);
  }

  private decide(decision: Decision, actionId: string | undefined, then: StepMode | 'stay'): unknown {
    const s = this.stopped;
    if (!s) throw this.notStopped('deciding');
    const a: ActionSnapshot | undefined = s.at.action;
    if (s.at.kind !== 'decision' && s.at.kind !== 'action:reconcile') {
      throw new LogbookError(ErrorCodes.BAD_DECISION, 'The run is not stopped at an in-doubt action.', 'Decide when the debugger stops at an in-doubt action (reconciliation) or asks for a decision.');
    }
    if (a && actionId !== undefined && actionId !== a.id) {
      throw new LogbookError(ErrorCodes.BAD_DECISION, `The run is stopped at ${a.id}, not at ${actionId}.`, 'Decide the action the debugger is stopped at.');
    }
    const how = s.at.kind === 'action:reconcile' && a ? noDecisionNeeded(a) : undefined;
    if (a && how) throw new LogbookError(ErrorCodes.BAD_DECISION, `${a.type} ${a.id} needs no decision: ${how}.`, 'Step in to watch its reconciliation.');
    this.decision = decision;
    if (a) this.decided.set(a.id, decision);
    this.resumeAfter(then);
    return { message: `decided: ${a ? `${a.type} ${a.id}` : 'the in-doubt action'} ${decision === 'happened' ? 'happened' : 'did not happen'}` };
  }

  private approve(approved: boolean, note: string | undefined, then: StepMode | 'stay'): unknown {
    const s = this.stopped;
    if (!s) throw this.notStopped(approved ? 'approving' : 'rejecting');
    if (s.at.kind !== 'action:approval' || !s.at.action) {
      throw new LogbookError(ErrorCodes.BAD_DECISION, 'The run is not stopped at an approval gate.', 'Approve or reject when the debugger stops at an approval gate.');
    }
    this.approvalAnswer = { approved, ...(note !== undefined ? { note } : {}) };
    this.resumeAfter(then);
    return { message: `${approved ? 'approved' : 'rejected'}: ${s.at.action.type} ${s.at.action.id}` };
  }
}
