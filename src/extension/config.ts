// Reads the `logbook.*` settings and resolves them against the workspace: where the journal is, which Node runs things.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { readEnvFile } from '../adapter/envFile';
import { SETTINGS } from './ids';

export const DEFAULT_DB = path.join('.logbook', 'journal.db');

export interface LogbookConfig {
  /** Absolute path of the journal, or undefined when no folder is open. */
  readonly databasePath: string | undefined;
  /** The Node that runs the reader, the CLI and the debug adapter. */
  readonly runtimeExecutable: string;
  readonly autoRefresh: boolean;
  readonly workspaceFolder: string | undefined;
  /** `logbook.envFile`, absolute; undefined when not set. */
  readonly envFile: string | undefined;
  /** `logbook.env`: variables for every process the extension starts (over envFile's). */
  readonly env: Record<string, string>;
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
  const envFileSetting = (c.get<string>(SETTINGS.envFile) ?? '').replace(/\$\{workspaceFolder\}/g, root ?? '');
  const rawEnv = c.get<Record<string, unknown>>(SETTINGS.env) ?? {};
  return {
    envFile: !envFileSetting ? undefined : path.isAbsolute(envFileSetting) ? envFileSetting : path.join(root ?? '', envFileSetting),
    env: Object.fromEntries(Object.entries(rawEnv).filter((e): e is [string, string] => typeof e[1] === 'string')),
    databasePath,
    runtimeExecutable: c.get<string>(SETTINGS.runtimeExecutable) || 'node',
    autoRefresh: c.get<boolean>(SETTINGS.autoRefresh) ?? true,
    workspaceFolder: root,
  };
}

/**
 * The variables the settings add to every process the extension starts (runs, resumes, CLI calls, the Run button):
 * `logbook.envFile`'s, then `logbook.env`'s over them. A missing env file throws, naming the setting.
 */
export function settingsEnv(c: LogbookConfig): Record<string, string> {
  return { ...(c.envFile ? readEnvFile(c.envFile, `the setting ${SETTINGS.section}.${SETTINGS.envFile}`) : {}), ...c.env };
}

export function affectsLogbook(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(SETTINGS.section);
}
