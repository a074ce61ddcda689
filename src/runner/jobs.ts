// The job loop: loads the script, opens the journal, then runs, resumes, compensates or forks, and any follow-up job.

import * as fs from 'node:fs';
import { agentNamed, loadScript, type LoadedScript } from '../loader/loadScript';
import { compensateRun } from '../runtime/compensate';
import { actionRegistry, runTimeActionTypePrefixes } from '../runtime/define';
import { forkRun, startRun, resumeRun, newRunId } from '../runtime/engine';
import { journaledInput } from '../runtime/input';
import { ErrorCodes, LogbookError } from '../runtime/errors';
import { Faults, checkCrashTargets, parseCrashSpec } from '../runtime/faults';
import { wantLocations } from '../runtime/location';
import type { PauseEvent, RunSnapshot, RuntimeHooks } from '../runtime/hooks';
import { openStore, type Store } from '../runtime/store';
import { defaultStateDir } from '../shared/journalTarget';
import type { DecisionInput } from '../runtime/decisions';
import type { Breakpoints, Outcome, RunnerConfig } from '../link/runnerProtocol';
import { runFunctionLine } from '../link/sourceScan';
import type { BoundaryQueue } from './boundaries';
import { boundaryText, decisionText } from './boundaryText';
import { errorFields, wrongNode } from './errorText';
import type { Evaluator } from './evaluator';
import type { Mailbox } from './mailbox';
import { outcomeOfCompensation, outcomeOfRun } from './outcomeReport';
import { postmortem } from './postmortem';
import type { RunnerState } from './jobState';
import type { StopContextBuilder } from './stopContext';
import { StopPolicy } from './stopPolicy';
import { callerContextFromEnv } from '../runtime/trace/env';
import { runFacts } from '../runtime/runFacts';
import type { RunOutcome } from '../runtime/engine';

type Work =
  | { kind: 'launch'; input: unknown; runId?: string | undefined }
  | { kind: 'resume'; runId: string }
  | { kind: 'compensate'; runId: string; fromRequest: boolean }
  | { kind: 'fork'; from: string; stepIdx: number };

type Common = { hooks: RuntimeHooks; faults: Faults; role: string; log: (l: string) => void };

const ROLE = 'debugger';

export class JobLoop {
  constructor(
    private readonly state: RunnerState,
    private readonly queue: BoundaryQueue,
    private readonly builder: StopContextBuilder,
    private readonly mailbox: Mailbox,
    private readonly evaluator: Evaluator,
    /** The run heard a cancel (from wherever it came): the host lets it go to its next boundary. */
    private readonly onCancelled: (reason: string | null) => void,
  ) {}

  /** Runs the configured job and the follow-ups asked for during it; resolves with the runner's exit code. */
  async start(config: RunnerConfig, breakpoints: Breakpoints): Promise<number> {
    const state = this.state;
    state.config = config;
    state.breakpoints = breakpoints;
    process.env.LOGBOOK_STATE_DIR ??= defaultStateDir(config.journal);
    if (config.job.kind === 'postmortem') {
      state.send({ type: 'postmortem', report: postmortem(config.journal, config.job.runId) });
      return 0;
    }
    const faults = new Faults(config.crashAt.map(parseCrashSpec));
    // The debugger shows source lines from the start: an integration's callSite() while the script loads (a LangGraph
    // graph's addNode lines) answers too.
    wantLocations();
    const script = await loadScript(config.program);
    state.agent = script.agent;
    // As the CLI does: a crash point no action of this script can reach would run every real effect and never crash.
    checkCrashTargets(faults.specs, [...actionRegistry().keys()], runTimeActionTypePrefixes(), 'attribute "crashAt":');
    let store: Store;
    try {
      store = openStore(config.journal);
    } catch (err) {
      throw wrongNode(err) ?? err;
    }
    state.store = store;
    this.builder.programText = fs.readFileSync(config.program, 'utf8');
    this.builder.runLine = runFunctionLine(this.builder.programText);
    const job = config.job;
    let work: Work =
      job.kind === 'launch'
        ? { kind: 'launch', input: job.input, runId: job.runId }
        : job.kind === 'resume'
          ? { kind: 'resume', runId: this.resolveRunId(job.runId) }
          : { kind: 'compensate', runId: this.resolveRunId(job.runId), fromRequest: false };
    if (work.kind !== 'launch') state.agent = this.agentOf(script, work.runId);
    state.driving = true;
    try {
      for (;;) {
        const outcome = await this.perform(work, faults);
        const follow = this.mailbox.takeFollowUp();
        const cur = state.current;
        if (!follow || !cur || outcome === undefined) {
          if (outcome) state.send({ type: 'finished', outcome });
          return 0;
        }
        state.output(outcome.summary);
        work =
          follow.kind === 'compensate'
            ? { kind: 'compensate', runId: cur.runId, fromRequest: true }
            : { kind: 'fork', from: cur.runId, stepIdx: follow.stepIdx };
      }
    } finally {
      state.driving = false;
      store.close();
    }
  }

  /** A child run journals its parent's script: resumed from it, it is driven by the agent it imports. */
  private agentOf(script: LoadedScript, runId: string): LoadedScript['agent'] {
    const row = this.state.store?.reader.run(runId);
    return row ? agentNamed(script, row.agent) : script.agent;
  }

  private resolveRunId(id: string): string {
    if (id !== 'latest') return id;
    const { store, agent } = this.state;
    if (!store || !agent) return id;
    for (let offset = 0; ; offset += 100) {
      const page = store.reader.runs(100, offset);
      const hit = page.find((r) => r.agent === agent.name);
      if (hit) return hit.id;
      if (page.length < 100) break;
    }
    throw new LogbookError(
      ErrorCodes.RUN_NOT_FOUND,
      `There is no run of agent ${agent.name} in ${store.target} to take as "latest".`,
      'Start a run first, or name the run id in the launch configuration.',
    );
  }

  /** Runs one job; a failure before the run was announced fails the launch (thrown), later ones end the run. */
  private async perform(work: Work, faults: Faults): Promise<Outcome | undefined> {
    const state = this.state;
    const { store, agent, config } = state;
    if (!store || !agent || !config) throw new Error('runner not started');
    state.stopRequested = false;
    state.cancelling = false;
    this.builder.reset();
    this.mailbox.clear();
    state.compensating = work.kind === 'compensate';
    const policy = new StopPolicy({
      stopOnEntry: config.stopOnEntry && work.kind !== 'fork' && !(work.kind === 'compensate' && work.fromRequest),
      stopOnReplay: config.stopOnReplay,
      sameFile: (a, b) => this.builder.sameFile(a, b),
      evaluate: (expr, at) => this.evaluator.evaluate(expr, this.builder.scopeAt(at, this.queue.lastRun)),
      warn: (msg) => state.output(msg, 'important'),
    });
    state.policy = policy;
    policy.setBreakpoints(state.breakpoints);
    const hooks: RuntimeHooks = {
      captureLocations: true,
      writesPendingOnStop: true,
      pause: (ev) => this.queue.boundary(ev, ev.kind, () => boundaryText(ev)),
      shouldStop: () => state.stopRequested,
      approval: (ev) => Promise.resolve(this.mailbox.takeApproval(ev.action?.id)),
      decision: (ev) => this.decisionHook(ev),
      sleepInterrupt: () => state.sleepSignal(),
      cancelled: (reason) => this.onCancelled(reason),
    };
    const common: Common = { hooks, faults, role: ROLE, log: (line: string) => state.output(line) };
    try {
      switch (work.kind) {
        case 'launch':
          state.current = { runId: work.runId ?? '', attempt: 1, input: work.input, job: 'launch', announced: false };
          return this.ofRun(
            await startRun(store, agent, {
              ...common,
              script: config.program,
              input: work.input,
              ...(work.runId ? { runId: work.runId } : {}),
              ...callerTrace(),
            }),
          );
        case 'resume':
          state.current = { runId: work.runId, attempt: 0, input: undefined, job: 'resume', announced: false };
          return this.ofRun(await resumeRun(store, agent, work.runId, { ...common, decisions: config.decide }));
        case 'fork': {
          const forkedFrom = { runId: work.from, stepIdx: work.stepIdx };
          const runId = newRunId();
          // The input the origin's attempts saw, as journaled: forkRun does not parse it again (nor can it be given one).
          state.current = { runId, attempt: 1, input: undefined, job: 'fork', forkedFrom, announced: false };
          policy.stopAtNextNewStep();
          return this.ofRun(await forkRun(store, agent, { ...common, script: config.program, from: work.from, stepIdx: work.stepIdx, runId }));
        }
        case 'compensate':
          return await this.compensate(store, work, common);
      }
    } catch (err) {
      const cur = state.current;
      if (!cur?.announced) throw err;
      const e = errorFields(err);
      state.output(`error: ${e.message}`, 'important');
      return {
        runId: cur.runId,
        status: 'failed',
        attempt: cur.attempt,
        error: { name: err instanceof Error ? err.name : 'Error', message: e.message, ...(e.code ? { code: e.code } : {}) },
        summary: `run ${cur.runId} failed: ${e.message}`,
      };
    }
  }

  private async compensate(store: Store, work: Extract<Work, { kind: 'compensate' }>, common: Common): Promise<Outcome> {
    const row = store.reader.run(work.runId);
    if (!row)
      throw new LogbookError(
        ErrorCodes.RUN_NOT_FOUND,
        `There is no run ${work.runId} in ${store.target} to compensate.`,
        'Name a run listed by `logbook ls` (and check "database").',
      );
    const input = journaledInput(row).value;
    this.state.current = { runId: work.runId, attempt: row.attempt + 1, input, job: 'compensate', announced: false };
    this.announce(work.runId, row.agent, row.attempt + 1);
    let inverses = 0;
    let irreversible = 0;
    for (const a of store.reader.allActions(work.runId)) {
      if (a.status !== 'committed' || a.effect === 'read-only' || a.compensation === 'committed') continue;
      if (a.compensation === 'irreversible' || typeof actionRegistry().get(a.type)?.compensate !== 'function') irreversible++;
      else inverses++;
    }
    const run: RunSnapshot = { id: work.runId, agent: row.agent, attempt: row.attempt + 1, status: 'compensating', input };
    if (work.fromRequest) this.state.policy?.stopAtNextBoundary();
    await this.queue.boundary(
      { kind: 'run:entry', run },
      'compensate:entry',
      () =>
        `compensation of run ${work.runId}: ${inverses} inverse(s) will run newest-first${irreversible ? `, ${irreversible} action(s) have no inverse and will be reported irreversible` : ''}; in-doubt actions are settled first`,
    );
    const report = await compensateRun(store, work.runId, { ...common, decisions: this.state.config?.decide ?? {} });
    return outcomeOfCompensation(report, this.state.current?.attempt ?? 0);
  }

  /** A run's outcome for the adapter; a cancelled one (compensated after, maybe) says the cancel's reason. */
  private ofRun(o: RunOutcome): Outcome {
    const row = this.state.store?.reader.run(o.runId);
    const cancel = row && this.state.store ? runFacts(this.state.store, row).cancel : null;
    return outcomeOfRun(o, o.status === 'cancelled' || (o.compensation && cancel) ? cancel : null);
  }

  /** Tells the adapter the run of the job in hand started (once), with its id and attempt as the runtime settled them. */
  announce(runId: string, agent: string, attempt: number): void {
    const cur = this.state.current;
    if (!cur || cur.announced) return;
    cur.runId = runId;
    cur.attempt = attempt;
    cur.announced = true;
    this.state.send({ type: 'started', runId, agent, attempt, job: cur.job, ...(cur.forkedFrom ? { forkedFrom: cur.forkedFrom } : {}) });
  }

  private async decisionHook(ev: PauseEvent): Promise<DecisionInput | undefined> {
    const id = ev.action?.id;
    const early = this.mailbox.takeDecision(id);
    if (early || this.state.stopRequested || this.state.cancelling) return early;
    await this.queue.boundary(ev, 'decision', () => decisionText(ev));
    return this.mailbox.takeDecision(id);
  }
}

/** A debugger's run joins the trace of a TRACEPARENT in its environment (a launch configuration's env), like the CLI's. */
function callerTrace(): { traceContext?: { traceparent: string; tracestate?: string } } {
  const traceContext = callerContextFromEnv(process.env);
  return traceContext ? { traceContext } : {};
}
