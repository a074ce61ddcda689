// Helpers for the extension-host suite: the extension's API, the CLI on the configured Node, waiting, tree items.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LogbookApi } from '../../src/extension/extension';
import type { Node } from '../../src/extension/tree/nodes';

export const EXT_ID = 'agent-logbook.agent-logbook';
export const ROOT = process.env.LOGBOOK_REPO_ROOT ?? '';
export const NODE = process.env.LOGBOOK_TEST_NODE ?? 'node';
export const CLI = path.join(ROOT, 'dist', 'cli.js');

export function workspace(): string {
  const f = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!f) throw new Error('the suite needs a workspace folder');
  return f;
}

export const stateDir = (): string => process.env.LOGBOOK_STATE_DIR ?? path.join(workspace(), '.logbook');
export const dbFile = (): string => path.join(workspace(), '.logbook', 'journal.db');
export const agentFile = (): string => path.join(workspace(), 'agent.ts');

export async function api(): Promise<LogbookApi> {
  const ext = vscode.extensions.getExtension<LogbookApi>(EXT_ID);
  if (!ext) throw new Error(`extension ${EXT_ID} is not loaded`);
  return ext.isActive ? ext.exports : ext.activate();
}

function env(): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: '1', LOGBOOK_STATE_DIR: stateDir() };
}

/** Runs the CLI to completion on the Node the extension is configured with. */
export function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE, [CLI, ...args, '--journal', dbFile()], { cwd: workspace(), env: env(), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function cliAsync(args: string[]): ChildProcess {
  return spawn(NODE, [CLI, ...args, '--journal', dbFile()], { cwd: workspace(), env: env(), stdio: 'ignore' });
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Shown {
  readonly node: Node;
  readonly item: vscode.TreeItem;
}

/** The children VS Code would show under `parent`, with the TreeItems the provider gives for them. */
export async function shown(a: LogbookApi, parent?: Node): Promise<Shown[]> {
  const nodes = await a.provider.getChildren(parent);
  return nodes.map((node) => ({ node, item: a.provider.getTreeItem(node) }));
}

export async function runItem(a: LogbookApi, runId: string): Promise<Shown | undefined> {
  return (await shown(a, undefined)).find((s) => s.node.kind === 'run' && s.node.run.id === runId);
}

export const text = (v: string | boolean | vscode.TreeItemLabel | undefined): string => (typeof v === 'string' ? v : typeof v === 'object' ? v.label : '');

export function release(): void {
  fs.mkdirSync(stateDir(), { recursive: true });
  fs.writeFileSync(path.join(stateDir(), 'release'), '');
}

export function unrelease(): void {
  fs.rmSync(path.join(stateDir(), 'release'), { force: true });
}

/** Records every DAP message the logbook adapter sends, per session. */
export class DapLog implements vscode.Disposable {
  readonly messages: Array<{ session: vscode.DebugSession; m: { type: string; event?: string; body?: Record<string, unknown> } }> = [];
  private readonly reg: vscode.Disposable;
  constructor() {
    this.reg = vscode.debug.registerDebugAdapterTrackerFactory('logbook', {
      createDebugAdapterTracker: (session) => ({
        onDidSendMessage: (m: { type: string; event?: string; body?: Record<string, unknown> }) => this.messages.push({ session, m }),
      }),
    });
  }
  stops(session?: vscode.DebugSession): Array<{ session: vscode.DebugSession; body: Record<string, unknown> }> {
    return this.messages
      .filter((x) => x.m.type === 'event' && x.m.event === 'stopped' && (!session || x.session.id === session.id))
      .map((x) => ({ session: x.session, body: x.m.body ?? {} }));
  }
  dispose(): void {
    this.reg.dispose();
  }
}

export function terminated(name: string): Promise<vscode.DebugSession> {
  return new Promise((resolve) => {
    const sub = vscode.debug.onDidTerminateDebugSession((s) => {
      if (s.name === name) {
        sub.dispose();
        resolve(s);
      }
    });
  });
}

export function started(name: string): Promise<vscode.DebugSession> {
  return new Promise((resolve) => {
    const sub = vscode.debug.onDidStartDebugSession((s) => {
      if (s.name === name) {
        sub.dispose();
        resolve(s);
      }
    });
  });
}
