// Which logbook debug sessions are running, which run each drives, and where each is paused (from its DAP traffic).

import * as vscode from 'vscode';
import { DEBUG_TYPE } from './ids';
import type { PauseInfo } from './tree/nodes';

interface Tracked {
  readonly session: vscode.DebugSession;
  runId: string | undefined;
  paused?: PauseInfo;
}

/** Requests after which the run goes on: the adapter answers them without a `continued` event, as DAP allows. */
const RESUMING = new Set(['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue', 'restartFrame', 'goto', 'terminate', 'disconnect']);

interface DapMessage {
  readonly type?: string;
  readonly event?: string;
  readonly command?: string;
  readonly success?: boolean;
  readonly body?: Record<string, unknown>;
}

interface DapFrame {
  readonly name?: string;
  readonly line?: number;
  readonly source?: { readonly path?: string; readonly name?: string };
}

function configuredRun(c: vscode.DebugConfiguration): string | undefined {
  for (const v of [c.runId, c.resume, c.compensate]) if (typeof v === 'string' && v !== 'latest') return v;
  return undefined;
}

export class Sessions implements vscode.Disposable {
  private readonly tracked = new Map<string, Tracked>();
  private readonly pauseLog = new Map<string, Array<{ start: number; end: number | undefined }>>();
  private readonly subs: vscode.Disposable[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private readonly pauseEmitter = new vscode.EventEmitter<{ runId: string; paused: PauseInfo | undefined }>();
  /** A session stopped (with where) or went on (undefined) in the run it drives. */
  readonly onDidChangePause = this.pauseEmitter.event;

  constructor() {
    this.subs.push(
      vscode.debug.onDidStartDebugSession((s) => {
        if (s.type !== DEBUG_TYPE) return;
        this.track(s);
        this.emitter.fire();
      }),
      vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
        if (e.session.type !== DEBUG_TYPE) return;
        const body = e.body as { runId?: unknown } | undefined;
        const t = this.tracked.get(e.session.id) ?? { session: e.session, runId: undefined };
        if (typeof body?.runId === 'string' && t.runId !== body.runId) {
          t.runId = body.runId;
          this.tracked.set(e.session.id, t);
          this.emitter.fire();
        }
      }),
      vscode.debug.onDidTerminateDebugSession((s) => {
        const t = this.tracked.get(s.id);
        if (t?.paused) this.setPause(t, undefined);
        if (this.tracked.delete(s.id)) this.emitter.fire();
      }),
      vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (m: DapMessage) => this.fromAdapter(session, m),
          onWillReceiveMessage: (m: DapMessage) => {
            if (m.type === 'request' && m.command && RESUMING.has(m.command)) this.went(session);
          },
        }),
      }),
    );
  }

  /** The adapter's messages reach the tracker directly, so its first stop can come before onDidStartDebugSession. */
  private track(s: vscode.DebugSession): Tracked {
    let t = this.tracked.get(s.id);
    if (!t) {
      t = { session: s, runId: configuredRun(s.configuration) };
      this.tracked.set(s.id, t);
    }
    return t;
  }

  private fromAdapter(session: vscode.DebugSession, m: DapMessage): void {
    if (m.type === 'event' && (m.event === 'terminated' || m.event === 'exited')) {
      this.went(session);
      return;
    }
    const t = this.track(session);
    if (m.type === 'event' && m.event === 'stopped') {
      const b = m.body ?? {};
      const reason = typeof b.reason === 'string' ? b.reason : 'pause';
      const where = typeof b.description === 'string' && b.description ? b.description : reason;
      this.setPause(t, { reason, where });
    } else if (m.type === 'event' && m.event === 'continued') {
      this.went(session);
    } else if (m.type === 'response' && m.command === 'stackTrace' && m.success && t.paused) {
      // VS Code asks for the stack right after each stop: its top frame says where, in the user's source.
      const top = (m.body?.stackFrames as DapFrame[] | undefined)?.[0];
      if (!top?.name) return;
      const file = top.source?.path;
      const at = top.line && (top.source?.name ?? file) ? ` (${top.source?.name ?? file}:${top.line})` : '';
      const next: PauseInfo = { reason: t.paused.reason, where: `${top.name}${at}`, ...(file ? { file } : {}), ...(top.line ? { line: top.line } : {}) };
      if (next.where !== t.paused.where) this.setPause(t, next);
    }
  }

  private went(session: vscode.DebugSession): void {
    const t = this.tracked.get(session.id);
    if (t?.paused) this.setPause(t, undefined);
  }

  private setPause(t: Tracked, paused: PauseInfo | undefined): void {
    const at = Date.now();
    const wasPaused = t.paused !== undefined;
    t.paused = paused;
    void this.learn(t).then((runId) => {
      if (runId && wasPaused !== (paused !== undefined)) this.logPause(runId, at, paused !== undefined);
      // A later stop or continue may have replaced this one while the run id was being learned.
      if (runId && t.paused === paused) this.pauseEmitter.fire({ runId, paused });
    });
  }

  private logPause(runId: string, at: number, paused: boolean): void {
    const log = this.pauseLog.get(runId) ?? [];
    this.pauseLog.set(runId, log);
    const last = log[log.length - 1];
    if (paused && (!last || last.end !== undefined)) log.push({ start: at, end: undefined });
    else if (!paused && last && last.end === undefined) last.end = at;
    if (log.length > 1000) log.splice(0, log.length - 1000);
  }

  /** The stretches debug sessions in this window held `runId` paused (wall clock, like the journal's times). */
  pausesOf(runId: string): ReadonlyArray<{ start: number; end: number | undefined }> {
    return this.pauseLog.get(runId) ?? [];
  }

  /** Where the session driving `runId` is paused, if it is. */
  pausedRun(runId: string): PauseInfo | undefined {
    for (const t of this.tracked.values()) if (t.runId === runId && t.paused) return t.paused;
    return undefined;
  }

  /** The logbook session driving `runId`; without a run id, the active logbook session (or the only one). */
  async find(runId?: string): Promise<vscode.DebugSession | undefined> {
    if (runId !== undefined) {
      for (const t of this.tracked.values()) if ((await this.learn(t)) === runId) return t.session;
      return undefined;
    }
    const active = vscode.debug.activeDebugSession;
    if (active?.type === DEBUG_TYPE) return active;
    const all = [...this.tracked.values()];
    return all.length === 1 ? all[0]?.session : undefined;
  }

  /** The adapter names its thread "<run id> (<agent>)": ask it when the configuration did not say. */
  private async learn(t: Tracked): Promise<string | undefined> {
    if (t.runId) return t.runId;
    try {
      const r = (await t.session.customRequest('threads')) as { threads?: Array<{ name?: string }> } | undefined;
      const name = r?.threads?.[0]?.name;
      const m = name ? /^(\S+) \(/.exec(name) : null;
      if (m?.[1]) t.runId = m[1];
    } catch {
      // The session may be starting or ending: ask again next time.
    }
    return t.runId;
  }

  async runOf(session: vscode.DebugSession | undefined): Promise<string | undefined> {
    const t = session ? this.tracked.get(session.id) : undefined;
    return t ? this.learn(t) : undefined;
  }

  async activeRunId(): Promise<string | undefined> {
    return this.runOf(await this.find());
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.emitter.dispose();
    this.pauseEmitter.dispose();
  }
}
