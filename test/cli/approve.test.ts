// `approve --no-resume` records the approval and leaves the run waiting; a later resume executes the action once.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { cli, cliJson, FIXTURES, show, tmpDir } from '../helpers';

const GATES = path.join(FIXTURES, 'dap', 'gates.ts');

describe('cli: approve --no-resume', function () {
  this.timeout(120_000);

  it('records the approval without running anything; resume then executes the approved action exactly once', () => {
    const dir = tmpDir();
    const first = cliJson(dir, ['run', GATES, '--run-id', 'r', '--input', '{"gates":1}']);
    assert.equal(first.status, 3, first.stderr);
    assert.equal(first.json.status, 'awaiting-approval');
    const actionId: string = first.json.waitingOn.actionId;

    const approved = cli(dir, ['approve', 'r', actionId, '--note', 'looks right', '--no-resume']);
    assert.equal(approved.status, 0, approved.stderr);
    assert.match(approved.stdout, new RegExp(`approved ${actionId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} in run r`));
    assert.doesNotMatch(approved.stdout, /completed/, 'nothing was resumed');
    const waiting = show(dir, 'r');
    assert.equal(waiting.run.status, 'awaiting-approval');
    const gate = waiting.actions.find((a: { id: string }) => a.id === actionId);
    assert.equal(gate.approval, 'approved');
    assert.equal(gate.executions, 0, 'approving does not execute');

    const resumed = cliJson(dir, ['resume', 'r']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(resumed.json.output, { gates: 1, after: 1 });
    const done = show(dir, 'r').actions.find((a: { id: string }) => a.id === actionId);
    assert.equal(done.status, 'committed');
    assert.equal(done.executions, 1);
  });
});
