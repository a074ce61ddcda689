// The `logbook` debugger: F5 on an agent script with no launch.json, the environment settings, and the adapter on the configured Node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { maskedEnv, readEnvFile } from '../adapter/envFile';
import { SecretMask } from '../shared/secrets';
import { isPostgresUrl, urlHasPassword, withoutPassword } from '../shared/pgUrl';
import { JOURNAL, LEGACY_JOURNAL } from '../shared/journalNames';
import { readConfig, settingsEnv } from './config';
import type { Credentials } from './credentials';
import { DEBUG_TYPE, paletteName } from './ids';
import { INITIAL_CONFIGURATIONS } from './launchDefaults';
import type { Log } from './log';
import { agentLines } from './sourceIndex';

export const SCRIPT_LANGUAGES = new Set(['typescript', 'javascript']);

/** The active editor's document, if it is a script on disk. */
function activeScript(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && SCRIPT_LANGUAGES.has(doc.languageId) && doc.uri.scheme === 'file' ? doc : undefined;
}

/** A new run of `file` under the debugger: what F5, the editor's Debug button and the CodeLens start. */
export function agentLaunch(file: string): vscode.DebugConfiguration {
  return { type: DEBUG_TYPE, request: 'launch', name: `Logbook: ${path.basename(file)}`, program: file };
}

/** The journal a launch configuration names, under its name or the deprecated "database" (the adapter warns on that). */
function launchJournal(config: vscode.DebugConfiguration): { attribute: string; target: string } | undefined {
  for (const attribute of [JOURNAL.launch, LEGACY_JOURNAL.launch]) {
    const target: unknown = config[attribute];
    if (typeof target === 'string') return { attribute, target };
  }
  return undefined;
}

export class LogbookConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly log: Log) {}

  /** "Add Configuration…" and a new launch.json get the generic entry; the dynamic list offers the open agent script. */
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return INITIAL_CONFIGURATIONS.map((c) => ({ ...c }));
  }

  /** The Run and Debug view's dynamic entries: the agent script in the active editor, when it is one. */
  provideDynamic(): vscode.DebugConfiguration[] {
    const doc = activeScript();
    return doc && agentLines(doc.getText()).length > 0 ? [agentLaunch(doc.fileName)] : this.provideDebugConfigurations();
  }

  /** Fills what launch.json left out: with none at all, runs the agent script in the active editor. */
  resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.DebugConfiguration | undefined {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Agent Logbook runs nothing in an untrusted workspace: trust this folder to debug agent scripts.');
      return undefined;
    }
    if (!config.type && !config.request && !config.name) {
      const doc = activeScript();
      if (!doc) {
        void vscode.window.showInformationMessage(
          'Open an agent script (a .ts or .js file with `export default defineAgent(...)`) and press F5 again, or create a launch configuration.',
        );
        return undefined;
      }
      config = agentLaunch(doc.fileName);
    }
    if (config.request === 'launch' && config.program === undefined) {
      const doc = activeScript();
      if (doc) config = { ...config, program: doc.fileName };
    }
    const named = launchJournal(config);
    if (named !== undefined && isPostgresUrl(named.target) && urlHasPassword(named.target)) {
      void vscode.window.showErrorMessage(
        `Agent Logbook: the launch configuration's "${named.attribute}" holds a PostgreSQL URL with a password; launch.json is often committed, so it is not used. Remove the password (${withoutPassword(named.target)}) and run "${paletteName('setJournalPassword')}", or set PGPASSWORD in the environment VS Code starts with.`,
      );
      return undefined;
    }
    const settings = readConfig();
    if (settings.journalProblem && named === undefined) {
      void vscode.window.showErrorMessage(`Agent Logbook: ${settings.journalProblem}`);
      return undefined;
    }
    const resolved: vscode.DebugConfiguration = { ...config };
    resolved.cwd ??= folder?.uri.fsPath ?? settings.workspaceFolder;
    if (resolved.journal === undefined && resolved.database === undefined && settings.journal) resolved.journal = settings.journal;
    resolved.runtimeExecutable ??= settings.runtimeExecutable;
    return resolved;
  }

  /**
   * Merges the environment once variables are substituted: the settings' (logbook.envFile, then logbook.env),
   * then the configuration's envFile, then its env. The adapter gets one env; a missing file stops the launch.
   */
  resolveDebugConfigurationWithSubstitutedVariables(
    _folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    const resolved: vscode.DebugConfiguration = { ...config };
    try {
      const cwd = typeof resolved.cwd === 'string' ? resolved.cwd : (readConfig().workspaceFolder ?? process.cwd());
      const fromFile = typeof resolved.envFile === 'string' ? readEnvFile(path.resolve(cwd, resolved.envFile), 'the launch attribute "envFile"') : {};
      const own = typeof resolved.env === 'object' && resolved.env !== null ? (resolved.env as Record<string, string>) : {};
      const env = { ...settingsEnv(readConfig()), ...fromFile, ...own };
      delete resolved.envFile;
      if (Object.keys(env).length > 0) resolved.env = env;
    } catch (err) {
      void vscode.window.showErrorMessage(`Agent Logbook: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    // The input and every other attribute too: a secret of the environment copied into them is masked by value.
    const mask = SecretMask.ofEnv({ ...process.env, ...(resolved.env as Record<string, string> | undefined) });
    const forLog = mask.deep({ ...resolved, ...(resolved.env ? { env: maskedEnv(resolved.env as Record<string, string>) } : {}) });
    this.log.info(`debug configuration: ${JSON.stringify(forLog)}`);
    return resolved;
  }
}

export class LogbookAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(
    private readonly adapterScript: string,
    private readonly log: Log,
    private readonly credentials: Credentials,
  ) {}

  /** The adapter, and the runner it starts, get a PostgreSQL journal's password in PGPASSWORD: never in launch.json or on a command line. */
  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const journal = launchJournal(session.configuration)?.target;
    const secret = journal !== undefined && isPostgresUrl(journal) ? await this.credentials.env(readConfig(), journal) : {};
    const node = typeof session.configuration.runtimeExecutable === 'string' ? session.configuration.runtimeExecutable : readConfig().runtimeExecutable;
    if (!fs.existsSync(this.adapterScript)) {
      throw new Error(`The Logbook debug adapter is missing (${this.adapterScript}). Reinstall the extension, or run \`npm run build\` in its folder.`);
    }
    const cwd = typeof session.configuration.cwd === 'string' ? session.configuration.cwd : session.workspaceFolder?.uri.fsPath;
    this.log.info(`starting the debug adapter: ${node} ${this.adapterScript}`);
    return new vscode.DebugAdapterExecutable(node, [this.adapterScript], { ...(cwd ? { cwd } : {}), env: { ...secret, ELECTRON_RUN_AS_NODE: '1' } });
  }
}
