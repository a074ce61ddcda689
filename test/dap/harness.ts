// DAP test harness: the built adapter driven by DebugClient, with the journal and provider state in a temp dir.

import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, FIXTURES, EXAMPLES, tmpDir } from '../helpers';

export const ADAPTER = path.join(ROOT, 'dist', 'debugAdapter.js');
export const DAP_FIXTURES = path.join(FIXTURES, 'dap');
export const EMAIL = path.join(EXAMPLES, 'email-campaign.ts');
export const NEWSLETTER = path.join(DAP_FIXTURES, 'newsletter.ts');
export const ORDER = path.join(DAP_FIXTURES, 'order.ts');
export const COUNTER = path.join(DAP_FIXTURES, 'counter.ts');
export const NAPPER = path.join(DAP_FIXTURES, 'napper.ts');
const TIMEOUT = 30_000;

export interface Stop {
  readonly reason: string;
  readonly description: string;
  readonly text?: string;
  readonly hitBreakpointIds?: number[];
  readonly frames: DebugProtocol.StackFrame[];
}

export interface Breakpoints {
  readonly lines?: Array<{ file: string; line: number; condition?: string; hitCondition?: string }>;
  readonly functions?: Array<{ name: string; condition?: string; hitCondition?: string }>;
  /** Exception filters; the adapter's defaults apply when omitted. */
  readonly filters?: string[];
}

/** One debug session against the built adapter, recording its events. */
export class Session {
  readonly dc: DebugClient;
  readonly dir: string;
  readonly output: Array<{ category: string; text: string }> = [];
  readonly events: DebugProtocol.Event[] = [];
  runnerPids: number[] = [];
  setBreakpointResults: DebugProtocol.Breakpoint[] = [];

  constructor(dir = tmpDir('logbook-dap-')) {
    this.dir = dir;
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.LOGBOOK_STATE_DIR;
    delete env.LOGBOOK_JOURNAL;
    this.dc = new DebugClient(process.execPath, ADAPTER, 'logbook', { env, cwd: dir }, false);
    this.dc.defaultTimeout = TIMEOUT;
    this.dc.on('output', (e: DebugProtocol.OutputEvent) => this.output.push({ category: e.body.category ?? 'console', text: e.body.output }));
    this.dc.on('process', (e: DebugProtocol.ProcessEvent) => {
      if (e.body.systemProcessId) this.runnerPids.push(e.body.systemProcessId);
    });
    for (const name of ['stopped', 'exited', 'terminated', 'thread', 'continued']) {
      this.dc.on(name, (e: DebugProtocol.Event) => {
        this.events.push(e);
        const q = this.queues.get(name) ?? { items: [], waiters: [] };
        this.queues.set(name, q);
        const w = q.waiters.shift();
        if (w) w(e);
        else q.items.push(e);
      });
    }
  }

  private readonly queues = new Map<string, { items: DebugProtocol.Event[]; waiters: Array<(e: DebugProtocol.Event) => void> }>();

  /** The next event of this kind not consumed yet (events that came before the call count). */
  next(name: string, timeout = TIMEOUT): Promise<DebugProtocol.Event> {
    const q = this.queues.get(name) ?? { items: [], waiters: [] };
    this.queues.set(name, q);
    const ready = q.items.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        q.waiters.splice(q.waiters.indexOf(waiter), 1);
        reject(new Error(`no ${name} event within ${timeout} ms; output so far:\n${this.text()}`));
      }, timeout);
      const waiter = (e: DebugProtocol.Event): void => {
        clearTimeout(timer);
        resolve(e);
      };
      q.waiters.push(waiter);
    });
  }

  get db(): string {
    return path.join(this.dir, 'journal.db');
  }

  async start(): Promise<this> {
    await this.dc.start();
    return this;
  }

  /** initialize → launch, with breakpoints set between `initialized` and `configurationDone`. */
  async launch(config: Record<string, unknown>, bps: Breakpoints = {}): Promise<DebugProtocol.LaunchResponse> {
    const configured = this.dc.waitForEvent('initialized').then(async () => {
      for (const [file, list] of group(bps.lines ?? [])) {
        const r = await this.dc.setBreakpointsRequest({
          source: { path: file },
          breakpoints: list.map((b) => ({
            line: b.line,
            ...(b.condition ? { condition: b.condition } : {}),
            ...(b.hitCondition ? { hitCondition: b.hitCondition } : {}),
          })),
        });
        this.setBreakpointResults.push(...r.body.breakpoints);
      }
      if (bps.functions) await this.dc.setFunctionBreakpointsRequest({ breakpoints: bps.functions });
      if (bps.filters) await this.dc.setExceptionBreakpointsRequest({ filters: bps.filters });
      await this.dc.configurationDoneRequest();
    });
    const [, launched] = await Promise.all([configured, this.dc.launch({ journal: this.db, cwd: this.dir, ...config })]);
    return launched;
  }

  /** Launches expecting failure; returns the error message the client would show. */
  async launchFails(config: Record<string, unknown>): Promise<string> {
    const terminated = this.next('terminated');
    const configured = this.dc.waitForEvent('initialized').then(() => this.dc.configurationDoneRequest());
    const error = await this.dc.launch({ journal: this.db, cwd: this.dir, ...config }).then(
      () => assert.fail('the launch was expected to fail'),
      (err: Error) => err.message,
    );
    await Promise.all([configured.catch(() => undefined), terminated]);
    return error;
  }

  async stopped(): Promise<Stop> {
    const ev = (await this.next('stopped')) as DebugProtocol.StoppedEvent;
    const st = await this.dc.stackTraceRequest({ threadId: ev.body.threadId ?? 1 });
    return {
      reason: ev.body.reason,
      description: ev.body.description ?? '',
      ...(ev.body.text ? { text: ev.body.text } : {}),
      ...(ev.body.hitBreakpointIds ? { hitBreakpointIds: ev.body.hitBreakpointIds } : {}),
      frames: st.body.stackFrames,
    };
  }

  /** Sends a stepping request and waits for the stop it leads to. */
  async step(how: 'next' | 'stepIn' | 'stepOut' | 'continue'): Promise<Stop> {
    const stop = this.stopped();
    const threadId = this.threadId();
    if (how === 'next') await this.dc.nextRequest({ threadId });
    else if (how === 'stepIn') await this.dc.stepInRequest({ threadId });
    else if (how === 'stepOut') await this.dc.stepOutRequest({ threadId });
    else await this.dc.continueRequest({ threadId });
    return stop;
  }

  /** Like step, but undefined when the session ends first: a sequence that ran out early fails on what it shows,
   *  not on a timeout. */
  async stepOrEnd(how: 'next' | 'stepIn' | 'stepOut' | 'continue'): Promise<Stop | undefined> {
    let onEnd: (() => void) | undefined;
    const ended = new Promise<undefined>((resolve) => {
      onEnd = () => resolve(undefined);
      this.dc.once('terminated', onEnd);
    });
    // If the session ends, the stop never comes: its wait times out later, and nobody needs to hear of it.
    const stop = this.step(how).catch(() => undefined);
    try {
      return await Promise.race([stop, ended]);
    } finally {
      if (onEnd) this.dc.removeListener('terminated', onEnd);
    }
  }

  threadId(): number {
    const stops = this.events.filter((e) => e.event === 'stopped') as DebugProtocol.StoppedEvent[];
    return stops[stops.length - 1]?.body.threadId ?? 1;
  }

  /** Continues and waits for the session to end; returns the exit code. */
  async runToEnd(): Promise<number | undefined> {
    const exited = this.exitCode();
    await this.dc.continueRequest({ threadId: this.threadId() });
    return exited;
  }

  async exitCode(): Promise<number | undefined> {
    const [ex] = await Promise.all([this.next('exited') as Promise<DebugProtocol.ExitedEvent>, this.next('terminated')]);
    return ex.body.exitCode;
  }

  /** The variables of a scope of the top frame, as name → displayed value. */
  async scope(name: string, frameIndex = 0): Promise<Record<string, { value: string; ref: number; type?: string }>> {
    const st = await this.dc.stackTraceRequest({ threadId: this.threadId() });
    const frame = st.body.stackFrames[frameIndex];
    assert.ok(frame, 'no frame');
    const scopes = await this.dc.scopesRequest({ frameId: frame.id });
    const scope = scopes.body.scopes.find((s) => s.name === name || s.name.startsWith(`${name} (`));
    assert.ok(scope, `no scope ${name} in ${scopes.body.scopes.map((s) => s.name).join(', ')}`);
    return this.vars(scope.variablesReference);
  }

  async vars(ref: number, start?: number, count?: number): Promise<Record<string, { value: string; ref: number; type?: string }>> {
    const v = await this.dc.variablesRequest({
      variablesReference: ref,
      ...(start !== undefined ? { start, count: count ?? 10, filter: 'indexed' as const } : {}),
    });
    return Object.fromEntries(v.body.variables.map((x) => [x.name, { value: x.value, ref: x.variablesReference, ...(x.type ? { type: x.type } : {}) }]));
  }

  async evaluate(expression: string, context = 'repl'): Promise<string> {
    const r = await this.dc.evaluateRequest({ expression, context });
    return r.body.result;
  }

  text(category?: string): string {
    return this.output
      .filter((o) => !category || o.category === category)
      .map((o) => o.text)
      .join('');
  }

  private disconnected = false;

  /** Sends disconnect; the adapter then exits, so close() only has to reap it. */
  async disconnect(): Promise<void> {
    this.disconnected = true;
    await this.dc.disconnectRequest({});
  }

  async close(): Promise<void> {
    if (this.disconnected) (this.dc as unknown as { stopAdapter(): void }).stopAdapter();
    else await this.dc.stop();
  }

  /** Asserts every runner this session started is gone (the adapter reaps them before it says terminated). */
  assertNothingRunning(): void {
    for (const pid of this.runnerPids) assert.equal(alive(pid), false, `runner pid ${pid} is still running`);
  }
}

function group<T extends { file: string }>(list: T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const b of list) m.set(b.file, [...(m.get(b.file) ?? []), b]);
  return m;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return true;
  }
}

export async function open(): Promise<Session> {
  return new Session().start();
}

/**
 * For a describe block: returns an opener of sessions, and registers an afterEach that closes every session a test
 * opened and checks that none left a process running.
 */
export function sessionsPerTest(): (dir?: string) => Promise<Session> {
  const opened: Session[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) {
      await s.close();
      s.assertNothingRunning();
    }
  });
  return async (dir) => {
    const s = await new Session(dir).start();
    opened.push(s);
    return s;
  };
}

/** The order fixture's provider ledger in a session's directory. */
export function orderLedger(dir: string): Record<string, string[]> {
  return JSON.parse(fs.readFileSync(path.join(dir, 'order-ledger.json'), 'utf8')) as Record<string, string[]>;
}

/** The email example's provider outbox in a session's directory. */
export function emailOutbox(dir: string): { sent: Array<{ key: string }>; calls: number } {
  return JSON.parse(fs.readFileSync(path.join(dir, 'email-outbox.json'), 'utf8')) as { sent: Array<{ key: string }>; calls: number };
}

/** The 1-based line of the first line of `file` containing `text` (after `after`, if given). */
export function lineOf(file: string, text: string, after?: string): number {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const from = after ? lines.findIndex((l) => l.includes(after)) : 0;
  const i = lines.findIndex((l, n) => n >= from && l.includes(text));
  assert.ok(i >= 0, `${text} not in ${file}`);
  return i + 1;
}

/**
 * A stop as structure, not sentences: the request that led to it, the DAP reason, the frames (kind and the line's
 * label), the fields of the Run, Step and Action scopes, and the kinds of the journal entries written since the
 * previous stop. A rewording of the adapter's descriptions leaves it alone; a change of sequence does not.
 */
export interface StopShape {
  readonly how: string;
  readonly reason: string;
  /** Top-down, e.g. `action@send`: the frame's kind (from its scopes) at the labelled line. */
  readonly frames: string[];
  /** Run scope: `<status> #<attempt>`. */
  readonly run: string;
  /** Step scope: `#<1-based index>`, then `replayed` or `redone` when so. */
  readonly step?: string;
  /** Action scope: `<type> <id> <phase>/<status>`. */
  readonly action?: string;
  /** Sleep scope: `<name>`, then `replayed` when an earlier attempt started it, and `due` once nothing is left. */
  readonly sleep?: string;
  /** The kinds of the journal entries added since the previous shape of this recorder. */
  readonly journaled: string[];
}

/** Records the shapes of a session's stops in order; each knows what the journal gained since the one before. */
export class StopShapes {
  readonly shapes: StopShape[] = [];
  private journalSeen = 0;

  /** `labels` names the lines frames may stand at (line → label), so the shapes read as the script does. */
  constructor(
    private readonly s: Session,
    private readonly labels: Record<number, string>,
  ) {}

  /** Sends each request of `plan` in turn and adds the stop it leads to, until the plan or the session ends. */
  async follow(plan: ReadonlyArray<'next' | 'stepIn' | 'stepOut' | 'continue'>): Promise<void> {
    for (const how of plan) {
      const stop = await this.s.stepOrEnd(how);
      if (!stop) return;
      await this.add(how, stop);
    }
  }

  async add(how: string, stop: Stop): Promise<StopShape> {
    const dc = this.s.dc;
    const frames: string[] = [];
    let top: DebugProtocol.Scope[] = [];
    for (const [i, f] of stop.frames.entries()) {
      const scopes = (await dc.scopesRequest({ frameId: f.id })).body.scopes;
      if (i === 0) top = scopes;
      const names = scopes.map((x) => x.name);
      const kind = names.includes('Action') ? 'action' : names[0] === 'Step' ? 'step' : names[0] === 'Sleep' ? 'sleep' : 'run';
      frames.push(`${kind}@${this.labels[f.line] ?? String(f.line)}`);
    }
    const fields = async (name: string): Promise<Record<string, string> | undefined> => {
      const scope = top.find((x) => x.name === name);
      if (!scope) return undefined;
      const v = await this.s.vars(scope.variablesReference);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x.value.replace(/^'(.*)'$/, '$1')]));
    };
    const run = await fields('Run');
    const step = await fields('Step');
    const action = await fields('Action');
    const sleep = await fields('Sleep');
    const journal = top.find((x) => x.name.startsWith('Journal'));
    const total = Number(/\((\d+) entries\)/.exec(journal?.name ?? '')?.[1] ?? this.journalSeen);
    const journaled: string[] = [];
    if (journal && total > this.journalSeen) {
      const rows = await this.s.vars(journal.variablesReference, this.journalSeen, total - this.journalSeen);
      for (const row of Object.values(rows)) journaled.push((await this.s.vars(row.ref)).kind?.value.replace(/^'(.*)'$/, '$1') ?? '?');
    }
    this.journalSeen = total;
    const shape: StopShape = {
      how,
      reason: stop.reason,
      frames,
      run: `${run?.status ?? '?'} #${run?.attempt ?? '?'}`,
      ...(step ? { step: `#${Number(step.index) + 1}${step.replayed === 'true' ? ' replayed' : step.redone === 'true' ? ' redone' : ''}` } : {}),
      // The run's id inside action ids is the run's, whatever a launch generated.
      ...(action ? { action: `${action.type} ${action.id} ${action.phase}/${action.status}`.split(run?.id ?? '\0').join('<run>') } : {}),
      ...(sleep ? { sleep: `${sleep.name ?? '?'}${sleep.replayed === 'true' ? ' replayed' : ''}${sleep.left === 'due' ? ' due' : ''}` } : {}),
      journaled,
    };
    this.shapes.push(shape);
    return shape;
  }
}

/** The labelled lines of the email example: its run function, the recipients step, and the email step (and send). */
export function emailLines(): Record<number, string> {
  return {
    [lineOf(EMAIL, 'async run(run, input)')]: 'run',
    [lineOf(EMAIL, "run.step('load recipients'")]: 'load',
    [lineOf(EMAIL, 'run.do(sendEmail')]: 'email',
  };
}

/** The labelled lines of the order fixture: its run function and the compensate hooks (inverses) of each action. */
export function orderLines(): Record<number, string> {
  return {
    [lineOf(ORDER, 'async run(run, input)')]: 'run',
    [lineOf(ORDER, "record('released'")]: 'release',
    [lineOf(ORDER, "record('refunds'")]: 'refund',
    [lineOf(ORDER, "record('cancelled'")]: 'cancel',
  };
}

/** The shapes one per line: what the tests compare, and what a failure shows next to the expected table. */
export function showShapes(shapes: readonly StopShape[]): string {
  return shapes
    .map(
      (x) =>
        `${x.how} → ${x.reason} [${x.frames.join(' < ')}] run ${x.run}${x.step ? ` step ${x.step}` : ''}${x.action ? ` ${x.action}` : ''}${x.sleep ? ` sleep ${x.sleep}` : ''} +[${x.journaled.join(', ')}]`,
    )
    .join('\n');
}
