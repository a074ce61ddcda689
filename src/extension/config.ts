// Reads the `logbook.*` settings and resolves them against the workspace: where the journal is, which Node runs things.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { readEnvFile } from '../adapter/envFile';
import { journalFromEnv, warnOnce } from '../shared/journalNames';
import { SETTINGS } from './ids';
import { pickJournalSetting, resolveJournalSetting, type JournalSetting } from './journalSetting';

export interface LogbookConfig extends JournalSetting {
  /** `logbook.readerRole`: the PostgreSQL role the sidebar's reader connects as (read-only), when set. */
  readonly readerRole: string | undefined;
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
  const target = journalTarget(c, root);
  const envFileSetting = (c.get<string>(SETTINGS.envFile) ?? '').replace(/\$\{workspaceFolder\}/g, root ?? '');
  const rawEnv = c.get<Record<string, unknown>>(SETTINGS.env) ?? {};
  return {
    envFile: !envFileSetting ? undefined : path.isAbsolute(envFileSetting) ? envFileSetting : path.join(root ?? '', envFileSetting),
    env: Object.fromEntries(Object.entries(rawEnv).filter((e): e is [string, string] => typeof e[1] === 'string')),
    ...target,
    readerRole: c.get<string>(SETTINGS.readerRole)?.trim() || undefined,
    runtimeExecutable: c.get<string>(SETTINGS.runtimeExecutable) || 'node',
    autoRefresh: c.get<boolean>(SETTINGS.autoRefresh) ?? true,
    workspaceFolder: root,
  };
}

/** The journal setting as the user, workspace or folder settings give it (not the manifest's default). */
function journalTarget(c: vscode.WorkspaceConfiguration, root: string | undefined): JournalSetting {
  const set = (key: string): string | undefined => {
    const own = c.inspect<string>(key);
    return own?.workspaceFolderValue ?? own?.workspaceValue ?? own?.globalValue;
  };
  const warn = (line: string): void => void vscode.window.showWarningMessage(`Agent Logbook: ${line}`);
  const picked = pickJournalSetting(set(SETTINGS.journal), set(SETTINGS.legacyJournal));
  if (picked.deprecation) warnOnce('setting', picked.deprecation, warn);
  // The environment is read (and an old variable warned about) only when no setting names the journal: a set one wins.
  return resolveJournalSetting(picked.value, picked.value ? undefined : journalFromEnv(process.env, warn), root, picked.name);
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
