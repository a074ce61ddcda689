// Debug on a kill point: a session that runs the agent and is killed for real there, then a resume that stops at the reconciliation.

import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RehearsalPoint as Point } from '../shared/rehearsalEvents';
import { DEBUG_TYPE } from './ids';
import type { Log } from './log';

/** Points after which the run holds an in-doubt action: the resume stops at its reconciliation by itself. */
const LEAVES_DOUBT = new Set([
  'action:after-start',
  'action:after-execute',
  'action:after-execute-throw',
  'compensate:after-start',
  'compensate:after-execute',
]);

export interface KillPointSessions {
  readonly runId: string;
  readonly crashed: vscode.DebugSession;
  readonly resumed: boolean;
}

/** The first session of `event` (a start or an end) that `pred` picks. */
function first(event: vscode.Event<vscode.DebugSession>, pred: (s: vscode.DebugSession) => boolean): Promise<vscode.DebugSession> {
  return new Promise((resolve) => {
    const sub = event((s) => {
      if (!pred(s)) return;
      sub.dispose();
      resolve(s);
    });
  });
}

export async function debugKillPoint(p: Point, file: string, input: unknown, log: Log): Promise<KillPointSessions | undefined> {
  if (p.process > 1) {
    void vscode.window.showInformationMessage(
      `${p.spec} is in process ${p.process} of the uncrashed run (after it stopped for an approval or a decision): run the agent, settle that stop, then debug the resume with "crashAt": "${p.spec}".`,
    );
    return undefined;
  }
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file)) ?? vscode.workspace.workspaceFolders?.[0];
  const runId = `rehearse-${path
    .basename(file)
    .replace(/\.[^.]+$/, '')
    .replace(/[^A-Za-z0-9._-]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const mine = (s: vscode.DebugSession): boolean => s.type === DEBUG_TYPE && s.configuration.runId === runId;
  const start = first(vscode.debug.onDidStartDebugSession, mine);
  const end = first(vscode.debug.onDidTerminateDebugSession, mine);
  log.info(`debugging kill point ${p.spec} of ${file} as run ${runId}`);
  const ok = await vscode.debug.startDebugging(folder, {
    type: DEBUG_TYPE,
    request: 'launch',
    name: `Logbook: crash at ${p.spec}`,
    program: file,
    input,
    runId,
    crashAt: p.spec,
  });
  if (!ok) return undefined;
  const crashed = await start;
  await end;
  // The crash is real (the runner got SIGKILL); now the same run again, as a person would after the crash.
  const resumed = await vscode.debug.startDebugging(folder, {
    type: DEBUG_TYPE,
    request: 'launch',
    name: `Logbook: resume ${runId}`,
    program: file,
    resume: runId,
    ...(LEAVES_DOUBT.has(p.point) ? {} : { stopOnEntry: true }),
  });
  return { runId, crashed, resumed };
}
