// Editor decorations on run.step / run.do lines: what the latest run of this script did there.

import * as vscode from 'vscode';
import type { ActionDisplay, ScriptStatus, StepDisplay } from '../reader/readerProtocol';
import type { Log } from './log';
import type { ReaderSource } from './tree/treeModel';
import { SCRIPT_LANGUAGES } from './debug';
import { indexSource, type SourceIndex } from './sourceIndex';
import { ACTION_LOOK, STEP_LOOK } from './tree/render';

type Tone = 'ok' | 'warn' | 'error';

/** The mark and tone of each step and action status; the words are the runs tree's own (one vocabulary). */
const MARKS: Record<StepDisplay | ActionDisplay, { mark: string; tone: Tone }> = {
  completed: { mark: '✓', tone: 'ok' },
  replayed: { mark: '↺', tone: 'ok' },
  'in-progress': { mark: '…', tone: 'ok' },
  interrupted: { mark: '⚠', tone: 'warn' },
  failed: { mark: '✗', tone: 'error' },
  committed: { mark: '✓', tone: 'ok' },
  'in-flight': { mark: '…', tone: 'ok' },
  'in-doubt': { mark: '⚠', tone: 'warn' },
  'in-doubt-after-error': { mark: '⚠', tone: 'warn' },
  'awaiting-approval': { mark: '⏸', tone: 'warn' },
  rejected: { mark: '✗', tone: 'error' },
  compensated: { mark: '↶', tone: 'ok' },
  compensating: { mark: '…', tone: 'warn' },
  irreversible: { mark: '⚠', tone: 'error' },
  'compensation-failed': { mark: '✗', tone: 'error' },
};
const LOOKS: Record<string, { word: string } | undefined> = { ...ACTION_LOOK, ...STEP_LOOK };
const WORDS: Record<string, { word: string; mark: string; tone: Tone } | undefined> = Object.fromEntries(
  Object.entries(MARKS).map(([status, m]) => [status, { word: LOOKS[status]?.word ?? status, ...m }]),
);
const TONE_RANK: Record<Tone, number> = { ok: 0, warn: 1, error: 2 };

/** "✓ 50 committed · ⚠ 1 in doubt", worst tone first decides the colour. */
export function summarize(counts: Record<string, number>): { text: string; tone: Tone } | undefined {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([status, n]): { n: number; word: string; mark: string; tone: Tone } => ({ n, ...(WORDS[status] ?? { word: status, mark: '·', tone: 'ok' }) }))
    .sort((a, b) => TONE_RANK[b.tone] - TONE_RANK[a.tone] || b.n - a.n);
  if (parts.length === 0) return undefined;
  const tone = parts[0]?.tone ?? 'ok';
  return { text: parts.map((p) => `${p.mark} ${p.n} ${p.word}`).join(' · '), tone };
}

export class Decorations implements vscode.Disposable {
  private readonly types: Record<Tone, vscode.TextEditorDecorationType>;
  private readonly subs: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** What each visible script shows now, by file (tests read it). */
  readonly shown = new Map<string, Array<{ line: number; text: string; tone: Tone }>>();

  constructor(
    private readonly reader: ReaderSource,
    private readonly log: Log,
  ) {
    const make = (color: string): vscode.TextEditorDecorationType =>
      vscode.window.createTextEditorDecorationType({
        after: { color: new vscode.ThemeColor(color), margin: '0 0 0 2em', fontStyle: 'italic' },
        isWholeLine: false,
      });
    this.types = { ok: make('editorCodeLens.foreground'), warn: make('editorWarning.foreground'), error: make('editorError.foreground') };
    this.subs.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule(50)),
      vscode.workspace.onDidSaveTextDocument(() => this.schedule(50)),
    );
    this.schedule(0);
  }

  /** Called when the journal changed. */
  schedule(delay = 300): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update().catch((err: unknown) => this.log.warn(`decorations: ${String(err)}`));
    }, delay);
  }

  async update(): Promise<void> {
    for (const editor of vscode.window.visibleTextEditors) {
      const doc = editor.document;
      if (doc.uri.scheme !== 'file' || !SCRIPT_LANGUAGES.has(doc.languageId)) continue;
      const text = doc.getText();
      if (!/\.(step|do)\s*\(/.test(text)) continue;
      const index = indexSource(text);
      const status = await this.reader.request('scriptStatus', {
        script: doc.uri.fsPath,
        stepPatterns: index.steps.map((s, i) => ({ id: String(i), regex: s.regex })),
        actionTypes: [...new Set(index.actions.map((a) => a.type))],
      });
      this.apply(editor, index, status);
    }
  }

  private apply(editor: vscode.TextEditor, index: SourceIndex, status: ScriptStatus): void {
    // One line can hold both run.step and run.do: their summaries share one decoration, coloured by the worst.
    const perLine = new Map<number, Array<{ text: string; tone: Tone }>>();
    const add = (line: number, counts: Record<string, number> | undefined): void => {
      const s = counts && summarize(counts);
      if (s) perLine.set(line, [...(perLine.get(line) ?? []), s]);
    };
    if (status.run) {
      index.steps.forEach((s, i) => add(s.line, status.steps[String(i)]));
      const seen = new Set<string>();
      for (const a of index.actions) {
        if (seen.has(`${a.line}:${a.type}`)) continue;
        seen.add(`${a.line}:${a.type}`);
        add(a.line, status.actions[a.type]);
      }
    }
    const byTone: Record<Tone, vscode.DecorationOptions[]> = { ok: [], warn: [], error: [] };
    const shown: Array<{ line: number; text: string; tone: Tone }> = [];
    for (const [line, parts] of [...perLine].sort((x, y) => x[0] - y[0])) {
      const tone = parts.reduce<Tone>((t, p) => (TONE_RANK[p.tone] > TONE_RANK[t] ? p.tone : t), 'ok');
      const text = parts.map((p) => p.text).join('  ·  ');
      const end = editor.document.lineAt(line).range.end;
      byTone[tone].push({
        range: new vscode.Range(end, end),
        renderOptions: { after: { contentText: text } },
        hoverMessage: `Latest run ${status.run?.id ?? ''}: ${text}`,
      });
      shown.push({ line, text, tone });
    }
    for (const tone of ['ok', 'warn', 'error'] as const) editor.setDecorations(this.types[tone], byTone[tone]);
    this.shown.set(editor.document.uri.fsPath, shown);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subs) s.dispose();
    for (const t of Object.values(this.types)) t.dispose();
  }
}
