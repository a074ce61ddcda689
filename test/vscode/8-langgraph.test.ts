// A LangGraph.js thread (examples/langgraph-refund.ts) in the runs tree: its node executions are its steps, its
// interrupt() waits as an approval gate answered from the tree with a note that becomes interrupt()'s value, and a run
// that time-travels from one of its past checkpoints shows as its fork.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode, RunNode } from '../../src/extension/tree/nodes';
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
      ['1. refund desk', '2. acknowledge@1', '3. propose@2', '4. review@3', '5. interrupt: review@3'],
    );
    const [email] = await shown(a, steps[1]!.node);
    assert.equal((email!.node as ActionNode).action.id, 'langgraph:lg-tree:acknowledge@1/email:ada@example.com');
    const [gate] = await shown(a, steps[4]!.node);
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
      ['1. refund desk', '2. acknowledge@1', '3. propose@2', '4. review@3', '5. interrupt: review@3', '6. review@3', '7. reply@4', '8. refund desk: end'],
    );
  });

  it('shows a run that time-travels from a past checkpoint of that thread as its fork, with its origin', async () => {
    const a = await api();
    const shownRun = JSON.parse(cli(['show', 'lg-tree', '--json']).stdout) as { steps: Array<{ name: string; result?: { checkpoint?: string } }> };
    const checkpoint = shownRun.steps.find((s) => s.name === 'review@3')?.result?.checkpoint;
    assert.ok(checkpoint, 'the review node step names the checkpoint it ran from');
    const r = cli(['run', REFUND, '--run-id', 'lg-travel', '--input', JSON.stringify({ from: { thread: 'lg-tree', checkpoint } })]);
    assert.equal(r.status, 3, `${r.stdout}\n${r.stderr}`);
    const fork = await until('the time-travel run in the tree', () => runItem(a, 'lg-travel'));
    assert.equal((fork.node as RunNode).run.forkedFrom, 'lg-tree');
    assert.match(String(fork.item.description), /· fork of lg-tree at step 4 ·/);
    assert.deepEqual(
      (await shown(a, fork.node)).map((s) => text(s.item.label)),
      ['1. refund desk', '2. review@3', '3. interrupt: review@3'],
    );
  });
});
