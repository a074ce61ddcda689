// The extension's own log: a LogOutputChannel, so levels and timestamps come from VS Code.

import * as vscode from 'vscode';
import { OUTPUT_NAME } from './ids';

export type Log = vscode.LogOutputChannel;

export function createLog(): Log {
  return vscode.window.createOutputChannel(OUTPUT_NAME, { log: true });
}

export function logLine(log: Log): (level: 'info' | 'warn' | 'error', line: string) => void {
  return (level, line) => log[level](line);
}
