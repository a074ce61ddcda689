// Child runs in the sidebar: a run started with run.child is not a root of the tree; it sits under the step of its
// parent that started it, and reveal finds it there.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { StepNode } from '../../src/extension/tree/nodes';
import { ROOT, api, cli, runItem, shown, text, until } from './helpers';

describe('child runs in the tree', () => {
  before(() => {
    const r = cli(['run', path.join(ROOT, 'test', 'fixtures', 'child', 'campaign.ts'), '--run-id', 'tree-parent']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it('nests the child run under the parent’s step that started it, not at the root', async () => {
    const a = await api();
    const parent = await until('the parent in the tree', () => runItem(a, 'tree-parent'));
    assert.equal(await runItem(a, 'tree-parent.child-2'), undefined, 'the child is not a root');
    const steps = await shown(a, parent.node);
    assert.deepEqual(
      steps.map((s) => text(s.item.label)),
      ['1. announce', '2. child drafter', '3. pause', '4. send'],
    );
    const childStep = steps[1]!;
    assert.equal(childStep.item.description, 'completed · 1 child run');
    assert.equal(childStep.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    const under = await shown(a, childStep.node);
    assert.equal(under.length, 1);
    const child = under[0]!;
    assert.equal(child.node.kind, 'run');
    assert.equal(child.node.run.id, 'tree-parent.child-2');
    assert.equal(child.node.parent, childStep.node, 'the child’s node hangs off the step');
    assert.equal(text(child.item.label), 'drafter');
    assert.match(String(child.item.description), /^completed · 1 attempt · .* · tree-parent\.child-2$/);
    const childSteps = await shown(a, child.node);
    assert.deepEqual(
      childSteps.map((s) => text(s.item.label)),
      ['1. write', '2. save'],
    );
    const [save] = await shown(a, childSteps[1]!.node);
    assert.equal(text(save!.item.label), 'draft.save');
    // Reveal walks down to it through its parent.
    await a.commands.reveal('tree-parent.child-2');
    // By id, not identity: the workspace's other runs refresh the tree, which makes its nodes anew.
    const picked = await until('the revealed child selected', () => {
      const s = a.view.selection[0];
      return s?.kind === 'run' && s.run.id === 'tree-parent.child-2' ? s : undefined;
    });
    assert.equal((picked.parent as StepNode).step.runId, 'tree-parent', 'revealed under its parent’s step');
  });
});
