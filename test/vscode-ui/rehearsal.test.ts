// The Test Explorer as a person drives it: run an agent's rehearsal, expand it, debug its failing point down to the reconciliation.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DapLog, ROOT, api, until, workspace } from '../vscode/helpers';
import { ui } from './ui';

const agent = (): string => path.join(workspace(), 'rehearse', 'no-verify.ts');

/**
 * Presses a Test Explorer row's action as a person does (ui.rowAction: hover the row, then click its action) until
 * `done`. A press that lands before the action renders starts nothing, and a view that moved under the mouse fails the
 * hover: either way the Testing view is focused again and the press made again, up to three times.
 */
async function press(rowText: string, action: string, done: () => boolean, what: string): Promise<void> {
  const misses: string[] = [];
  for (let tries = 0; tries < 3 && !done(); tries++) {
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await ui.rowAction('.test-explorer', rowText, action).catch((err: Error) => misses.push(err.message));
    await until(what, done, 20_000).catch(() => undefined);
  }
  if (done()) return;
  const rows = await ui.texts({ selector: '.test-explorer .monaco-list-row' }).catch((err: Error) => err.message);
  assert.fail(`${what}: not after three presses of ${action} on "${rowText}"; misses ${JSON.stringify(misses)}; visible rows ${JSON.stringify(rows)}`);
}

describe('rehearsal in the Test Explorer, driven through its UI', function () {
  this.timeout(300_000);
  let dap: DapLog;

  before(async () => {
    dap = new DapLog();
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    const dir = path.dirname(agent());
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.cpSync(path.join(ROOT, 'examples', 'providers'), path.join(dir, 'providers'), { recursive: true });
    fs.writeFileSync(
      agent(),
      fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'control-no-verify.ts'), 'utf8').replace('../../examples/providers/', './providers/'),
    );
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    await vscode.workspace
      .getConfiguration('launch', folder)
      .update(
        'configurations',
        [{ type: 'logbook', request: 'launch', name: 'no verify', program: '${workspaceFolder}/rehearse/no-verify.ts', input: { recipients: 1 } }],
        vscode.ConfigurationTarget.WorkspaceFolder,
      );
    // The outbox forgets keys: a second send after a wrong "not happened" really goes out twice.
    await vscode.workspace.getConfiguration('logbook', folder).update('env', { OUTBOX_IGNORE_KEYS: '1' }, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('logbook', folder).update('rehearse', { jobs: 2 }, vscode.ConfigurationTarget.WorkspaceFolder);
    // The failure stays in the Test Explorer and the editor: no peek or results panel taking the view from the test.
    await vscode.workspace.getConfiguration('testing', folder).update('automaticallyOpenPeekView', 'never', vscode.ConfigurationTarget.Workspace);
    // The suite before this one may leave a debug session ending (its Debug Agent lens run): its end can move the
    // workbench's views under the mouse, so this test starts with none.
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
    await until('no debug session', () => vscode.debug.activeDebugSession === undefined, 30_000);
  });

  after(async () => {
    dap.dispose();
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  });

  it('Run on the agent, expand, Debug on the failing point: killed there, then the resume stops at its reconciliation', async () => {
    const a = await api();
    const r = a.rehearsals;
    await r.discover();
    const item = await r.itemFor(agent());
    assert.ok(item);
    const doc = await vscode.workspace.openTextDocument(agent());
    const editor = await vscode.window.showTextDocument(doc);
    const doLine = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('run.do(send'));
    editor.revealRange(new vscode.Range(doLine, 0, doLine, 0), vscode.TextEditorRevealType.InCenter);

    // The Testing view, and the agent's row in it: hover shows its Run button, which a click presses.
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    const row = { selector: '.test-explorer .monaco-list-row', hasText: 'no-verify\\.ts' };
    await ui.waitFor(row, /no-verify\.ts/, 'the agent in the Test Explorer', 60_000);
    // The Run button, pressed as a person does (ui.rowAction: hover the row, then click its action). A press that lands
    // before the action renders starts nothing, so it is made again until this agent's rehearsal has begun (its item
    // has an outcome: `active` is no sign of it, since the listing of the agent's points runs there too).
    const begun = (): boolean => r.outcomes.get(item.id) !== undefined;
    await press('no-verify.ts', 'Run Test', begun, 'the rehearsal to begin');
    await until(
      'the rehearsal to end',
      () => ['failed', 'passed', 'errored'].includes(r.outcomes.get(item.id)?.state ?? '') && r.active.size === 0,
      120_000,
    ).catch((err: Error) => {
      const state = { outcome: r.outcomes.get(item.id), active: [...r.active].map((x) => x.file) };
      throw new Error(`${err.message}: ${JSON.stringify(state)}`);
    });
    assert.equal(r.outcomes.get(item.id)?.state, 'failed', JSON.stringify(r.outcomes.get(item.id)));

    // Expand it (its twistie), and find the failing after-execute point among its children. (The failure's peek and
    // the Test Results panel may have taken the focus: back to the Testing view first.)
    await new Promise((res) => setTimeout(res, 1500));
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await ui.waitFor(row, /no-verify\.ts/, 'the agent in the Test Explorer again');
    await ui.click(row);
    await ui.press('ArrowRight');
    const point = { selector: '.test-explorer .monaco-list-row', hasText: 'email\\.send #1 · after execute' };
    await ui.waitFor(point, /email\.send #1 · after execute/, 'the after-execute point under the agent');
    const failed = [...r.outcomes.values()].find((o) => o.id.endsWith('#1#email.send#1@after-execute'));
    assert.equal(failed?.state, 'failed');
    if (process.env.LOGBOOK_UI_REHEARSAL_SHOT) {
      await new Promise((res) => setTimeout(res, 1000));
      await ui.screenshot(process.env.LOGBOOK_UI_REHEARSAL_SHOT);
    }

    // Debug on that point: a session killed at after-execute for real, then the resume of the same run.
    const resumed = new Promise<vscode.DebugSession>((res) => {
      const sub = vscode.debug.onDidStartDebugSession((s) => {
        if (!s.name.startsWith('Logbook: resume rehearse-')) return;
        sub.dispose();
        res(s);
      });
    });
    const crashed = new Promise<vscode.DebugSession>((res) => {
      const sub = vscode.debug.onDidTerminateDebugSession((s) => {
        if (s.name !== 'Logbook: crash at email.send#1@after-execute') return;
        sub.dispose();
        res(s);
      });
    });
    let crashStarted = false;
    const sub = vscode.debug.onDidStartDebugSession((s) => (crashStarted ||= s.name === 'Logbook: crash at email.send#1@after-execute'));
    await press('email.send #1 · after execute', 'Debug Test', () => crashStarted, 'the crash session to start').finally(() => sub.dispose());
    const killed = await crashed;
    const runId = String(killed.configuration.runId);
    const session = await resumed;
    assert.equal(session.configuration.resume, runId);
    const stop = await until('the reconciliation stop', () => dap.stops(session)[0], 60_000);
    assert.match(JSON.stringify([stop.body.description, stop.body.text, stop.body.reason]), /doubt|reconcil/i);
    const trace = (await session.customRequest('stackTrace', { threadId: stop.body.threadId })) as {
      stackFrames: Array<{ line: number; source?: { path?: string } }>;
    };
    const top = trace.stackFrames[0];
    assert.ok(top?.source?.path?.endsWith(agent()), top?.source?.path);
    assert.equal(top?.line, doLine + 1, 'stopped at the run.do of the action in doubt');
    const console = dap.messages
      .filter((x) => x.session.id === killed.id && x.m.event === 'output')
      .map((x) => String(x.m.body?.output))
      .join('');
    assert.match(console, /SIGKILL/);
    await vscode.debug.stopDebugging(session);
  });
});
