// Reads the `logbook.*` settings and resolves them against the workspace: where the journal is, which Node runs things.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { SETTINGS } from './ids';

export const DEFAULT_DB = path.join('.logbook', 'journal.db');

export interface LogbookConfig {
  /** Absolute path of the journal, or undefined when no folder is open. */
  readonly databasePath: string | undefined;
  /** The Node that runs the reader, the CLI and the debug adapter. */
  readonly runtimeExecutable: string;
  readonly autoRefresh: boolean;
  readonly workspaceFolder: string | undefined;
}

export function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function readConfig(): LogbookConfig {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const c = vscode.workspace.getConfiguration(SETTINGS.section, folder?.uri ?? null);
  const root = folder?.uri.fsPath;
  const db = c.get<string>(SETTINGS.databasePath) || DEFAULT_DB;
  const expanded = db.replace(/\$\{workspaceFolder\}/g, root ?? '');
  const databasePath = path.isAbsolute(expanded) ? expanded : root ? path.join(root, expanded) : undefined;
  return {
    databasePath,
    runtimeExecutable: c.get<string>(SETTINGS.runtimeExecutable) || 'node',
    autoRefresh: c.get<boolean>(SETTINGS.autoRefresh) ?? true,
    workspaceFolder: root,
  };
}

export function affectsLogbook(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(SETTINGS.section);
}
