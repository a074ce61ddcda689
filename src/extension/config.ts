// Reads the `logbook.*` settings and resolves them against the workspace: where the journal is, which Node runs things.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { readEnvFile } from '../adapter/envFile';
import { isPostgresUrl, urlHasPassword, urlPassword, withoutPassword } from '../shared/pgUrl';
import { SETTINGS, paletteName } from './ids';

export const DEFAULT_DB = path.join('.logbook', 'journal.db');

export interface LogbookConfig {
  /**
   * The journal: an absolute SQLite path, or a postgres:// URL without a password; undefined when no folder is open
   * for a relative path, or when the setting is refused (see `databaseProblem`).
   */
  readonly databasePath: string | undefined;
  /** Why the journal setting is refused (a password in it), said to the person instead of opening anything. */
  readonly databaseProblem: string | undefined;
  /** The password $LOGBOOK_DB of the editor's environment carried, when the journal came from there. */
  readonly envPassword: string | undefined;
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

type Target = Pick<LogbookConfig, 'databasePath' | 'databaseProblem' | 'envPassword'>;

/**
 * The journal the settings name; with no setting of its own, a postgres:// $LOGBOOK_DB of the editor's environment
 * (a file path there stays the CLI's business: the sidebar keeps the workspace's file). A password is allowed there (the environment is a place for credentials) but refused in settings files.
 */
function journalTarget(c: vscode.WorkspaceConfiguration, root: string | undefined): Target {
  const own = c.inspect<string>(SETTINGS.databasePath);
  const set = own?.workspaceFolderValue ?? own?.workspaceValue ?? own?.globalValue;
  const env = process.env.LOGBOOK_DB;
  const fromEnv = !set && env && isPostgresUrl(env) ? env : undefined;
  const db = set || fromEnv || DEFAULT_DB;
  if (isPostgresUrl(db)) {
    if (fromEnv) return { databasePath: withoutPassword(db), databaseProblem: undefined, envPassword: urlPassword(db) };
    if (urlHasPassword(db)) {
      return {
        databasePath: undefined,
        envPassword: undefined,
        databaseProblem: `The setting ${SETTINGS.section}.${SETTINGS.databasePath} holds a PostgreSQL URL with a password; settings files are often committed, so Agent Logbook does not use it. Remove the password from the URL (${withoutPassword(db)}) and run "${paletteName('setJournalPassword')}", or set PGPASSWORD in the environment VS Code starts with.`,
      };
    }
    return { databasePath: db, databaseProblem: undefined, envPassword: undefined };
  }
  const expanded = db.replace(/\$\{workspaceFolder\}/g, root ?? '');
  return { databasePath: path.isAbsolute(expanded) ? expanded : root ? path.join(root, expanded) : undefined, databaseProblem: undefined, envPassword: undefined };
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
