// Workspace trust switched on, as users have it: an untrusted folder can be browsed but runs nothing; granting trust
// through the UI turns running on without a reload.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { DapLog, agentFile, api, cli, cliAsync, release, shown, started, unrelease, until } from '../vscode/helpers';
import { ui } from '../vscode-ui/ui';

/** A run killed (SIGKILL) while item `holdAt`'s effect is in flight: interrupted, one action in doubt. */
async function crashedRun(runId: string): Promise<void> {
  const a = await api();
  unrelease();
  const child = cliAsync(['run', agentFile(), '--run-id', runId, '--input', JSON.stringify({ items: 3, holdAt: 1 })]);
  await until(
    `${runId} in flight`,
    async () => (await a.source.request('actions', { runId, stepIdx: 1, afterSeq: 0, limit: 1 })).actions[0]?.status === 'in-flight',
  );
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

const status = async (runId: string): Promise<string | undefined> => (await (await api()).source.request('run', { runId }))?.status;

describe('workspace trust, switched on', function () {
  this.timeout(300_000);
  before(async () => {
    // The startup prompt, if VS Code shows one: answer it as a careful person would, not trusting yet.
    const buttons = await until('the workbench', async () => {
      const b = await ui.texts({ selector: '.monaco-dialog-box .monaco-button, .statusbar-item' });
      return b.length ? b : undefined;
    });
    if (buttons.some((b) => /don.t trust/i.test(b.text))) await ui.click({ selector: '.monaco-dialog-box .monaco-button', hasText: 'don.t trust' });
  });

  it('untrusted: the journal can be browsed, but no run, resume or button to run one', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const a = await api();
    release();
    assert.equal(cli(['run', agentFile(), '--run-id', 'trust-done', '--input', '{"items":1}']).status, 0);
    await crashedRun('trust-crash');
    await until('both runs in the tree', async () => {
      const ids = (await shown(a)).map((s) => (s.node.kind === 'run' ? s.node.run.id : ''));
      return ids.includes('trust-done') && ids.includes('trust-crash');
    });
    assert.equal(await vscode.commands.executeCommand('logbook.resumeRun', 'trust-crash'), undefined);
    // (VS Code itself asks for trust before any debug session in Restricted Mode; the provider refuses as well.)
    assert.equal(
      a.debugConfig.resolveDebugConfiguration(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name: 'refused',
        program: agentFile(),
      }),
      undefined,
    );
    assert.equal(await vscode.commands.executeCommand('logbook.debugAgent', vscode.Uri.file(agentFile())), undefined);
    assert.equal(await status('trust-crash'), 'interrupted');
    // No rehearsal either: the CodeLens's command refuses, and a Test Explorer run errors without starting anything.
    assert.equal(await vscode.commands.executeCommand('logbook.rehearseAgent', vscode.Uri.file(agentFile())), undefined);
    const agentItem = await a.rehearsals.itemFor(agentFile());
    assert.ok(agentItem);
    await a.rehearsals.allProfile.runHandler(new vscode.TestRunRequest([agentItem]), new vscode.CancellationTokenSource().token);
    assert.equal(a.rehearsals.outcomes.get(agentItem.id)?.state, 'errored');
    assert.match(a.rehearsals.outcomes.get(agentItem.id)?.messages[0]?.text ?? '', /rehearses nothing in an untrusted workspace/);
    assert.equal(agentItem.children.size, 0, 'no uncrashed run listed its points');

    // What a person sees: the run's context menu offers the timeline but no Resume; the editor has no Run button.
    await a.commands.reveal('trust-crash');
    await ui.click({ selector: '.monaco-list-row', hasText: 'trust-crash' }, 'right');
    const items = await ui.waitFor({ role: 'menuitem' }, /Open Run Timeline/, 'the context menu');
    assert.ok(items);
    assert.ok(!(await ui.texts({ role: 'menuitem' })).some((m) => /Resume Run|Compensate Run|Delete Run/.test(m.label + m.text)));
    await ui.press('Escape');
    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    await until('the agent editor context key', () => a.agentFiles.activeIsAgent);
    await ui.waitFor({ selector: '.editor-actions .action-label' }, /.*/, 'the editor title actions');
    assert.deepEqual(
      await ui.texts({ selector: '.editor-actions .action-label[aria-label^="Run Agent"], .editor-actions .action-label[aria-label^="Debug Agent"]' }),
      [],
    );
  });

  it('granting trust in the Workspace Trust editor lets the same window resume the run and shows the Run button', async () => {
    const granted = new Promise<void>((r) => vscode.workspace.onDidGrantWorkspaceTrust(() => r()));
    await ui.palette('Workspaces: Manage Workspace Trust');
    await ui.click({ role: 'button', name: '^Trust( Folder)?$' });
    await granted;
    assert.equal(vscode.workspace.isTrusted, true);

    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    await ui.waitFor({ selector: '.editor-actions .action-label' }, /^Run Agent/, 'the Run button');

    const dap = new DapLog();
    try {
      release();
      const begun = started('Logbook: resume trust-crash');
      assert.equal(await vscode.commands.executeCommand('logbook.resumeRun', 'trust-crash'), true);
      const session = await begun;
      const stop = await until('the reconciliation stop', () => dap.stops(session)[0]);
      await session.customRequest('continue', { threadId: stop.body.threadId });
      await until('trust-crash completed', async () => (await status('trust-crash')) === 'completed');
    } finally {
      dap.dispose();
    }
  });
});
