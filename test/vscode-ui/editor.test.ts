// The editor as a person drives it (real keys, clicks, menus): F9 + F5 on an agent, the paused state, the toolbar's
// Kill, Resume from the tree's context menu, and the editor's Run button and CodeLens.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { DapLog, agentFile, api, release, started, terminated, until } from '../vscode/helpers';
import { QUIET_MS } from '../../src/reader/timeScale';
import { ui } from './ui';

async function runStatus(runId: string): Promise<string | undefined> {
  return (await (await api()).source.request('run', { runId }))?.status;
}

/** Opens the fixture agent with the cursor on the line containing `line`, scrolled into view, as the UI shows it. */
async function openAgent(line: string): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(agentFile());
  const editor = await vscode.window.showTextDocument(doc, { preserveFocus: false });
  const n = doc
    .getText()
    .split('\n')
    .findIndex((l) => l.includes(line));
  editor.selection = new vscode.Selection(n, 4, n, 4);
  editor.revealRange(new vscode.Range(n, 0, n, 0), vscode.TextEditorRevealType.InCenter);
  // The keyboard acts where the workbench has the cursor: wait until its status bar shows the line.
  await ui.waitFor({ selector: '.statusbar-item' }, new RegExp(`Ln ${n + 1}, Col 5`), `the cursor on line ${n + 1}`);
  const a = await api();
  await until('the agent editor context key', () => a.agentFiles.activeIsAgent);
  return editor;
}

describe('the editor, driven through its UI', function () {
  this.timeout(300_000);
  let dap: DapLog;
  let killedRun = '';
  before(async () => {
    dap = new DapLog();
    release();
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
  });
  after(() => dap.dispose());
  afterEach(async () => {
    // A failed test must not leave a paused session (holding its run) or a breakpoint for the next one.
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  });

  it('F9 then F5 on an agent script: Logbook starts with no picker and stops; tree and status bar say where it is paused', async () => {
    const a = await api();
    await openAgent('run.step(`notify user');
    await ui.press('F9');
    const bp = await until('the breakpoint', () => vscode.debug.breakpoints[0]);
    assert.ok(
      bp instanceof vscode.SourceBreakpoint &&
        /run\.step\(`notify user/.test((await vscode.workspace.openTextDocument(agentFile())).lineAt(bp.location.range.start.line).text),
    );
    const begun = started('Logbook: agent.ts');
    await ui.press('F5');
    const session = await begun;
    assert.equal((await ui.texts({ selector: '.quick-input-widget .quick-input-title, .quick-input-widget input' })).length, 0, 'F5 opened a picker');
    await until('the breakpoint stop', () => dap.stops(session)[0]);
    const runId = await until('the run id', () => a.sessions.runOf(session));
    killedRun = runId;
    // First the stop's own words, then (once VS Code has fetched the stack) the top frame and its line.
    const paused = await until('the paused overlay with the frame', () =>
      /agent\.ts:\d+/.test(a.model.pausedOf(runId)?.where ?? '') ? a.model.pausedOf(runId) : undefined,
    );
    assert.match(paused.where, /^step 1 "notify user 0" \(agent\.ts:\d+\)$/);
    await ui.waitFor({ selector: '.statusbar-item' }, /paused at step 1 "notify user 0"/, 'the status bar to say paused');
    await vscode.commands.executeCommand('logbook.runs.focus');
    await ui.waitFor({ selector: '.monaco-list-row' }, new RegExp(`paused at step 1 "notify user 0".*${runId}`), 'the tree to say paused');

    // A person looks for a while at this stop: longer than the timeline's quiet threshold, so test 2 finds it as a gap.
    await new Promise((r) => setTimeout(r, QUIET_MS + 500));

    // Continue with the key: the overlay clears, and the next stop sets it again at the next step.
    await ui.click({ selector: '.part.editor .monaco-editor .view-lines' });
    await ui.press('F5');
    await until('the second stop', () => dap.stops(session)[1]);
    await until('paused at step 2', () => /notify user 1/.test(a.model.pausedOf(runId)?.where ?? ''));

    // Both of the extension's buttons are on the debug toolbar (under the menu id VS Code knows: debug/toolBar).
    // The toolbar is re-rendered for each stop; on a loaded machine it can be read between its clear and its redraw.
    let toolbar: string[] = [];
    const both = (): boolean => toolbar.some((l) => l.startsWith('Kill Run (simulate crash)')) && toolbar.some((l) => l.startsWith('Compensate Run'));
    await until('both buttons on the debug toolbar', async () => {
      toolbar = (await ui.texts({ selector: '.debug-toolbar .action-label' })).map((b) => b.label);
      return both();
    }).catch(() => undefined);
    assert.ok(both(), JSON.stringify(toolbar));

    // The Kill button on the debug toolbar: a real SIGKILL of the runner; the pause is gone with the session.
    const ended = terminated('Logbook: agent.ts');
    await ui.click({ selector: '.debug-toolbar .action-label[aria-label^="Kill Run"]' });
    await ended;
    await until('interrupted', async () => (await runStatus(runId)) === 'interrupted');
    assert.equal(a.model.pausedOf(runId), undefined);
    const console = dap.messages
      .filter((x) => x.session.id === session.id && x.m.event === 'output')
      .map((x) => String(x.m.body?.output))
      .join('');
    assert.match(console, /got SIGKILL, a real crash/);
    assert.match(console, /"Agent Logbook: Resume Run" in the Command Palette/);
    await until('the status bar no longer paused', async () => !(await ui.texts({ selector: '.statusbar-item' })).some((x) => /paused at/.test(x.text)));
  });

  it("Resume Run from the run's context menu in the Runs view finishes the killed run", async () => {
    assert.ok(killedRun, 'the first test killed no run');
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    const a = await api();
    await a.commands.reveal(killedRun);
    const begun = started(`Logbook: resume ${killedRun}`);
    // The row's menu follows its contextValue: wait for the row to say interrupted, then open the menu. A refresh of
    // the tree can close an open menu (a loaded machine reached that once), so a menu without the item is reopened.
    await ui.waitFor({ selector: '.monaco-list-row' }, new RegExp(`interrupted.*${killedRun}|${killedRun}.*interrupted`), 'the row to say interrupted');
    await until(
      "Resume Run in the row's context menu",
      async () => {
        await ui.press('Escape');
        await ui.click({ selector: '.monaco-list-row', hasText: killedRun }, 'right');
        const shown = await until('the context menu', async () => ((await ui.texts({ role: 'menuitem' })).length > 0 ? true : undefined), 5_000).catch(
          () => false,
        );
        return shown && (await ui.texts({ role: 'menuitem', name: '^Resume Run$' })).length > 0;
      },
      60_000,
    );
    await ui.click({ role: 'menuitem', name: '^Resume Run$' });
    const session = await begun;
    const ended = terminated(session.name);
    await ended;
    await until('completed', async () => (await runStatus(killedRun)) === 'completed');
    const run = await a.source.request('run', { runId: killedRun });
    assert.equal(run?.attempt, 2);

    // The first attempt sat at its first breakpoint for longer than QUIET_MS (test 1): its timeline compresses that.
    await vscode.commands.executeCommand('logbook.openTimeline', killedRun);
    const t = await until('timeline data', () => a.timelines.data(killedRun));
    const first = t.attempts[0]!;
    assert.ok(
      first.scale.segments.some((s) => s.gap && s.paused === true && s.end - s.start >= 2000),
      JSON.stringify(first.scale),
    );
    assert.ok(first.scale.ticks.length >= 2);
    if (process.env.LOGBOOK_UI_SHOTS) {
      await vscode.commands.executeCommand('workbench.action.closePanel');
      await new Promise((r) => setTimeout(r, 4000)); // the webview paints after its data arrives
      await ui.screenshot(process.env.LOGBOOK_UI_SHOTS);
    }
    const steps = t.items.filter((i) => i.attempt === 1 && i.kind === 'step');
    assert.ok(steps.every((s) => s.x0 !== undefined && s.x1 !== undefined && s.x0 >= 0 && s.x1 <= 100));
  });

  it('the Run button in the editor title runs the agent by the CLI; the Debug Agent CodeLens runs it under the debugger', async () => {
    const a = await api();
    const before = (await a.source.request('runs', { offset: 0, limit: 100 })).total;
    await openAgent('defineAgent(');
    await ui.click({ selector: '.editor-actions .action-label[aria-label^="Run Agent"]' });
    const viaCli = await until(
      'a new completed run',
      async () => {
        const page = await a.source.request('runs', { offset: 0, limit: 100 });
        return page.total > before && page.runs[0]?.status === 'completed' ? page.runs[0] : undefined;
      },
      60_000,
    );
    assert.equal(viaCli.agent, 'desk-agent');
    assert.ok(vscode.window.terminals.some((t) => t.name === 'Logbook: agent.ts'));

    await openAgent('defineAgent(');
    const begun = started('Logbook: agent.ts');
    await ui.click({ selector: '.codelens-decoration a', hasText: 'Debug Agent' });
    const session = await begun;
    assert.equal(session.type, 'logbook');
    // The session may end before its run id can be asked for: find its run as the newest one.
    await until(
      'the lens run completed',
      async () => {
        const page = await a.source.request('runs', { offset: 0, limit: 100 });
        return page.total > before + 1 && page.runs[0]?.id !== viaCli.id && page.runs[0]?.status === 'completed';
      },
      60_000,
    );
  });
});
