// Knows which editors hold agent scripts: sets the context key the Run/Debug buttons use, and puts CodeLenses on defineAgent.

import * as vscode from 'vscode';
import { SCRIPT_LANGUAGES } from './debug';
import { COMMANDS, CONTEXT } from './ids';
import { agentLines } from './sourceIndex';

/** Scanning a bigger file on each keystroke would cost more than the hint is worth. */
const MAX_SCAN = 2_000_000;
const RESCAN_MS = 300;

export function isScript(doc: vscode.TextDocument): boolean {
  return SCRIPT_LANGUAGES.has(doc.languageId) && doc.uri.scheme === 'file' && doc.getText().length <= MAX_SCAN;
}

export function agentLinesOf(doc: vscode.TextDocument): number[] {
  return isScript(doc) ? agentLines(doc.getText()) : [];
}

export class AgentFiles implements vscode.Disposable, vscode.CodeLensProvider {
  private readonly subs: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly lensChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensChanged.event;
  /** The value last given to the context key (tests read it). */
  activeIsAgent = false;

  constructor() {
    this.subs.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document !== vscode.window.activeTextEditor?.document) return;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.update();
          this.lensChanged.fire();
        }, RESCAN_MS);
      }),
      vscode.languages.registerCodeLensProvider(
        [
          { language: 'typescript', scheme: 'file' },
          { language: 'javascript', scheme: 'file' },
        ],
        this,
      ),
      this.lensChanged,
    );
    this.update();
  }

  /** Sets `logbook.agentEditor` for the active editor. */
  update(): void {
    const doc = vscode.window.activeTextEditor?.document;
    const next = doc !== undefined && agentLinesOf(doc).length > 0;
    if (next === this.activeIsAgent) return;
    this.activeIsAgent = next;
    void vscode.commands.executeCommand('setContext', CONTEXT.agentEditor, next);
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    return agentLinesOf(doc).flatMap((line) => {
      const range = new vscode.Range(line, 0, line, 0);
      return [
        new vscode.CodeLens(range, {
          title: `$(run) ${COMMANDS.runAgent.title}`,
          command: COMMANDS.runAgent.id,
          arguments: [doc.uri],
          tooltip: 'Run this agent with the logbook CLI in a terminal',
        }),
        new vscode.CodeLens(range, {
          title: `$(debug-alt) ${COMMANDS.debugAgent.title}`,
          command: COMMANDS.debugAgent.id,
          arguments: [doc.uri],
          tooltip: 'Start a new run of this agent under the Logbook debugger',
        }),
        new vscode.CodeLens(range, {
          title: '$(beaker) Rehearse',
          command: COMMANDS.rehearseAgent.id,
          arguments: [doc.uri],
          tooltip: 'Kill a run of this agent at each of its fault points, resume each, and check the invariants (Test Explorer)',
        }),
      ];
    });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subs) s.dispose();
  }
}
