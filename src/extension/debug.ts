// The `logbook` debugger: F5 on an open agent script with no launch.json, and the adapter started on the configured Node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readConfig } from './config';
import { DEBUG_TYPE } from './ids';
import type { Log } from './log';

export const SCRIPT_LANGUAGES = new Set(['typescript', 'javascript']);

/** What `Add Configuration…` and the welcome view write into a new launch.json. */
import { INITIAL_CONFIGURATIONS } from './launchDefaults';

export class LogbookConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly log: Log) {}

  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return INITIAL_CONFIGURATIONS.map((c) => ({ ...c }));
  }

  /** Fills what launch.json left out: with none at all, runs the agent script in the active editor. */
  resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.DebugConfiguration | undefined {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Agent Logbook runs nothing in an untrusted workspace: trust this folder to debug agent scripts.');
      return undefined;
    }
    if (!config.type && !config.request && !config.name) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || !SCRIPT_LANGUAGES.has(doc.languageId) || doc.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('Open an agent script (a .ts or .js file with `export default defineAgent(...)`) and press F5 again, or create a launch configuration.');
        return undefined;
      }
      config = { type: DEBUG_TYPE, request: 'launch', name: `Logbook: ${path.basename(doc.fileName)}`, program: doc.fileName };
    }
    if (config.request === 'launch' && config.program === undefined) {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc && SCRIPT_LANGUAGES.has(doc.languageId) && doc.uri.scheme === 'file') config = { ...config, program: doc.fileName };
    }
    const settings = readConfig();
    const resolved: vscode.DebugConfiguration = { ...config };
    resolved.cwd ??= folder?.uri.fsPath ?? settings.workspaceFolder;
    if (resolved.database === undefined && settings.databasePath) resolved.database = settings.databasePath;
    resolved.runtimeExecutable ??= settings.runtimeExecutable;
    this.log.info(`debug configuration: ${JSON.stringify(resolved)}`);
    return resolved;
  }
}

export class LogbookAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(
    private readonly adapterScript: string,
    private readonly log: Log,
  ) {}

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const node = typeof session.configuration.runtimeExecutable === 'string' ? session.configuration.runtimeExecutable : readConfig().runtimeExecutable;
    if (!fs.existsSync(this.adapterScript)) {
      throw new Error(`The Logbook debug adapter is missing (${this.adapterScript}). Reinstall the extension, or run \`npm run build\` in its folder.`);
    }
    const cwd = typeof session.configuration.cwd === 'string' ? session.configuration.cwd : session.workspaceFolder?.uri.fsPath;
    this.log.info(`starting the debug adapter: ${node} ${this.adapterScript}`);
    return new vscode.DebugAdapterExecutable(node, [this.adapterScript], { ...(cwd ? { cwd } : {}), env: { ELECTRON_RUN_AS_NODE: '1' } });
  }
}
