// The runs tree for real journals: labels, contextValue, collapsible state, paging, and live updates while a run writes.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ActionNode, RunNode, StepNode } from '../../src/extension/tree/nodes';
import { agentFile, api, cli, cliAsync, release, runItem, shown, text, unrelease, until } from './helpers';

describe('runs tree', () => {
  before(() => {
    const r = cli(['run', agentFile(), '--run-id', 'tree-done', '--input', '{"items":2}']);
    assert.equal(r.status, 0, r.stderr);
  });

  it('shows a completed run → steps → actions → details with their labels, menus and collapsible state', async () => {
    const a = await api();
    const run = await until('the run in the tree', () => runItem(a, 'tree-done'));
    assert.equal(text(run.item.label), 'desk-agent');
    assert.match(String(run.item.description), /^completed · 1 attempt · .* · tree-done$/);
    assert.equal(run.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    assert.equal(run.item.contextValue, 'logbook.run checkpoint deletable compensable');
    assert.equal((run.item.iconPath as vscode.ThemeIcon).id, 'pass-filled');
    assert.ok(run.item.tooltip instanceof vscode.MarkdownString);

    const steps = await shown(a, run.node);
    assert.deepEqual(
      steps.map((s) => text(s.item.label)),
      ['1. notify user 0', '2. notify user 1'],
    );
    assert.deepEqual(
      steps.map((s) => s.item.description),
      ['completed · 1 action', 'completed · 1 action'],
    );
    assert.equal(steps[0]!.item.contextValue, 'logbook.step hasSource checkpoint');
    assert.equal(steps[0]!.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);

    const [action] = await shown(a, steps[0]!.node);
    assert.equal(text(action!.item.label), 'notice.send');
    assert.equal(action!.item.description, 'committed · ⚠ non-idempotent · 1×');
    assert.equal(action!.item.contextValue, 'logbook.action hasKey hasSource');
    assert.equal(action!.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);

    const details = await shown(a, action!.node);
    const key = details.find((d) => text(d.item.label) === 'idempotency key');
    assert.equal(key?.item.description, 'notice:tree-done:user0');
    assert.equal(key?.item.contextValue, 'logbook.detail hasKey');
    assert.equal(key?.item.collapsibleState, vscode.TreeItemCollapsibleState.None);

    // The view accepts the cached nodes for reveal: the same objects getChildren returned.
    await a.commands.reveal('tree-done', 0, 'notice:tree-done:user0');
    // The view reports its selection when the workbench has applied it, which a loaded machine may do a moment later.
    await until('the revealed action selected', () => a.view.selection[0] === action!.node);
  });

  it('updates while a run writes: running with an action in flight, then completed', async () => {
    const a = await api();
    unrelease();
    const child = cliAsync(['run', agentFile(), '--run-id', 'tree-live', '--input', '{"items":3,"holdAt":1}']);
    try {
      const run = await until('the live run with step 2 in progress', async () => {
        const r = await runItem(a, 'tree-live');
        return r && r.node.kind === 'run' && r.node.run.stepCount === 2 && /running/.test(String(r.item.description)) ? r : undefined;
      });
      assert.match(run.item.contextValue ?? '', /\blive\b/);
      assert.doesNotMatch(run.item.contextValue ?? '', /\bdeletable\b/);
      const steps = await shown(a, run.node);
      assert.deepEqual(
        steps.map((s) => (s.node as StepNode).step.status),
        ['completed', 'in-progress'],
      );
      const [act] = await shown(a, steps[1]!.node);
      assert.equal((act!.node as ActionNode).action.status, 'in-flight');
      release();
      await until('the run to complete in the tree', async () => /^completed/.test(String((await runItem(a, 'tree-live'))?.item.description)));
      // The node object is the one shown before, updated in place from the reader's change notice.
      const after = await runItem(a, 'tree-live');
      assert.equal(after?.node, run.node);
      assert.equal((run.node as RunNode).run.stepCount, 3);
      // The tree can catch up through a reload before the notice is recorded (seen with a busy extension host): wait for it.
      await until('the reader to report the run as changed', () => Promise.resolve(a.notices.some((n) => n.runs.includes('tree-live'))));
    } finally {
      child.kill('SIGKILL');
      unrelease();
    }
  });

  it('opens a step checkpoint as JSON, copies an idempotency key and reveals an action in the source', async () => {
    const a = await api();
    const doc = await vscode.commands.executeCommand<vscode.TextDocument>('logbook.openCheckpoint', { runId: 'tree-done', stepIdx: 1 });
    assert.equal(doc.languageId, 'json');
    assert.deepEqual(JSON.parse(doc.getText()).result, { sent: 'user1' });
    const key = await vscode.commands.executeCommand('logbook.copyIdempotencyKey', { runId: 'tree-done', actionId: 'notice:tree-done:user1' });
    assert.equal(key, 'notice:tree-done:user1');
    assert.equal(await vscode.env.clipboard.readText(), 'notice:tree-done:user1');
    const at = await vscode.commands.executeCommand<{ file: string; line: number }>('logbook.revealSource', {
      runId: 'tree-done',
      actionId: 'notice:tree-done:user1',
    });
    const editor = vscode.window.activeTextEditor;
    assert.equal(editor?.document.uri.fsPath, agentFile());
    assert.match(editor.document.lineAt(at.line).text, /run\.do\(sendNotice/);
    assert.equal(editor.selection.active.line, at.line);
    assert.ok(a);
  });

  it('decorates run.step and run.do lines with what the latest run did there', async () => {
    const a = await api();
    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    await until('decorations for the agent', async () => {
      await a.decorations.update();
      const d = a.decorations.shown.get(agentFile());
      return d && d.length >= 1 ? d : undefined;
    });
    const d = a.decorations.shown.get(agentFile())!;
    const stepLine = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('run.step(`notify user'));
    assert.ok(
      d.some((x) => x.line === stepLine && /✓ 3 completed/.test(x.text)),
      JSON.stringify(d),
    );
  });
});
