// A LangGraph.js thread (examples/langgraph-refund.ts) in the runs tree: its interrupt() waits as an approval gate,
// answered from the tree with a note that becomes interrupt()'s value.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode } from '../../src/extension/tree/nodes';
import { ROOT, api, cli, runItem, shown, text, until } from './helpers';

const REFUND = path.join(ROOT, 'examples', 'langgraph-refund.ts');

describe('a LangGraph run in the runs tree', () => {
  it('shows the thread as a run waiting at its interrupt, and the Approve command answers it', async () => {
    const a = await api();
    const r = cli(['run', REFUND, '--run-id', 'lg-tree']);
    assert.equal(r.status, 3, `${r.stdout}\n${r.stderr}`);
    const run = await until('the LangGraph run awaiting approval', async () => {
      const x = await runItem(a, 'lg-tree');
      return x && /^awaiting approval/.test(String(x.item.description)) ? x : undefined;
    });
    assert.equal(text(run.item.label), 'langgraph-refund');
    const steps = await shown(a, run.node);
    assert.deepEqual(
      steps.map((s) => text(s.item.label)),
      ['1. refund desk', '2. interrupt: review'],
    );
    const [email] = await shown(a, steps[0]!.node);
    assert.equal((email!.node as ActionNode).action.id, 'langgraph:lg-tree:acknowledge@1/email:ada@example.com');
    const [gate] = await shown(a, steps[1]!.node);
    assert.equal((gate!.node as ActionNode).action.type, 'langgraph.interrupt');
    assert.match(gate!.item.contextValue ?? '', /\bawaitingApproval\b/);

    const approved = await vscode.commands.executeCommand<{
      code: number;
      json: { status: string; output: { approved: boolean } };
      stdout: string;
      stderr: string;
    }>('logbook.approveAction', gate!.node, { note: '{"approve":false}' });
    assert.equal(approved.code, 0, `${approved.stdout}\n${approved.stderr}`);
    assert.equal(approved.json.status, 'completed');
    assert.equal(approved.json.output.approved, false, 'the note answered interrupt()');
    await until('completed', async () => /^completed/.test(String((await runItem(a, 'lg-tree'))?.item.description)));
    const after = await shown(a, run.node);
    assert.deepEqual(
      after.map((s) => text(s.item.label)),
      ['1. refund desk', '2. interrupt: review', '3. refund desk: resume 1'],
    );
  });
});
