// The DAP session: translates debugger requests into runner messages and runner stops into DAP events.

import * as path from 'node:path';
import {
  DebugSession,
  Event,
  Handles,
  InitializedEvent,
  OutputEvent,
  Scope,
  Source,
  StoppedEvent,
  TerminatedEvent,
  ExitedEvent,
  ThreadEvent,
  ContinuedEvent,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import * as z from 'zod/mini';
// zod/mini throws core's error class; importing it by name keeps the rest of core (`z.core.*`) out of the bundle.
import { $ZodError } from 'zod/v4/core';
import { LogbookError, describe } from '../runtime/errors';
import { ENGLISH } from '../shared/zodEnglish';
import { BreakpointBook, readBreakable } from './breakpointBook';
import { crashMessage, exitCodeFor, KILLED_EXIT_CODE } from './crashReport';
import { FILTERS } from '../link/filters';
import { parseLaunchConfig, resolveLaunch, type ResolvedLaunch } from './launchConfig';
import type { FromRunner, Outcome, Postmortem, StepMode, StopContext } from '../link/runnerProtocol';
import { RunnerProcess } from './runnerProcess';
import { callerContext, framesOf, scopeEntries, scopeRoot, scopesOf, sourceName, type FrameView, type ScopeName } from './stopView';
import { childPath, children, isExpandable, preview, typeOf } from './values';
import { SecretMask } from '../shared/secrets';
import { isPostgresUrl, urlPassword } from '../shared/pgUrl';
import { MaskedStream } from './outputMask';

type Container =
  | { kind: 'named'; entries: Array<[string, unknown]>; scope?: ScopeName }
  | { kind: 'value'; value: unknown; path: string | undefined }
  | { kind: 'journal' | 'steps'; total: number };

interface Stop {
  readonly seq: number;
  readonly reason: string;
  readonly description: string;
  readonly text: string | undefined;
  readonly exceptionId: string | undefined;
  readonly context: StopContext;
  readonly frames: FrameView[];
}

/** Frame ids are the stop's seq times this, plus the frame's index: room for a deep chain of run.child calls. */
const FRAMES_PER_STOP = 64;
const CONFIG_DONE_WAIT_MS = 2000;
const TERMINATE_GRACE_MS = 10_000;
const DISCONNECT_GRACE_MS = 3000;
const PAGE = 100;
/** How long the end of an output chunk that may start a secret waits for the rest before it is shown anyway. */
const OUTPUT_HOLD_MS = 100;

const DecideArgs = z.object({
  decision: z.enum(['happened', 'not-happened']),
  actionId: z.optional(z.string()),
  /** With "happened": what the action returned, when the person knows it (the runner checks it is plain JSON). */
  result: z.optional(z.unknown()),
  then: z._default(z.enum(['continue', 'next', 'stepIn', 'stepOut', 'stay']), 'continue'),
});
/** `cancelRun` (DAP's own `cancel` request cancels a request, not a run): as `logbook cancel` takes them. */
const CancelArgs = z.object({ reason: z.optional(z.string()), compensate: z.optional(z.boolean()) });
const ApproveArgs = z.object({ note: z.optional(z.string()), then: z._default(z.enum(['continue', 'next', 'stepIn', 'stepOut', 'stay']), 'continue') });
/** `sendEvent`: an event for the run (run.waitFor); by default a run stopped at its wait goes on and takes it. */
const SendEventArgs = z.object({
  name: z.string(),
  data: z.optional(z.unknown()),
  id: z.optional(z.string()),
  then: z._default(z.enum(['continue', 'next', 'stepIn', 'stepOut', 'stay']), 'continue'),
});

/**
 * The error responses the session sends, one row each: a stable DAP error id (clients may match on it) and whether the
 * client should show it to the user. Add a failure here, then send it with this.fail(response, 'name', text).
 */
const DAP_ERRORS = {
  adapter: { id: 1000, showUser: true },
  launch: { id: 1001, showUser: true },
  notPaused: { id: 1002, showUser: false },
  restartFrame: { id: 1003, showUser: true },
  variables: { id: 1004, showUser: false },
  evaluate: { id: 1005, showUser: false },
  customRequest: { id: 1006, showUser: true },
  attach: { id: 1007, showUser: true },
} as const satisfies Record<string, { id: number; showUser: boolean }>;
type DapError = keyof typeof DAP_ERRORS;

/** Runners of every session in this process, killed if the adapter exits (server mode runs several sessions). */
const liveRunners = new Set<RunnerProcess>();
let exitHookInstalled = false;

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function message(err: unknown): string {
  return err instanceof LogbookError ? err.message : err instanceof Error ? err.message : describe(err);
}

export class LogbookDebugSession extends DebugSession {
  private runner: RunnerProcess | undefined;
  private resolved: ResolvedLaunch | undefined;
  /**
   * The run's secrets (values of secret-named environment variables, from the adapter's environment, env and envFile,
   * and those the runner reports; the journal's password): masked by value in every message the session sends.
   */
  private mask = SecretMask.of([]);
  private readonly streams = { stdout: new MaskedStream(() => this.mask), stderr: new MaskedStream(() => this.mask) };
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly configurationDone = deferred();
  private readonly runnerReady = deferred<boolean>();
  private launchResponse: DebugProtocol.LaunchResponse | undefined;
  private readonly book = new BreakpointBook();
  private readonly threads = new Map<string, { id: number; name: string }>();
  private nextThreadId = 1;
  private runId: string | undefined;
  private paused: Stop | undefined;
  private stopSeq = 0;
  private handles = new Handles<Container>();
  private outcome: Outcome | undefined;
  private failure: string | undefined;
  private killCause: 'kill' | 'terminate-timeout' | 'other' = 'other';
  private ended = false;
  private readonly runnerScript: string;

  constructor(...args: ConstructorParameters<typeof DebugSession>) {
    super(...args);
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
    this.runnerScript = path.join(__dirname, 'runner.js');
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const r of liveRunners) r.kill('SIGKILL');
      });
    }
  }

  /** Answers `response` with one of DAP_ERRORS and the text for people. */
  private fail(response: DebugProtocol.Response, kind: DapError, text: string): void {
    const e = DAP_ERRORS[kind];
    this.sendErrorResponse(response, { id: e.id, format: text, showUser: e.showUser, variables: {} });
  }

  /** Every event passes here (output, stops, their descriptions): each string in it is masked. */
  override sendEvent(event: DebugProtocol.Event): void {
    if (!this.mask.empty && event.body !== undefined) event.body = this.mask.deep(event.body as unknown);
    super.sendEvent(event);
  }

  /** Every answer passes here (stack frames, variables, evaluate, exception info, error messages): each string masked. */
  override sendResponse(response: DebugProtocol.Response): void {
    if (!this.mask.empty) {
      if (response.body !== undefined) response.body = this.mask.deep(response.body as unknown);
      if (response.message !== undefined) response.message = this.mask.text(response.message);
    }
    super.sendResponse(response);
  }

  /** The script's own stdout and stderr: a secret split between two reads is held back until it can be masked whole. */
  private relayOutput(category: 'stdout' | 'stderr', text: string): void {
    const shown = this.streams[category].push(text);
    if (shown) this.sendEvent(new OutputEvent(shown, category));
    clearTimeout(this.flushTimer);
    if (this.streams.stdout.holding || this.streams.stderr.holding) this.flushTimer = setTimeout(() => this.flushOutput(), OUTPUT_HOLD_MS);
  }

  private flushOutput(): void {
    clearTimeout(this.flushTimer);
    for (const category of ['stdout', 'stderr'] as const) {
      const rest = this.streams[category].flush();
      if (rest) this.sendEvent(new OutputEvent(rest, category));
    }
  }

  /** Runs an async handler; anything it throws becomes an error response rather than a crash of the adapter. */
  private guard(response: DebugProtocol.Response, fn: () => Promise<void>): void {
    fn().catch((err: unknown) => this.fail(response, 'adapter', `Logbook adapter error: ${message(err)}`));
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      supportsConfigurationDoneRequest: true,
      supportsFunctionBreakpoints: true,
      supportsConditionalBreakpoints: true,
      supportsHitConditionalBreakpoints: true,
      supportsEvaluateForHovers: true,
      supportsRestartFrame: true,
      supportsTerminateRequest: true,
      supportTerminateDebuggee: true,
      supportsExceptionInfoRequest: true,
      supportsBreakpointLocationsRequest: true,
      exceptionBreakpointFilters: FILTERS.map((f) => ({ filter: f.filter, label: f.label, description: f.description, default: f.default })),
    };
    this.sendResponse(response);
    this.sendEvent(new InitializedEvent());
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.configurationDone.resolve();
    this.sendResponse(response);
  }

  protected override launchRequest(response: DebugProtocol.LaunchResponse, args: DebugProtocol.LaunchRequestArguments): void {
    this.guard(response, () => this.launchRun(response, args));
  }

  private async launchRun(response: DebugProtocol.LaunchResponse, args: DebugProtocol.LaunchRequestArguments): Promise<void> {
    let resolved: ResolvedLaunch;
    try {
      resolved = resolveLaunch(parseLaunchConfig(args), process.cwd());
    } catch (err) {
      this.failLaunch(response, message(err));
      return;
    }
    this.resolved = resolved;
    for (const w of resolved.warnings) this.sendEvent(new OutputEvent(`logbook: ${w}\n`, 'important'));
    const db = resolved.runner.journal;
    this.mask = SecretMask.ofEnv({ ...process.env, ...resolved.env }, isPostgresUrl(db) ? [urlPassword(db)] : []);
    this.launchResponse = response;
    this.spawnRunner(resolved);
    await Promise.race([this.configurationDone.promise, new Promise((r) => setTimeout(r, CONFIG_DONE_WAIT_MS))]);
    if (!(await this.runnerReady.promise)) return;
    this.runner?.send({ type: 'start', config: resolved.runner, breakpoints: this.book.all() });
  }

  protected override attachRequest(response: DebugProtocol.AttachResponse): void {
    this.fail(response, 'attach', 'Logbook debugs the runs it starts: use a "launch" configuration (with "resume" to continue an existing run).');
  }

  private spawnRunner(resolved: ResolvedLaunch): void {
    const runner = new RunnerProcess(resolved, this.runnerScript, {
      message: (m) => this.onRunnerMessage(m),
      output: (category, text) => this.relayOutput(category, text),
      spawnFailed: (err) => {
        this.failure = `The runner could not be started with runtimeExecutable ${JSON.stringify(resolved.runtimeExecutable)}: ${err.message}. Set "runtimeExecutable" to a Node executable (an absolute path, or a name on PATH).`;
      },
      closed: (code, signal) => {
        liveRunners.delete(runner);
        void this.onRunnerClosed(code, signal);
      },
    });
    liveRunners.add(runner);
    this.runner = runner;
  }

  private failLaunch(response: DebugProtocol.LaunchResponse, text: string): void {
    this.launchResponse = undefined;
    this.fail(response, 'launch', text);
    this.sendEvent(new OutputEvent(`${text}\n`, 'important'));
    this.end();
  }

  /** Ends the session once: exited (when a run ran) and terminated. */
  private end(exitCode?: number): void {
    if (this.ended) return;
    this.ended = true;
    this.paused = undefined;
    if (exitCode !== undefined) this.sendEvent(new ExitedEvent(exitCode));
    this.sendEvent(new TerminatedEvent());
  }

  private onRunnerMessage(m: FromRunner): void {
    switch (m.type) {
      case 'ready':
        this.runnerReady.resolve(true);
        this.sendEvent(
          new Event('process', { name: this.resolved?.runner.program ?? 'agent', systemProcessId: m.pid, isLocalProcess: true, startMethod: 'launch' }),
        );
        return;
      case 'started': {
        const previous = this.runId ? this.threads.get(this.runId) : undefined;
        let thread = this.threads.get(m.runId);
        if (!thread) {
          thread = { id: this.nextThreadId++, name: `${m.runId} (${m.agent})` };
          this.threads.set(m.runId, thread);
          if (previous && previous.id !== thread.id) this.sendEvent(new ThreadEvent('exited', previous.id));
          this.sendEvent(new ThreadEvent('started', thread.id));
        }
        this.runId = m.runId;
        const what = m.job === 'fork' && m.forkedFrom ? `fork of ${m.forkedFrom.runId} at step ${m.forkedFrom.stepIdx + 1}` : m.job;
        this.sendEvent(new OutputEvent(`logbook: ${what} run ${m.runId} (${m.agent}), attempt ${m.attempt}\n`, 'console'));
        if (this.launchResponse) {
          const r = this.launchResponse;
          this.launchResponse = undefined;
          this.sendResponse(r);
        }
        return;
      }
      case 'stopped': {
        this.flushOutput();
        this.handles = new Handles<Container>();
        this.paused = {
          seq: ++this.stopSeq,
          reason: m.reason,
          description: m.description,
          text: m.text,
          exceptionId: m.exceptionId,
          context: m.context,
          frames: framesOf(m.context).slice(0, FRAMES_PER_STOP),
        };
        const ev: DebugProtocol.StoppedEvent = new StoppedEvent(m.reason, this.threadId(), m.text);
        ev.body.description = m.description;
        ev.body.allThreadsStopped = true;
        if (m.hitBreakpointIds.length) ev.body.hitBreakpointIds = m.hitBreakpointIds;
        this.sendEvent(ev);
        return;
      }
      case 'output':
        this.sendEvent(new OutputEvent(m.text, m.category));
        return;
      case 'finished':
        this.outcome = m.outcome;
        this.sendEvent(
          new OutputEvent(`logbook: ${m.outcome.summary}\n`, m.outcome.status === 'completed' || m.outcome.status === 'compensated' ? 'console' : 'important'),
        );
        return;
      case 'failed':
        // As the CLI says it: the stable code first, so a person (or a script) can look it up.
        this.failure = m.code ? `[${m.code}] ${m.message}` : m.message;
        return;
      case 'secrets':
        this.mask = this.mask.with(m.values);
        return;
      case 'postmortem':
      case 'response':
        return;
    }
  }

  private async onRunnerClosed(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.flushOutput();
    this.runnerReady.resolve(false);
    const pausedAt = this.paused?.description;
    this.paused = undefined;
    if (this.outcome) {
      this.end(exitCodeFor(this.outcome.status));
      return;
    }
    if (signal === 'SIGKILL' && this.runId) {
      const report = await this.postmortem();
      this.sendEvent(
        new OutputEvent(
          `${crashMessage({ pid: this.runner?.pid, cause: this.killCause, pausedAt, report: report.report, reportError: report.error })}\n`,
          'important',
        ),
      );
      this.end(KILLED_EXIT_CODE);
      return;
    }
    const text =
      this.failure ??
      (signal === 'SIGKILL'
        ? crashMessage({ pid: this.runner?.pid, cause: this.killCause, pausedAt, report: undefined, reportError: undefined })
        : `The runner exited unexpectedly (${signal ? `signal ${signal}` : `exit code ${code ?? '?'}`}).${this.runner?.stderr ? `\n${this.runner.stderr.trim()}` : ''}`);
    if (this.launchResponse) {
      this.failLaunch(this.launchResponse, text);
      return;
    }
    this.sendEvent(new OutputEvent(`${text}\n`, 'important'));
    this.end(signal === 'SIGKILL' ? KILLED_EXIT_CODE : code === 0 || code === null ? 1 : code);
  }

  /** Reads the journal after a crash, in a fresh runner (the adapter never opens the journal itself). */
  private async postmortem(): Promise<{ report?: Postmortem; error?: string }> {
    const resolved = this.resolved;
    if (!resolved) return {};
    const done = deferred<{ report?: Postmortem; error?: string }>();
    const reader = new RunnerProcess(resolved, this.runnerScript, {
      message: (m) => {
        if (m.type === 'ready')
          reader.send({
            type: 'start',
            config: { ...resolved.runner, job: { kind: 'postmortem', ...(this.runId ? { runId: this.runId } : {}) } },
            breakpoints: { lines: [], functions: [], filters: [] },
          });
        else if (m.type === 'postmortem') done.resolve({ report: m.report });
        else if (m.type === 'failed') done.resolve({ error: m.message });
      },
      output: () => undefined,
      spawnFailed: (err) => done.resolve({ error: err.message }),
      closed: (code) => done.resolve({ error: `the journal reader exited (code ${code ?? '?'}) ${reader.stderr.trim()}` }),
    });
    const timer = setTimeout(() => {
      reader.kill('SIGKILL');
      done.resolve({ error: 'the journal reader did not answer in time' });
    }, 15_000);
    const result = await done.promise;
    clearTimeout(timer);
    await reader.closed;
    return result;
  }

  protected override terminateRequest(response: DebugProtocol.TerminateResponse): void {
    const runner = this.runner;
    if (runner?.alive) {
      runner.send({ type: 'stop' });
      const t = setTimeout(() => {
        this.killCause = 'terminate-timeout';
        runner.kill('SIGKILL');
      }, TERMINATE_GRACE_MS);
      void runner.closed.then(() => clearTimeout(t));
    } else this.end();
    this.sendResponse(response);
  }

  protected override disconnectRequest(response: DebugProtocol.DisconnectResponse): void {
    this.guard(response, () => this.endSession(response));
  }

  private async endSession(response: DebugProtocol.DisconnectResponse): Promise<void> {
    const runner = this.runner;
    if (runner?.alive) {
      runner.send({ type: 'stop' });
      const t = setTimeout(() => runner.kill('SIGKILL'), DISCONNECT_GRACE_MS);
      await runner.closed;
      clearTimeout(t);
    } else if (runner) await runner.closed;
    this.sendResponse(response);
    this.shutdown();
  }

  override shutdown(): void {
    this.runner?.kill('SIGKILL');
    super.shutdown();
  }

  // ---- breakpoints ---------------------------------------------------------------------------------------

  private pushBreakpoints(): void {
    if (this.runner?.alive) this.runner.send({ type: 'breakpoints', breakpoints: this.book.all() });
  }

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const file = args.source.path ? path.resolve(this.convertClientPathToDebugger(args.source.path)) : undefined;
    const requested = (args.breakpoints ?? []).map((b) => ({ ...b, line: this.convertClientLineToDebugger(b.line), clientLine: b.line }));
    response.body = { breakpoints: this.book.setLines(file, requested).map((r) => (r.verified ? { ...r, source: args.source } : r)) };
    this.pushBreakpoints();
    this.sendResponse(response);
  }

  protected override breakpointLocationsRequest(response: DebugProtocol.BreakpointLocationsResponse, args: DebugProtocol.BreakpointLocationsArguments): void {
    const { lines } = args.source.path ? readBreakable(this.convertClientPathToDebugger(args.source.path)) : { lines: new Map<number, string>() };
    const from = this.convertClientLineToDebugger(args.line);
    const to = args.endLine === undefined ? from : this.convertClientLineToDebugger(args.endLine);
    response.body = { breakpoints: [...lines.keys()].filter((l) => l >= from && l <= to).map((l) => ({ line: this.convertDebuggerLineToClient(l) })) };
    this.sendResponse(response);
  }

  protected override setFunctionBreakPointsRequest(
    response: DebugProtocol.SetFunctionBreakpointsResponse,
    args: DebugProtocol.SetFunctionBreakpointsArguments,
  ): void {
    response.body = { breakpoints: this.book.setFunctions(args.breakpoints) };
    this.pushBreakpoints();
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(
    response: DebugProtocol.SetExceptionBreakpointsResponse,
    args: DebugProtocol.SetExceptionBreakpointsArguments,
  ): void {
    response.body = { breakpoints: this.book.setFilters([...args.filters, ...(args.filterOptions ?? []).map((o) => o.filterId)]) };
    this.pushBreakpoints();
    this.sendResponse(response);
  }

  // ---- execution control ---------------------------------------------------------------------------------

  private threadId(): number {
    return (this.runId ? this.threads.get(this.runId)?.id : undefined) ?? 1;
  }

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    const t = this.runId ? this.threads.get(this.runId) : undefined;
    response.body = { threads: [t ?? { id: 1, name: this.resolved ? `${path.basename(this.resolved.runner.program)} (starting)` : 'Logbook run' }] };
    this.sendResponse(response);
  }

  private resume(response: DebugProtocol.Response, mode: StepMode): void {
    if (!this.runner?.alive || !this.paused) {
      this.fail(response, 'notPaused', 'The run is not paused.');
      return;
    }
    this.paused = undefined;
    this.runner.send({ type: 'resume', mode });
    this.sendResponse(response);
  }

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    response.body = { allThreadsContinued: true };
    this.resume(response, 'continue');
  }

  protected override nextRequest(response: DebugProtocol.NextResponse): void {
    this.resume(response, 'next');
  }

  protected override stepInRequest(response: DebugProtocol.StepInResponse): void {
    this.resume(response, 'stepIn');
  }

  protected override stepOutRequest(response: DebugProtocol.StepOutResponse): void {
    this.resume(response, 'stepOut');
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    if (this.runner?.alive && !this.paused) this.runner.send({ type: 'pause' });
    this.sendResponse(response);
  }

  protected override restartFrameRequest(response: DebugProtocol.RestartFrameResponse, args: DebugProtocol.RestartFrameArguments): void {
    this.guard(response, () => this.forkAtFrame(response, args));
  }

  private async forkAtFrame(response: DebugProtocol.RestartFrameResponse, args: DebugProtocol.RestartFrameArguments): Promise<void> {
    const frame = this.frameOf(args.frameId);
    const idx = this.paused?.context.step?.idx;
    if (!frame || !frame.canRestart || idx === undefined || !this.runner) {
      this.fail(response, 'restartFrame', 'Only a step frame can be restarted: it forks the run at that step.');
      return;
    }
    const at = this.paused?.seq;
    try {
      await this.runner.request({ op: 'fork', stepIdx: idx });
      this.resumedFrom(at);
      this.sendResponse(response);
    } catch (err) {
      this.fail(response, 'restartFrame', message(err));
    }
  }

  /**
   * Forgets stop `seq` once a request resumed it, but not a newer stop: the runner's answer and the stop it runs on to
   * can arrive in one read, and then the new stop is already recorded when the awaited answer is handled.
   */
  private resumedFrom(seq: number | undefined): boolean {
    if (seq === undefined || this.paused?.seq !== seq) return false;
    this.paused = undefined;
    return true;
  }

  // ---- inspection ----------------------------------------------------------------------------------------

  private frameOf(frameId: number): FrameView | undefined {
    const s = this.paused;
    if (!s || Math.floor(frameId / FRAMES_PER_STOP) !== s.seq) return undefined;
    return s.frames[frameId % FRAMES_PER_STOP];
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse, args: DebugProtocol.StackTraceArguments): void {
    const s = this.paused;
    const frames = s?.frames ?? [];
    const start = args.startFrame ?? 0;
    const slice = frames.slice(start, args.levels ? start + args.levels : undefined);
    response.body = {
      totalFrames: frames.length,
      stackFrames: slice.map((f, i) => {
        const loc = f.location;
        const frame: DebugProtocol.StackFrame = {
          id: (s?.seq ?? 0) * FRAMES_PER_STOP + start + i,
          name: f.name,
          line: loc ? this.convertDebuggerLineToClient(loc.line) : 0,
          column: loc ? this.convertDebuggerColumnToClient(loc.column) : 0,
          ...(loc
            ? {
                source: f.library
                  ? {
                      ...new Source(sourceName(loc.file), this.convertDebuggerPathToClient(loc.file)),
                      presentationHint: 'deemphasize' as const,
                      origin: 'library code',
                    }
                  : new Source(sourceName(loc.file), this.convertDebuggerPathToClient(loc.file)),
              }
            : {}),
          ...(f.subtle ? { presentationHint: 'subtle' as const } : {}),
          ...(f.canRestart ? { canRestart: true } : { canRestart: false }),
        };
        return frame;
      }),
    };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    const frame = this.frameOf(args.frameId);
    const stopped = this.paused?.context;
    // A caller's frame (run.child) shows that run and its step.
    const ctx = stopped && frame && frame.depth > 0 ? callerContext(stopped, frame.depth) : stopped;
    if (!frame || !ctx) {
      response.body = { scopes: [] };
      this.sendResponse(response);
      return;
    }
    response.body = {
      scopes: scopesOf(frame.kind, ctx, frame.depth).map((name) => {
        if (name === 'Journal') {
          const scope = new Scope(
            `Journal (${ctx.journalEntries} entries)`,
            this.handles.create({ kind: 'journal', total: ctx.journalEntries }),
            true,
          ) as DebugProtocol.Scope;
          scope.indexedVariables = ctx.journalEntries;
          return scope;
        }
        const entries = scopeEntries(name, ctx);
        if (name === 'Checkpoint') entries.push(['steps', { kind: 'steps', total: ctx.checkpoint.stepsJournaled }]);
        const scope = new Scope(name, this.handles.create({ kind: 'named', entries, scope: name }), false) as DebugProtocol.Scope;
        scope.namedVariables = entries.length;
        if (name === 'Action' || name === 'Step' || name === 'Sleep') scope.presentationHint = name === 'Action' ? 'arguments' : 'locals';
        return scope;
      }),
    };
    this.sendResponse(response);
  }

  /**
   * A value as Variables shows it. Masked before the preview clips and escapes it: a secret cut at 100 characters, or
   * with its quotes escaped, would no longer match. By value only: a name (idempotencyKey, author) hides nothing.
   */
  private variable(name: string, raw: unknown, evaluateName: string | undefined): DebugProtocol.Variable {
    const value = this.mask.deep(raw);
    const v: DebugProtocol.Variable = { name, value: preview(value), type: typeOf(value), variablesReference: 0, ...(evaluateName ? { evaluateName } : {}) };
    if (isExpandable(value)) {
      v.variablesReference = this.handles.create({ kind: 'value', value, path: evaluateName });
      const c = children(value);
      if (c?.indexed && c.indexed.length > PAGE) {
        v.indexedVariables = c.indexed.length;
        v.namedVariables = c.named.length;
      }
    }
    return v;
  }

  private pageVariable(kind: 'journal' | 'steps', total: number): DebugProtocol.Variable {
    return { name: kind, value: `(${total}) journaled steps`, variablesReference: this.handles.create({ kind, total }), indexedVariables: total };
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    this.guard(response, () => this.listVariables(response, args));
  }

  private async listVariables(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): Promise<void> {
    const c = this.handles.get(args.variablesReference);
    let variables: DebugProtocol.Variable[] = [];
    try {
      if (c?.kind === 'named') {
        variables = c.entries.map(([name, value]) => {
          if (c.scope === 'Checkpoint' && name === 'steps') return this.pageVariable('steps', (value as { total: number }).total);
          return this.variable(name, value, c.scope ? scopeRoot(c.scope, name) : undefined);
        });
      } else if (c?.kind === 'value') {
        const ch = children(c.value);
        const start = args.start ?? 0;
        const indexed = ch?.indexed ?? [];
        const wantIndexed = args.filter !== 'named';
        const wantNamed = args.filter !== 'indexed';
        if (wantNamed) variables.push(...(ch?.named ?? []).map(([k, v]) => this.variable(k, v, childPath(c.path, k, false))));
        if (wantIndexed) {
          const slice = indexed.slice(start, args.count ? start + args.count : undefined);
          variables.push(...slice.map((v, i) => this.variable(String(start + i), v, childPath(c.path, String(start + i), true))));
        }
      } else if (c && this.runner?.alive) {
        const start = args.start ?? 0;
        const count = args.count ?? Math.min(PAGE, c.total - start);
        const rows = (await this.runner.request({ op: c.kind, start, count })) as Array<Record<string, unknown>>;
        variables = rows.map((row, i) => {
          const label =
            c.kind === 'journal'
              ? `#${String(row.seq)} ${String(row.kind)}${typeof row.step === 'number' ? ` step ${row.step + 1}` : ''}${typeof row.action === 'string' ? ` ${row.action}` : ''}`
              : `step ${Number(row.idx) + 1} "${String(row.name)}" ${String(row.status)}`;
          const v = this.variable(String(start + i), row, undefined);
          return { ...v, value: label };
        });
      }
    } catch (err) {
      this.fail(response, 'variables', message(err));
      return;
    }
    response.body = { variables };
    this.sendResponse(response);
  }

  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): void {
    this.guard(response, () => this.evaluateExpression(response, args));
  }

  private async evaluateExpression(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): Promise<void> {
    if (!this.runner?.alive || !this.paused) {
      this.fail(response, 'evaluate', 'The run is not paused: expressions are evaluated against a paused step or action.');
      return;
    }
    try {
      const body = (await this.runner.request({ op: 'evaluate', expression: args.expression, ...(args.context ? { context: args.context } : {}) })) as {
        value: unknown;
      };
      const v = this.variable('result', body.value, args.expression);
      response.body = {
        result: v.value,
        type: v.type,
        variablesReference: v.variablesReference,
        ...(v.indexedVariables ? { indexedVariables: v.indexedVariables } : {}),
      };
      this.sendResponse(response);
    } catch (err) {
      this.fail(response, 'evaluate', message(err));
    }
  }

  protected override exceptionInfoRequest(response: DebugProtocol.ExceptionInfoResponse): void {
    const s = this.paused;
    response.body = {
      exceptionId: s?.exceptionId ?? s?.reason ?? 'none',
      description: s?.description ?? '',
      breakMode: 'always',
      details: { message: s?.description ?? '', typeName: s?.text ?? '' },
    };
    this.sendResponse(response);
  }

  // ---- custom requests: kill, decide, approve, reject, compensate, cancelRun ------------------------------

  protected override customRequest(command: string, response: DebugProtocol.Response, args: unknown): void {
    this.guard(response, () => this.custom(command, response, args));
  }

  private async custom(command: string, response: DebugProtocol.Response, rawArgs: unknown): Promise<void> {
    const runner = this.runner;
    // Clients without an empty-object literal send no arguments as [] or null (Lua's {} is a JSON array): same as {}.
    const args = rawArgs === null || (Array.isArray(rawArgs) && rawArgs.length === 0) ? {} : rawArgs;
    const fail = (text: string): void => this.fail(response, 'customRequest', text);
    if (!['kill', 'decide', 'approve', 'reject', 'compensate', 'cancelRun', 'sendEvent'].includes(command)) {
      fail(`Unknown request ${JSON.stringify(command)}: Logbook answers kill, decide, approve, reject, compensate, cancelRun and sendEvent.`);
      return;
    }
    if (!runner?.alive) {
      fail('No run is active in this session.');
      return;
    }
    const at = this.paused?.seq;
    try {
      let body: unknown;
      let then: StepMode | 'stay' = 'stay';
      switch (command) {
        case 'kill':
          this.killCause = 'kill';
          runner.kill('SIGKILL');
          body = { pid: runner.pid, signal: 'SIGKILL' };
          break;
        case 'decide': {
          const a = DecideArgs.parse(args ?? {}, ENGLISH);
          then = a.then;
          body = await runner.request({
            op: 'decide',
            decision: a.decision,
            then: a.then,
            ...(a.actionId ? { actionId: a.actionId } : {}),
            ...(a.result !== undefined ? { result: a.result } : {}),
          });
          break;
        }
        case 'approve':
        case 'reject': {
          const a = ApproveArgs.parse(args ?? {}, ENGLISH);
          then = a.then;
          body = await runner.request({ op: 'approval', approved: command === 'approve', then: a.then, ...(a.note !== undefined ? { note: a.note } : {}) });
          break;
        }
        case 'compensate':
          then = this.paused ? 'continue' : 'stay';
          body = await runner.request({ op: 'compensate' });
          break;
        case 'cancelRun': {
          // The runner lets a run held at a stop go on to its next boundary, where it stops cancelled.
          const a = CancelArgs.parse(args ?? {}, ENGLISH);
          then = this.paused ? 'continue' : 'stay';
          body = await runner.request({
            op: 'cancel',
            ...(a.reason !== undefined ? { reason: a.reason } : {}),
            ...(a.compensate !== undefined ? { compensate: a.compensate } : {}),
          });
          break;
        }
        case 'sendEvent': {
          const a = SendEventArgs.parse(args ?? {}, ENGLISH);
          then = this.paused ? a.then : 'stay';
          body = await runner.request({
            op: 'sendEvent',
            name: a.name,
            then: a.then,
            ...(a.data !== undefined ? { data: a.data } : {}),
            ...(a.id !== undefined ? { id: a.id } : {}),
          });
          break;
        }
      }
      if (then !== 'stay' && this.resumedFrom(at)) this.sendEvent(new ContinuedEvent(this.threadId(), true));
      response.body = body;
      this.sendResponse(response);
    } catch (err) {
      fail(err instanceof $ZodError ? `Bad arguments for ${command}: ${err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}.` : message(err));
    }
  }
}
