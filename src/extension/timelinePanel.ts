// The run timeline webview: strict CSP with a nonce, assets from media/, live while the run writes.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Timeline } from '../reader/readerProtocol';
import type { Log } from './log';
import type { ReaderSource } from './tree/treeModel';

/** One bar as the webview drew it: its label whole, and what a click at its centre hits (tests ask for these). */
export interface DrawnBar {
  /** `<attempt>:<step|action>:<id>` */
  readonly key: string;
  readonly text: string;
  readonly width: number;
  readonly labelFits: boolean;
  readonly onTop: boolean;
  readonly overlaps: readonly string[];
}

export interface Drawing {
  readonly bars: readonly DrawnBar[];
  readonly collapsed: boolean;
  readonly zoom: number;
}

type Answer = { type: 'probed'; id: number; drawing: Drawing } | { type: 'clicked'; id: number; onBar: boolean };

function drawnBar(v: unknown): DrawnBar | undefined {
  const b = v as Partial<Record<keyof DrawnBar, unknown>> | undefined;
  if (
    typeof b?.key !== 'string' ||
    typeof b.text !== 'string' ||
    typeof b.width !== 'number' ||
    typeof b.labelFits !== 'boolean' ||
    typeof b.onTop !== 'boolean' ||
    !Array.isArray(b.overlaps)
  )
    return undefined;
  return {
    key: b.key,
    text: b.text,
    width: b.width,
    labelFits: b.labelFits,
    onTop: b.onTop,
    overlaps: b.overlaps.filter((o): o is string => typeof o === 'string'),
  };
}

const MessageFromView = {
  parse(v: unknown): { type: 'reveal'; runId: string; stepIdx: number; actionId?: string } | { type: 'ready' } | Answer | undefined {
    const m = v as {
      type?: unknown;
      runId?: unknown;
      stepIdx?: unknown;
      actionId?: unknown;
      id?: unknown;
      bars?: unknown;
      collapsed?: unknown;
      zoom?: unknown;
      onBar?: unknown;
    };
    if (m?.type === 'ready') return { type: 'ready' };
    if (m?.type === 'probed' && typeof m.id === 'number' && Array.isArray(m.bars)) {
      const bars = m.bars.map(drawnBar);
      if (bars.some((b) => b === undefined)) return undefined;
      return {
        type: 'probed',
        id: m.id,
        drawing: { bars: bars as DrawnBar[], collapsed: m.collapsed === true, zoom: typeof m.zoom === 'number' ? m.zoom : 1 },
      };
    }
    if (m?.type === 'clicked' && typeof m.id === 'number') return { type: 'clicked', id: m.id, onBar: m.onBar === true };
    if (m?.type === 'reveal' && typeof m.runId === 'string' && typeof m.stepIdx === 'number') {
      return { type: 'reveal', runId: m.runId, stepIdx: m.stepIdx, ...(typeof m.actionId === 'string' ? { actionId: m.actionId } : {}) };
    }
    return undefined;
  },
};

export class TimelinePanels implements vscode.Disposable {
  private readonly panels = new Map<string, { panel: vscode.WebviewPanel; data?: Timeline }>();
  private readonly asked = new Map<number, (a: Answer) => void>();
  private nextAsk = 1;

  constructor(
    private readonly media: vscode.Uri,
    private readonly reader: ReaderSource,
    private readonly log: Log,
    private readonly reveal: (runId: string, stepIdx: number, actionId?: string) => Promise<unknown>,
    /** When debug sessions in this window held the run paused (the journal does not know). */
    private readonly pausesOf: (runId: string) => ReadonlyArray<{ start: number; end: number | undefined }> = () => [],
  ) {}

  async show(runId: string): Promise<vscode.WebviewPanel> {
    const open = this.panels.get(runId);
    if (open) {
      open.panel.reveal();
      await this.refresh(runId);
      return open.panel;
    }
    const panel = vscode.window.createWebviewPanel('logbook.timeline', `Timeline ${runId}`, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [this.media],
      retainContextWhenHidden: false,
    });
    panel.iconPath = vscode.Uri.joinPath(this.media, 'logbook.svg');
    this.panels.set(runId, { panel });
    panel.onDidDispose(() => this.panels.delete(runId));
    panel.webview.onDidReceiveMessage((raw) => {
      const msg = MessageFromView.parse(raw);
      if (msg?.type === 'ready') void this.refresh(runId);
      if (msg?.type === 'probed' || msg?.type === 'clicked') this.asked.get(msg.id)?.(msg);
      if (msg?.type === 'reveal')
        void this.reveal(msg.runId, msg.stepIdx, msg.actionId).catch((err: unknown) => this.log.warn(`reveal from timeline: ${String(err)}`));
    });
    panel.webview.html = this.html(panel.webview);
    await this.refresh(runId);
    return panel;
  }

  /** The data each open panel shows (tests read it). */
  data(runId: string): Timeline | undefined {
    return this.panels.get(runId)?.data;
  }

  /** What the open timeline of `runId` drew: each bar's label and whether a click reaches it (undefined when the
   *  webview did not answer within `ms`, e.g. while it loads). */
  async drawing(runId: string, ms = 3000): Promise<Drawing | undefined> {
    const a = await this.ask(runId, { type: 'probe' }, ms);
    return a?.type === 'probed' ? a.drawing : undefined;
  }

  /** Clicks the centre of a bar, on whatever the webview drew there: true when that was the bar itself. */
  async click(runId: string, key: string, ms = 3000): Promise<boolean | undefined> {
    const a = await this.ask(runId, { type: 'click', key }, ms);
    return a?.type === 'clicked' ? a.onBar : undefined;
  }

  private async ask(runId: string, msg: Record<string, unknown>, ms: number): Promise<Answer | undefined> {
    const p = this.panels.get(runId);
    if (!p) return undefined;
    const id = this.nextAsk++;
    return new Promise<Answer | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.asked.delete(id);
        resolve(undefined);
      }, ms);
      this.asked.set(id, (a) => {
        clearTimeout(timer);
        this.asked.delete(id);
        resolve(a);
      });
      void p.panel.webview.postMessage({ ...msg, id });
    });
  }

  async refresh(runId: string): Promise<void> {
    const p = this.panels.get(runId);
    if (!p) return;
    const data = await this.reader.request('timeline', { runId });
    if (!data) return;
    // A quiet gap the debugger held for most of its length is a pause, not a slow effect: say so.
    const pauses = this.pausesOf(runId);
    for (const a of data.attempts) {
      for (const s of a.scale.segments) {
        if (!s.gap) continue;
        const held = pauses.reduce((sum, q) => sum + Math.max(0, Math.min(s.end, q.end ?? Date.now()) - Math.max(s.start, q.start)), 0);
        if (held >= (s.end - s.start) / 2) s.paused = true;
      }
    }
    p.data = data;
    p.panel.title = `Timeline: ${data.run.agent} ${runId}`;
    await p.panel.webview.postMessage({ type: 'timeline', data });
  }

  /** Called on journal changes: refreshes the open timelines of the runs that changed. */
  changed(runIds: readonly string[] | 'all'): void {
    for (const id of this.panels.keys()) {
      if (runIds === 'all' || runIds.includes(id)) void this.refresh(id).catch((err: unknown) => this.log.warn(`timeline: ${String(err)}`));
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.media, 'timeline.css'));
    const js = webview.asWebviewUri(vscode.Uri.joinPath(this.media, 'timeline.js'));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}'; img-src ${webview.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css.toString()}">
<title>Run timeline</title>
</head>
<body>
<header id="head"><h1 id="title">Loading…</h1><div id="legend"></div><div id="tools" role="toolbar" aria-label="Timeline view"></div></header>
<main id="chart" aria-label="Run timeline"></main>
<footer id="foot"></footer>
<script nonce="${nonce}" src="${js.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
    this.panels.clear();
  }
}
