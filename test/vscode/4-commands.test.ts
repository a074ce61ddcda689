// Commands that change runs go through the CLI: approve a gated action, compensate the run, delete it.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ActionNode } from '../../src/extension/tree/nodes';
import { agentFile, api, cli, runItem, shown, until } from './helpers';

describe('run commands', () => {
  it('approves a gated action from the tree, then compensates the run, then deletes it', async () => {
    const a = await api();
    const r = cli(['run', agentFile(), '--run-id', 'cmd-pay', '--input', '{"items":1,"pay":true}']);
    assert.equal(r.status, 3, r.stderr);
    const run = await until('awaiting approval', async () => {
      const x = await runItem(a, 'cmd-pay');
      return x && /^awaiting approval/.test(String(x.item.description)) ? x : undefined;
    });
    assert.match(run.item.contextValue ?? '', /\bawaitingApproval\b/);
    const steps = await shown(a, run.node);
    const [gate] = await shown(a, steps[1]!.node);
    assert.equal(gate!.item.contextValue, 'logbook.action hasKey hasSource awaitingApproval');

    const approved = await vscode.commands.executeCommand<{ code: number; json: { status: string }; stdout: string; stderr: string }>(
      'logbook.approveAction',
      gate!.node,
      { note: 'ok from the test' },
    );
    assert.equal(approved.code, 0, `${approved.stdout}\n${approved.stderr}`);
    assert.equal(approved.json.status, 'completed');
    await until('completed', async () => /^completed/.test(String((await runItem(a, 'cmd-pay'))?.item.description)));
    const [charge] = await shown(a, (await shown(a, run.node))[1]!.node);
    assert.equal((charge!.node as ActionNode).action.approval, 'approved');

    const comp = await vscode.commands.executeCommand<{ code: number; json: { status: string; compensated: unknown[] }; stdout: string; stderr: string }>(
      'logbook.compensateRun',
      run.node,
      { confirm: false },
    );
    assert.equal(comp.code, 0, `${comp.stdout}\n${comp.stderr}`);
    assert.equal(comp.json.status, 'compensated');
    assert.equal(comp.json.compensated.length, 2);
    const after = await until('compensated', async () => {
      const x = await runItem(a, 'cmd-pay');
      return x && /^compensated/.test(String(x.item.description)) ? x : undefined;
    });
    const [undone] = await shown(a, (await shown(a, after.node))[0]!.node);
    assert.match(String(undone!.item.description), /^compensated/);

    const del = await vscode.commands.executeCommand<{ code: number }>('logbook.deleteRun', 'cmd-pay', { confirm: false });
    assert.equal(del.code, 0);
    await until('the run gone from the tree', async () => (await runItem(a, 'cmd-pay')) === undefined);
  });

  it('decides an in-doubt charge happened with the result it had; a result that is not JSON decides nothing', async () => {
    assert.equal(cli(['run', agentFile(), '--run-id', 'cmd-decide', '--input', '{"items":0,"pay":true}']).status, 3);
    const killed = cli(['approve', 'cmd-decide', 'charge:cmd-decide:5', '--crash-at', 'payment.charge#1@after-execute']);
    assert.equal(killed.status, null, `${killed.stdout}\n${killed.stderr}`);
    assert.equal(cli(['resume', 'cmd-decide']).status, 3, 'the charge has no verify: the run waits for a decision');
    const ref = { runId: 'cmd-decide', actionId: 'charge:cmd-decide:5' };
    const refused = await vscode.commands.executeCommand('logbook.decideHappened', ref, { result: '{charged: 5' });
    assert.equal(refused, undefined);
    const still = JSON.parse(cli(['show', 'cmd-decide', '--json']).stdout) as { run: { status: string } };
    assert.equal(still.run.status, 'needs-decision', 'nothing was decided');
    const decided = await vscode.commands.executeCommand<{ code: number; json: { status: string }; stdout: string; stderr: string }>(
      'logbook.decideHappened',
      ref,
      { result: '{"charged": 5, "ref": "r-1"}' },
    );
    assert.equal(decided.code, 0, `${decided.stdout}\n${decided.stderr}`);
    assert.equal(decided.json.status, 'completed');
    const after = JSON.parse(cli(['show', 'cmd-decide', '--json']).stdout) as { actions: Array<{ id: string; result: unknown; reconciliation: string }> };
    const charge = after.actions.find((x) => x.id === 'charge:cmd-decide:5');
    assert.equal(charge?.reconciliation, 'decided-happened');
    assert.deepEqual(charge?.result, { charged: 5, ref: 'r-1' });
  });
});
