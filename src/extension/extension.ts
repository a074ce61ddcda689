// Entry point of the VS Code extension: wires the reader, the runs tree, commands, debugger, decorations and status bar.

import * as vscode from 'vscode';
import type { ChangedNotice } from '../reader/readerProtocol';
import { AgentFiles } from './agentFiles';
import { Commands, registerCommands } from './commandHandlers';
import { affectsLogbook, readConfig } from './config';
import { Credentials } from './credentials';
import { LogbookAdapterFactory, LogbookConfigurationProvider } from './debug';
import { Decorations } from './decorations';
import { CONTEXT, DEBUG_TYPE, RUNS_VIEW, SETTINGS, paletteName } from './ids';
import { createLog, logLine } from './log';
import { extensionPaths } from './paths';
import { ReaderClient, ReaderError } from './readerClient';
import { Sessions } from './sessions';
import { RunStatusBar } from './statusBar';
import { TimelinePanels } from './timelinePanel';
import { TreeModel, type ReaderSource } from './tree/treeModel';
import type { Node } from './tree/nodes';
import { RunsTreeProvider } from './tree/provider';
import { Rehearsals } from './rehearsal';
import { debugKillPoint } from './rehearsalDebug';

/** What activate returns: the test suite inspects the extension through it. */
export interface LogbookApi {
  readonly activatedInMs: number;
  readonly model: TreeModel;
  readonly provider: RunsTreeProvider;
  readonly debugConfig: LogbookConfigurationProvider;
  readonly view: vscode.TreeView<Node>;
  /** The reader process's pid (tests check the host itself never loads better-sqlite3). */
  readerPid(): number | undefined;
  /** Requests to the reader process (whichever one the current settings started). */
  readonly source: ReaderSource;
  readonly decorations: Decorations;
  readonly statusBar: RunStatusBar;
  readonly timelines: TimelinePanels;
  readonly commands: Commands;
  readonly sessions: Sessions;
  readonly agentFiles: AgentFiles;
  /** The Test Explorer's rehearsal controller. */
  readonly rehearsals: Rehearsals;
  /** Change notices seen from the reader, newest last (for tests of liveness). */
  readonly notices: ChangedNotice[];
}

export function activate(context: vscode.ExtensionContext): LogbookApi {
  const t0 = performance.now();
  const log = createLog();
  const paths = extensionPaths(context.extensionPath);
  let config = readConfig();
  const credentials = new Credentials(context.secrets);
  const newReader = (): ReaderClient =>
    new ReaderClient({
      node: config.runtimeExecutable,
      script: paths.reader,
      cwd: config.workspaceFolder,
      log: logLine(log),
      env: credentials.env(config, credentials.target(config, 'reader')),
    });
  let reader = newReader();
  const readerProxy: ReaderSource = {
    // A refused journal setting is the tree's problem line, like a reader that cannot open the journal.
    request: async (m, p) => {
      if (config.journalProblem) throw new Error(config.journalProblem);
      try {
        return await reader.request(m, p);
      } catch (err) {
        throw withPasswordHint(err);
      }
    },
  };
  const model = new TreeModel(readerProxy);
  const provider = new RunsTreeProvider(model);
  const view = vscode.window.createTreeView(RUNS_VIEW, { treeDataProvider: provider, showCollapseAll: true });
  const sessions = new Sessions();
  const debugConfig = new LogbookConfigurationProvider(log);
  const decorations = new Decorations(readerProxy, log);
  const statusBar = new RunStatusBar(readerProxy, sessions);
  const timelines: TimelinePanels = new TimelinePanels(
    vscode.Uri.joinPath(context.extensionUri, 'media'),
    readerProxy,
    log,
    (runId, stepIdx, actionId) => commands.reveal(runId, stepIdx, actionId),
    (runId) => sessions.pausesOf(runId),
  );
  const commands: Commands = new Commands({
    model,
    reader: readerProxy,
    log,
    paths,
    view,
    sessions,
    openTimeline: (id) => timelines.show(id),
    credentials,
    rehearse: (file) => rehearsals.rehearseFile(file),
  });
  const rehearsals = new Rehearsals(paths, log, async (p, file, input) => (await debugKillPoint(p, file, input, log)) !== undefined);
  const notices: ChangedNotice[] = [];
  const agentFiles = new AgentFiles();

  const onChanged = (n: ChangedNotice): void => {
    notices.push(n);
    if (notices.length > 200) notices.splice(0, notices.length - 200);
    if (!config.autoRefresh) return;
    void model.apply(n).catch((err: unknown) => log.warn(`tree refresh: ${String(err)}`));
    decorations.schedule();
    statusBar.schedule();
    timelines.changed(n.structure ? 'all' : n.runs);
  };

  const connect = (): void => {
    if (config.journalProblem) {
      log.error(config.journalProblem);
      void vscode.window.showErrorMessage(`Agent Logbook: ${config.journalProblem}`);
    }
    const target = credentials.target(config, 'reader');
    if (target) {
      reader.onChanged(onChanged);
      void reader.open(target).then(
        () => log.info(`journal: ${target}`),
        (err: unknown) => log.error(`could not open the journal: ${String(err)}`),
      );
    }
  };
  const restartReader = (why: string): void => {
    log.info(`${why}: restarting the journal reader`);
    reader.dispose();
    reader = newReader();
    connect();
    model.refreshAll();
    statusBar.schedule(0);
    decorations.schedule(0);
  };
  connect();

  const updateHasRuns = (): void => {
    void vscode.commands.executeCommand('setContext', CONTEXT.hasRuns, model.totalRuns > 0 || model.problem !== undefined);
  };
  model.onRootsLoaded = updateHasRuns;

  registerCommands(context, commands);
  context.subscriptions.push(
    log,
    view,
    provider,
    sessions,
    decorations,
    statusBar,
    timelines,
    { dispose: () => reader.dispose() },
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, debugConfig),
    vscode.debug.registerDebugConfigurationProvider(
      DEBUG_TYPE,
      { provideDebugConfigurations: () => debugConfig.provideDynamic() },
      vscode.DebugConfigurationProviderTriggerKind.Dynamic,
    ),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new LogbookAdapterFactory(paths.debugAdapter, log, credentials)),
    sessions.onDidChange(() => statusBar.schedule(0)),
    sessions.onDidChangePause(({ runId, paused }) => {
      model.setPaused(runId, paused);
      statusBar.schedule(0);
    }),
    agentFiles,
    rehearsals,
    vscode.workspace.onDidGrantWorkspaceTrust(() => model.refreshAll()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!affectsLogbook(e)) return;
      const next = readConfig();
      const restart =
        next.runtimeExecutable !== config.runtimeExecutable ||
        next.journal !== config.journal ||
        next.readerRole !== config.readerRole ||
        next.journalProblem !== config.journalProblem;
      config = next;
      if (restart) restartReader('settings changed');
    }),
    credentials.onDidChange(() => restartReader('a journal password changed')),
  );
  const activatedInMs = performance.now() - t0;
  log.info(`activated in ${activatedInMs.toFixed(1)} ms`);
  return {
    activatedInMs,
    model,
    provider,
    debugConfig,
    view,
    readerPid: () => reader.pid,
    source: readerProxy,
    decorations,
    statusBar,
    timelines,
    commands,
    sessions,
    agentFiles,
    rehearsals,
    notices,
  };
}

/** A PostgreSQL journal that refused the password: say where VS Code keeps one. */
function withPasswordHint(err: unknown): unknown {
  // pg reports a missing password (the server asked for one) without a SQLSTATE: recognise its words too.
  if (!(err instanceof ReaderError) || (err.code !== 'LB_DB_AUTH' && !/client password must be a string|password authentication failed/i.test(err.message)))
    return err;
  return new ReaderError(
    err.code,
    `${err.message} In VS Code: run "${paletteName('setJournalPassword')}" (for the role in ${SETTINGS.section}.${SETTINGS.readerRole}, when set).`,
  );
}

export function deactivate(): void {
  // Subscriptions dispose the reader process and everything else.
}
