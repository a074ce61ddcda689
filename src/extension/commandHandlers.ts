// The command handlers: every change to a run goes through the CLI on the configured Node or the debug session.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionDisplay, RunDto } from '../reader/readerProtocol';
import { ACTION_WORDS } from '../reader/readerProtocol';
import { cliProblem, cliReport, runCli, type CliResult } from './cli';
import { readConfig, settingsEnv } from './config';
import type { Credentials, SetPasswordOptions } from './credentials';
import { agentLaunch } from './debug';
import { INITIAL_CONFIGURATIONS } from './launchDefaults';
import { COMMANDS, DEBUG_TYPE, RUNS_VIEW, type CommandKey } from './ids';
import type { Log } from './log';
import type { ExtensionPaths } from './paths';
import type { ReaderSource } from './tree/treeModel';
import type { Sessions } from './sessions';
import { findAction, findStep, indexSource } from './sourceIndex';
import { actionRef, options, runRef, stepRef, type ActionRef } from './targets';
import type { TreeModel } from './tree/treeModel';
import type { MoreNode, Node } from './tree/nodes';
import { RUN_LOOK } from './tree/render';

export interface CommandDeps {
  readonly model: TreeModel;
  readonly reader: ReaderSource;
  readonly log: Log;
  readonly paths: ExtensionPaths;
  readonly view: vscode.TreeView<Node>;
  readonly sessions: Sessions;
  readonly openTimeline: (runId: string) => Promise<unknown>;
  readonly credentials: Credentials;
  /** Rehearses the agent of a file in the Test Explorer (the Rehearse CodeLens). */
  readonly rehearse: (file: string) => Promise<void>;
}

/** The policy's answers, carried by the reader: the same the tree's menus use. */
const COMPENSABLE = (r: RunDto): boolean => r.canCompensate;

export class Commands {
  constructor(private readonly d: CommandDeps) {}

  /** Handlers by command key: the manifest test checks this table against package.json. */
  handlers(): Record<CommandKey, (...args: unknown[]) => unknown> {
    return {
      killRun: (a, o) => this.kill(a, o),
      resumeRun: (a, o) => this.resume(a, o),
      compensateRun: (a, o) => this.compensate(a, o),
      cancelRun: (a, o) => this.cancel(a, o),
      approveAction: (a, o) => this.approval(a, o, true),
      rejectAction: (a, o) => this.approval(a, o, false),
      sendEvent: (a, o) => this.sendEvent(a, o),
      decideHappened: (a, o) => this.decide(a, 'happened', o),
      decideNotHappened: (a, o) => this.decide(a, 'not-happened', o),
      revealSource: (a) => this.revealSource(a),
      copyKey: (a) => this.copyKey(a),
      openCheckpoint: (a) => this.openCheckpoint(a),
      openCallRecord: (a) => this.openCallRecord(a),
      forkWithEditedAnswer: (a, o) => this.forkWithEditedAnswer(a, o),
      deleteRun: (a, o) => this.delete(a, o),
      refresh: () => this.d.model.refreshAll(),
      openTimeline: (a) => this.timeline(a),
      createLaunchConfig: () => this.createLaunchConfig(),
      openExample: () => this.openExample(),
      showLog: () => this.d.log.show(),
      loadMore: (a) => this.d.model.loadMore(a as MoreNode),
      runAgent: (a) => this.runAgent(a),
      rehearseAgent: (a) => this.rehearseAgent(a),
      debugAgent: (a) => this.debugAgent(a),
      setJournalPassword: (o) => this.d.credentials.setPassword(readConfig(), options(o) as SetPasswordOptions),
    };
  }

  private trusted(what: string): boolean {
    if (vscode.workspace.isTrusted) return true;
    void vscode.window.showWarningMessage(
      `Agent Logbook runs nothing in an untrusted workspace, so it cannot ${what}. Trust this folder to do it; browsing the journal works either way.`,
    );
    return false;
  }

  /** The CLI against the journal setting: a PostgreSQL URL goes on its command line without a password, which goes in PGPASSWORD. */
  private async cli(args: string[]): Promise<CliResult> {
    const c = readConfig();
    if (c.journalProblem) throw new Error(c.journalProblem);
    if (!c.journal) throw new Error('Open a folder first: the journal lives in the workspace.');
    const env = { ...settingsEnv(c), ...(await this.d.credentials.env(c, c.journal)) };
    return runCli({ node: c.runtimeExecutable, cli: this.d.paths.cli, db: c.journal, cwd: c.workspaceFolder, env, log: (l, m) => this.d.log[l](m) }, args);
  }

  private async withProgress(title: string, args: string[]): Promise<CliResult> {
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, () => this.cli(args));
    this.report(r);
    return r;
  }

  /** Tells the person how a CLI call ended, in the run's own status words. */
  private report(r: CliResult): void {
    const { level, text } = cliReport(r);
    if (level === 'error') void vscode.window.showErrorMessage(text);
    else if (level === 'warning') void vscode.window.showWarningMessage(text);
    else void vscode.window.showInformationMessage(text);
  }

  private async pickRun(arg: unknown, placeHolder: string, ok: (r: RunDto) => boolean): Promise<RunDto | undefined> {
    const ref = runRef(arg);
    if (ref) return (await this.d.reader.request('run', { runId: ref.runId })) ?? undefined;
    const page = await this.d.reader.request('runs', { offset: 0, limit: 200 });
    const candidates = page.runs.filter(ok);
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage('No run fits that command right now.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      candidates.map((r) => ({ label: r.agent, description: `${RUN_LOOK[r.status].word} · ${r.id}`, run: r })),
      { placeHolder },
    );
    return pick?.run;
  }

  async kill(arg: unknown, opt?: unknown): Promise<string | undefined> {
    const ref = runRef(arg);
    const session = await this.d.sessions.find(ref?.runId);
    if (session) {
      await session.customRequest('kill');
      this.d.log.info(`killed the runner of debug session ${session.name}`);
      return 'killed';
    }
    const run = await this.pickRun(arg, 'Kill which live run?', (r) => r.ownerPid !== null);
    if (!run) return undefined;
    if (run.ownerPid === null) {
      void vscode.window.showInformationMessage(`Run ${run.id} is not running on this machine; there is nothing to kill.`);
      return undefined;
    }
    if (options(opt).confirm !== false) {
      const ok = await vscode.window.showWarningMessage(
        `Kill run ${run.id}? Its process (pid ${run.ownerPid}) gets SIGKILL now, like a crash: an action in flight stays in doubt until you resume.`,
        { modal: true },
        'Kill',
      );
      if (ok !== 'Kill') return undefined;
    }
    process.kill(run.ownerPid, 'SIGKILL');
    this.d.log.info(`sent SIGKILL to pid ${run.ownerPid} (run ${run.id})`);
    return 'killed';
  }

  async resume(arg: unknown, opt?: unknown): Promise<unknown> {
    if (!this.trusted('resume a run')) return undefined;
    const run = await this.pickRun(arg, 'Resume which run?', (r) => r.canResume);
    if (!run) return undefined;
    const via = options(opt).via ?? (fs.existsSync(this.d.paths.debugAdapter) ? 'debugger' : 'cli');
    if (via === 'debugger') {
      const folder = vscode.workspace.workspaceFolders?.[0];
      return vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE,
        request: 'launch',
        name: `Logbook: resume ${run.id}`,
        program: run.script,
        resume: run.id,
      });
    }
    return this.withProgress(`Resuming ${run.id}…`, ['resume', run.id]);
  }

  async compensate(arg: unknown, opt?: unknown): Promise<unknown> {
    if (!this.trusted('compensate a run')) return undefined;
    const run = await this.pickRun(arg, 'Compensate which run?', COMPENSABLE);
    if (!run) return undefined;
    if (options(opt).confirm !== false) {
      const ok = await vscode.window.showWarningMessage(
        `Compensate run ${run.id}? Its committed actions are undone newest-first with their inverses; actions without one are reported as irreversible.`,
        { modal: true },
        'Compensate',
      );
      if (ok !== 'Compensate') return undefined;
    }
    const session = await this.d.sessions.find(run.id);
    if (session) return session.customRequest('compensate');
    if (options(opt).via === 'debugger') {
      const folder = vscode.workspace.workspaceFolders?.[0];
      return vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE,
        request: 'launch',
        name: `Logbook: compensate ${run.id}`,
        program: run.script,
        compensate: run.id,
      });
    }
    return this.withProgress(`Compensating ${run.id}…`, ['compensate', run.id]);
  }

  /**
   * Cancels a run for good, as `logbook cancel` does: from its menu in the tree, the palette, or the debug toolbar (the
   * session's own run). Asks whether to compensate what it did, and a reason for the journal (both optional). A run a
   * debug session drives is cancelled through it (it stops at its next boundary, and the session ends saying so); any
   * other through the CLI, which waits for a live holder to stop.
   */
  async cancel(arg: unknown, opt?: unknown): Promise<unknown> {
    if (!this.trusted('cancel a run')) return undefined;
    const o = options(opt);
    // The debug toolbar gives no run: the active Logbook session's.
    const fromSession = runRef(arg) ? undefined : await this.d.sessions.activeRunId();
    const run = await this.pickRun(fromSession ?? arg, 'Cancel which run?', (r) => r.canCancel);
    if (!run) return undefined;
    if (!run.canCancel) {
      void vscode.window.showInformationMessage(
        `Run ${run.id} is ${RUN_LOOK[run.status].word}: it no longer goes forward, so there is nothing to cancel.${run.canCompensate ? ' Compensate it to undo what it did.' : ''}`,
      );
      return undefined;
    }
    let compensate = o.compensate;
    if (compensate === undefined) {
      // A pick, not a modal: a modal's own dismiss button says "Cancel", beside a "Cancel Run" it would be confused with.
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Cancel the run', description: 'it stops for good; what it did stays done', compensate: false },
          { label: 'Cancel the run and compensate it', description: 'then its committed actions are undone, newest first', compensate: true },
        ],
        {
          title: `Cancel run ${run.id}?`,
          placeHolder: 'It stops at its next boundary without starting a new effect (an action in flight settles as usual), and it can never be resumed.',
          ignoreFocusOut: true,
        },
      );
      if (pick === undefined) return undefined;
      compensate = pick.compensate;
    }
    let reason = o.reason;
    if (reason === undefined && o.confirm !== false) {
      reason = await vscode.window.showInputBox({
        title: `Cancel run ${run.id}`,
        prompt: 'Why (optional): journaled with the cancel, and shown by `logbook show`.',
        placeHolder: 'e.g. the customer withdrew the order',
        ignoreFocusOut: true,
      });
      if (reason === undefined) return undefined;
    }
    reason = reason?.trim() || undefined;
    const session = await this.d.sessions.find(run.id);
    if (session) return session.customRequest('cancelRun', { ...(reason ? { reason } : {}), compensate });
    const r = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Cancelling ${run.id}${run.leaseLive ? ' (it stops at its next boundary)' : ''}${compensate ? ', then compensating it' : ''}…`,
        cancellable: false,
      },
      () => this.cli(['cancel', run.id, ...(compensate ? ['--compensate'] : []), ...(reason ? ['--reason', reason] : [])]),
    );
    const j = r.json as { status?: string; how?: string } | undefined;
    const word = j?.status && j.status in RUN_LOOK ? RUN_LOOK[j.status as keyof typeof RUN_LOOK].word : j?.status;
    if (r.code === 0) void vscode.window.showInformationMessage(`Run ${run.id}: ${word ?? 'cancelled'}${reason ? ` (${reason})` : ''}`);
    else if (j?.how === 'finished-first')
      void vscode.window.showWarningMessage(`Run ${run.id} ended ${word ?? ''} before it reached a boundary: it was not cancelled.`);
    else void vscode.window.showErrorMessage(`Agent Logbook: ${cliProblem(r)}`);
    return r;
  }

  private async actionTarget(arg: unknown, what: string, ok: (status: string, approval: string | null) => boolean): Promise<ActionRef | undefined> {
    const ref = actionRef(arg);
    if (ref) return ref;
    const run = await this.pickRun(arg, `${what}: which run?`, (r) => r.inDoubt > 0 || r.awaitingApproval > 0);
    if (!run) return undefined;
    const items: Array<{ label: string; description: string; ref: ActionRef }> = [];
    for (let from = 0; from < run.stepCount && items.length < 200; from += 1000) {
      const steps = await this.d.reader.request('steps', { runId: run.id, from, limit: 1000 });
      for (const s of steps.steps.filter((x) => x.status !== 'completed' && x.status !== 'replayed')) {
        const acts = await this.d.reader.request('actions', { runId: run.id, stepIdx: s.idx, afterSeq: 0, limit: 1000 });
        for (const a of acts.actions)
          if (ok(a.status, a.approval)) items.push({ label: a.type, description: a.id, ref: { runId: run.id, actionId: a.id, stepIdx: a.stepIdx } });
      }
    }
    return (await vscode.window.showQuickPick(items, { placeHolder: `${what}: which action?` }))?.ref;
  }

  async approval(arg: unknown, opt: unknown, approve: boolean): Promise<unknown> {
    if (!this.trusted(approve ? 'approve an action' : 'reject an action')) return undefined;
    const ref = await this.actionTarget(arg, approve ? 'Approve' : 'Reject', (s, a) => s === 'awaiting-approval' && a === 'pending');
    if (!ref) return undefined;
    let note = options(opt).note;
    if (note === undefined && options(opt).confirm !== false) {
      note = await vscode.window.showInputBox({ prompt: `${approve ? 'Approve' : 'Reject'} ${ref.actionId}: a note for the journal (optional)` });
      if (note === undefined) return undefined;
    }
    const session = await this.d.sessions.find(ref.runId);
    // A session paused at this gate takes the decision and goes on; otherwise the CLI records it and resumes.
    if (session) return session.customRequest(approve ? 'approve' : 'reject', { ...(note ? { note } : {}) });
    return this.withProgress(`${approve ? 'Approving' : 'Rejecting'} ${ref.actionId}…`, [
      approve ? 'approve' : 'reject',
      ref.runId,
      ref.actionId,
      ...(note ? ['--note', note] : []),
    ]);
  }

  /**
   * Send Event… on a waiting run: the event's name (the one it waits for, proposed) and its data as JSON. A debug
   * session that drives the run takes it through the adapter; otherwise `logbook send` keeps it and continues the run.
   */
  async sendEvent(arg: unknown, opt?: unknown): Promise<unknown> {
    if (!this.trusted('send an event to a run')) return undefined;
    const run = await this.pickRun(arg, 'Send an event to which run?', (r) => r.status === 'waiting');
    if (!run) return undefined;
    const o = options(opt) as { name?: unknown; data?: unknown; confirm?: unknown };
    let name = typeof o.name === 'string' ? o.name : undefined;
    if (name === undefined) {
      name = await vscode.window.showInputBox({
        title: `Send an event to run ${run.id}`,
        prompt: "The event's name, as run.waitFor names it",
        value: run.waitingFor?.event ?? '',
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? undefined : 'Name the event'),
      });
      if (name === undefined) return undefined;
    }
    let text = typeof o.data === 'string' ? o.data : undefined;
    if (text === undefined && o.confirm !== false) {
      text = await vscode.window.showInputBox({
        title: `Event ${name} for run ${run.id}: its data (optional)`,
        prompt: 'The event\'s data as JSON, e.g. {"text": "yes"}; leave empty to send it without data.',
        placeHolder: '{"text": "yes"}',
        ignoreFocusOut: true,
        validateInput: (v) => jsonProblem(v),
      });
      if (text === undefined) return undefined;
    }
    const problem = text === undefined ? undefined : jsonProblem(text);
    if (problem) {
      void vscode.window.showErrorMessage(`Agent Logbook: the data of event ${name} is not JSON (${problem}); nothing was sent.`);
      return undefined;
    }
    const data = text?.trim() ? text.trim() : undefined;
    const session = await this.d.sessions.find(run.id);
    if (session) return session.customRequest('sendEvent', { name, ...(data !== undefined ? { data: JSON.parse(data) as unknown } : {}) });
    // A parent waiting for its child's event: the event goes to the child, and sending it continues both.
    const to = run.waitingFor?.runId ?? run.id;
    return this.withProgress(`Sending ${name} to ${to}…`, ['send', to, name, ...(data !== undefined ? ['--data', data] : [])]);
  }

  async decide(arg: unknown, decision: 'happened' | 'not-happened', opt?: unknown): Promise<unknown> {
    if (!this.trusted('decide an in-doubt action')) return undefined;
    const ref = await this.actionTarget(arg, 'Decide', (s) => ACTION_WORDS[s as ActionDisplay]?.canDecide === true);
    if (!ref) return undefined;
    // "Happened" may come with what the effect returned (a person looked the charge up): the script, or the model,
    // gets it instead of nothing. Asked for, optional; JSON, checked here, so a bad one changes nothing.
    let text = decision === 'happened' ? options(opt).result : undefined;
    if (decision === 'happened' && text === undefined && options(opt).confirm !== false) {
      text = await vscode.window.showInputBox({
        title: `${ref.actionId} happened: its result (optional)`,
        prompt:
          'What the action returned, as JSON (e.g. {"chargeId": "ch_123"}), if you know it: the script, or the model, gets it. Leave empty if not: it is journaled as happened, result not recorded.',
        placeHolder: '{"chargeId": "ch_123"}',
        ignoreFocusOut: true,
        validateInput: (v) => jsonProblem(v),
      });
      if (text === undefined) return undefined;
    }
    const problem = text === undefined ? undefined : jsonProblem(text);
    if (problem) {
      void vscode.window.showErrorMessage(
        `Agent Logbook: the result for ${ref.actionId} is not JSON (${problem}); nothing was decided. Give it as JSON, e.g. {"chargeId": "ch_123"}, or leave it empty.`,
      );
      return undefined;
    }
    const result = text?.trim() ? text.trim() : undefined;
    const session = await this.d.sessions.find(ref.runId);
    if (session)
      return session.customRequest('decide', { actionId: ref.actionId, decision, ...(result !== undefined ? { result: JSON.parse(result) as unknown } : {}) });
    // A compensation that stopped for this decision goes on with it; a run stopped going forward resumes.
    const compensating = (await this.d.reader.request('run', { runId: ref.runId }))?.compensationStopped === true;
    return this.withProgress(`${compensating ? 'Compensating' : 'Resuming'} ${ref.runId} with ${ref.actionId} decided ${decision}…`, [
      compensating ? 'compensate' : 'resume',
      ref.runId,
      '--decide',
      `${ref.actionId}=${decision}`,
      ...(result !== undefined ? ['--result', result] : []),
    ]);
  }

  async delete(arg: unknown, opt?: unknown): Promise<unknown> {
    if (!this.trusted('delete a run')) return undefined;
    const run = await this.pickRun(arg, 'Delete which run?', (r) => !r.leaseLive);
    if (!run) return undefined;
    if (options(opt).confirm !== false) {
      const ok = await vscode.window.showWarningMessage(`Delete run ${run.id} and its whole journal? This cannot be undone.`, { modal: true }, 'Delete');
      if (ok !== 'Delete') return undefined;
    }
    const r = await this.cli(['delete', run.id]);
    if (r.code !== 0) void vscode.window.showErrorMessage(`Agent Logbook: ${cliProblem(r)}`);
    return r;
  }

  async revealSource(arg: unknown): Promise<{ file: string; line: number } | undefined> {
    const ref = runRef(arg);
    if (!ref) return undefined;
    const run = await this.d.reader.request('run', { runId: ref.runId });
    if (!run) return undefined;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(run.script));
    const index = indexSource(doc.getText());
    let line = 0;
    const a = actionRef(arg);
    const s = stepRef(arg);
    if (a) {
      const dto = await this.d.reader.request('action', { runId: a.runId, actionId: a.actionId });
      line = (dto && findAction(index, dto.type)?.line) ?? 0;
    } else if (s) {
      const steps = await this.d.reader.request('steps', { runId: s.runId, from: s.stepIdx, limit: 1 });
      const name = steps.steps[0]?.name;
      line = (name !== undefined && findStep(index, name)?.line) || 0;
    }
    const pos = new vscode.Position(line, 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preserveFocus: false });
    return { file: run.script, line };
  }

  async copyKey(arg: unknown): Promise<string | undefined> {
    const ref = actionRef(arg);
    if (!ref) return undefined;
    await vscode.env.clipboard.writeText(ref.actionId);
    vscode.window.setStatusBarMessage(`Copied ${ref.actionId}`, 3000);
    return ref.actionId;
  }

  async openCheckpoint(arg: unknown): Promise<vscode.TextDocument | undefined> {
    const ref = runRef(arg);
    if (!ref) return undefined;
    const s = stepRef(arg);
    const cp = await this.d.reader.request('checkpoint', { runId: ref.runId, stepIdx: s ? s.stepIdx : null });
    if (!cp) return undefined;
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content: cp.json });
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc;
  }

  /** A model or tool call whole, read-only: every prompt message, the answer and its tool calls, the raw JSON. */
  async openCallRecord(arg: unknown): Promise<vscode.TextDocument | undefined> {
    const ref = actionRef(arg);
    if (!ref) return undefined;
    const rec = await this.d.reader.request('callRecord', { runId: ref.runId, actionId: ref.actionId });
    if (!rec) {
      void vscode.window.showInformationMessage(
        `${ref.actionId} is not a model call or a tool call of agent-logbook/ai: its args and result are in its details.`,
      );
      return undefined;
    }
    // An untitled document opened with content: closing it asks nothing, and nothing writes it back to the journal.
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: rec.markdown });
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc;
  }

  /**
   * The what-if: a new run that replays up to this model call and gets the person's answer instead of the recorded one
   * (`logbook fork --edit-model-answer`), then runs on for real. The recorded text is offered to edit.
   */
  async forkWithEditedAnswer(arg: unknown, opt?: unknown): Promise<CliResult | undefined> {
    if (!this.trusted('fork a run')) return undefined;
    const ref = actionRef(arg);
    if (!ref) return undefined;
    const a = await this.d.reader.request('action', { runId: ref.runId, actionId: ref.actionId });
    if (a?.ai?.kind !== 'model' || a.journalStatus !== 'committed') {
      void vscode.window.showInformationMessage(`${ref.actionId} is not a committed model call of agent-logbook/ai: there is no answer to edit.`);
      return undefined;
    }
    const recorded = (() => {
      try {
        const r = JSON.parse(a.result ?? '{}') as {
          content?: Array<{ type?: unknown; text?: unknown; delta?: unknown }>;
          parts?: Array<{ type?: unknown; text?: unknown; delta?: unknown }>;
        };
        return (r.content ?? r.parts ?? [])
          .map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : p.type === 'text-delta' && typeof p.delta === 'string' ? p.delta : ''))
          .join('');
      } catch {
        return '';
      }
    })();
    const text =
      options(opt).answer ??
      (await vscode.window.showInputBox({
        title: `What-if: how should ${a.id} answer?`,
        prompt: `The fork replays run ${a.runId} up to ${a.id}, gives this text as the model's answer (instead of ${a.ai.toolCalls.length ? `calling ${a.ai.toolCalls.join(', ')}` : 'the recorded text'}), and runs on.`,
        value: recorded,
        ignoreFocusOut: true,
      }));
    if (text === undefined) return undefined;
    const file = path.join(os.tmpdir(), `logbook-answer-${process.pid}-${Date.now()}.json`);
    fs.writeFileSync(file, JSON.stringify({ content: [{ type: 'text', text }] }));
    try {
      const r = await this.withProgress(`What-if fork of ${a.runId} at ${a.id}…`, [
        'fork',
        a.runId,
        '--step',
        String(a.stepIdx + 1),
        '--call',
        a.id,
        '--edit-model-answer',
        file,
      ]);
      const runId = (r.json as { runId?: unknown } | undefined)?.runId;
      if (typeof runId === 'string') await this.reveal(runId);
      return r;
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  async timeline(arg: unknown): Promise<unknown> {
    const run = await this.pickRun(arg, 'Show the timeline of which run?', () => true);
    if (!run) return undefined;
    return this.d.openTimeline(run.id);
  }

  /** The agent script a Run/Debug button or CodeLens was pressed on: its argument, else the active editor's file. */
  private agentFile(arg: unknown): string | undefined {
    if (arg instanceof vscode.Uri && arg.scheme === 'file') return arg.fsPath;
    const doc = vscode.window.activeTextEditor?.document;
    return doc?.uri.scheme === 'file' ? doc.fileName : undefined;
  }

  /** A new run of the agent under the debugger, without a launch configuration or the "Select debugger" picker. */
  async debugAgent(arg: unknown): Promise<boolean | undefined> {
    if (!this.trusted('debug an agent script')) return undefined;
    const file = this.agentFile(arg);
    if (!file) return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file)) ?? vscode.workspace.workspaceFolders?.[0];
    return vscode.debug.startDebugging(folder, agentLaunch(file));
  }

  /** Every kill point of the agent, in the Test Explorer: `logbook rehearse` in a child process. */
  async rehearseAgent(arg: unknown): Promise<boolean | undefined> {
    if (!this.trusted('rehearse an agent script')) return undefined;
    const file = this.agentFile(arg);
    if (!file) return undefined;
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await this.d.rehearse(file);
    return true;
  }

  /** A new run of the agent by the CLI, in a terminal (like "Run Python File"): no debugger, the journal as always. */
  async runAgent(arg: unknown): Promise<vscode.Terminal | undefined> {
    if (!this.trusted('run an agent script')) return undefined;
    const file = this.agentFile(arg);
    const c = readConfig();
    if (c.journalProblem) void vscode.window.showErrorMessage(`Agent Logbook: ${c.journalProblem}`);
    if (!file || !c.journal) return undefined;
    let env: Record<string, string>;
    try {
      env = { ...settingsEnv(c), ...(await this.d.credentials.env(c, c.journal)) };
    } catch (err) {
      void vscode.window.showErrorMessage(`Agent Logbook: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const terminal = vscode.window.createTerminal({
      name: `Logbook: ${path.basename(file)}`,
      shellPath: c.runtimeExecutable,
      shellArgs: [this.d.paths.cli, 'run', file, '--journal', c.journal],
      ...(c.workspaceFolder ? { cwd: c.workspaceFolder } : {}),
      env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    });
    terminal.show();
    this.d.log.info(`running ${file} in a terminal: ${c.runtimeExecutable} ${this.d.paths.cli} run ${file}`);
    return terminal;
  }

  async createLaunchConfig(): Promise<vscode.Uri | undefined> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!root) {
      void vscode.window.showInformationMessage('Open a folder first: launch configurations live in its .vscode/launch.json.');
      return undefined;
    }
    const uri = vscode.Uri.joinPath(root, '.vscode', 'launch.json');
    if (!fs.existsSync(uri.fsPath)) {
      fs.mkdirSync(path.dirname(uri.fsPath), { recursive: true });
      fs.writeFileSync(uri.fsPath, `${JSON.stringify({ version: '0.2.0', configurations: INITIAL_CONFIGURATIONS }, null, 2)}\n`);
    } else {
      void vscode.window.showInformationMessage(
        'launch.json exists: use "Add Configuration…" and pick a Logbook snippet (new run, resume latest, rehearse a crash).',
      );
    }
    await vscode.window.showTextDocument(uri);
    return uri;
  }

  async openExample(): Promise<vscode.Uri> {
    const uri = vscode.Uri.file(path.join(this.d.paths.examples, 'email-campaign.ts'));
    await vscode.window.showTextDocument(uri);
    return uri;
  }

  /** Selects a run (and step or action) in the runs view, loading pages as needed. */
  async reveal(runId: string, stepIdx?: number, actionId?: string): Promise<Node | undefined> {
    const node = await this.d.model.locate(runId, stepIdx, actionId);
    if (!node) return undefined;
    await vscode.commands.executeCommand(`${RUNS_VIEW}.focus`);
    for (let i = 0; ; i++) {
      try {
        await this.d.view.reveal(node, { select: true, focus: false, expand: node.kind === 'action' ? false : 1 });
        // A refresh of the tree (a live run elsewhere in the journal) can land mid-reveal and drop the selection: check.
        if (this.d.view.selection.some((n) => n.key === node.key) || i >= 10) return node;
      } catch (err) {
        // Right after the view opens its data may not be there yet ("Data tree node not found"): retry briefly.
        if (i >= 10) throw err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function registerCommands(context: vscode.ExtensionContext, commands: Commands): void {
  const handlers = commands.handlers();
  for (const key of Object.keys(COMMANDS) as CommandKey[]) {
    context.subscriptions.push(vscode.commands.registerCommand(COMMANDS[key].id, handlers[key]));
  }
}

/** Why a decided result's text is not JSON, or undefined when it is (or is empty: no result). */
function jsonProblem(text: string): string | undefined {
  if (!text.trim()) return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
