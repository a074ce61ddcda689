// The status bar item: the run a debug session drives, else the newest run still going, else one that needs you.

import * as vscode from 'vscode';
import type { RunDto } from '../reader/readerProtocol';
import { COMMANDS } from './ids';
import type { ReaderSource } from './tree/treeModel';
import type { Sessions } from './sessions';
import { RUN_LOOK, pausedLook } from './tree/render';

export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('logbook.activeRun', vscode.StatusBarAlignment.Left, 50);
  private timer: NodeJS.Timeout | undefined;
  /** The run shown, if any (tests read it). */
  current: RunDto | undefined;

  constructor(
    private readonly reader: ReaderSource,
    private readonly sessions: Sessions,
  ) {
    this.item.name = 'Agent Logbook: active run';
    this.schedule(0);
  }

  schedule(delay = 200): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update().catch(() => this.item.hide());
    }, delay);
  }

  private async pick(): Promise<RunDto | undefined> {
    const sessionRun = await this.sessions.activeRunId();
    if (sessionRun) {
      const r = await this.reader.request('run', { runId: sessionRun });
      if (r) return r;
    }
    const page = await this.reader.request('runs', { offset: 0, limit: 20 });
    return page.runs.find((r) => r.leaseLive) ?? page.runs.find((r) => r.status !== 'completed' && r.status !== 'compensated' && r.status !== 'failed');
  }

  async update(): Promise<void> {
    const run = await this.pick();
    this.current = run;
    if (!run) {
      this.item.hide();
      return;
    }
    const paused = this.sessions.pausedRun(run.id);
    const look = paused ? pausedLook(paused) : RUN_LOOK[run.status];
    this.item.text = `$(${look.icon}) ${run.agent}: ${look.word}${run.leaseLive && !paused ? ` · ${run.stepCount} steps` : ''}${run.inDoubt ? ` · ${run.inDoubt} in doubt` : ''}`;
    this.item.tooltip = `Agent Logbook — run ${run.id} (${look.word}, attempt ${run.attempt}). Click for its timeline.`;
    this.item.color =
      run.status === 'interrupted' || run.status === 'needs-decision' || run.status === 'awaiting-approval'
        ? new vscode.ThemeColor('statusBarItem.warningForeground')
        : undefined;
    this.item.backgroundColor =
      run.status === 'interrupted' || run.status === 'needs-decision' || run.status === 'awaiting-approval'
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
    this.item.command = { command: COMMANDS.openTimeline.id, title: COMMANDS.openTimeline.title, arguments: [run.id] };
    this.item.show();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.item.dispose();
  }
}
