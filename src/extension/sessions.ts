// Which logbook debug sessions are running, and which run each one drives (from the adapter's events and its config).

import * as vscode from 'vscode';
import { DEBUG_TYPE } from './ids';

interface Tracked {
  readonly session: vscode.DebugSession;
  runId: string | undefined;
}

function configuredRun(c: vscode.DebugConfiguration): string | undefined {
  for (const v of [c.runId, c.resume, c.compensate]) if (typeof v === 'string' && v !== 'latest') return v;
  return undefined;
}

export class Sessions implements vscode.Disposable {
  private readonly tracked = new Map<string, Tracked>();
  private readonly subs: vscode.Disposable[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;

  constructor() {
    this.subs.push(
      vscode.debug.onDidStartDebugSession((s) => {
        if (s.type !== DEBUG_TYPE) return;
        this.tracked.set(s.id, { session: s, runId: configuredRun(s.configuration) });
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
        if (this.tracked.delete(s.id)) this.emitter.fire();
      }),
    );
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
  }
}
