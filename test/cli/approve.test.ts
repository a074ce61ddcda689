// `approve --no-resume` records the approval and leaves the run waiting; a later resume executes the action once; an
// approve racing a resume says who took the decision, and the action runs once.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { cli, cliEnded, cliJson, FIXTURES, show, tmpDir } from '../helpers';

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

  it('approve racing a resume: whichever takes the lease, approve exits 0 saying who continues, and the action runs once', async () => {
    for (let i = 0; i < 4; i++) {
      const dir = tmpDir('logbook-approve-race-');
      const first = cliJson(dir, ['run', GATES, '--run-id', 'r', '--input', '{"gates":1}']);
      assert.equal(first.status, 3, first.stderr);
      const actionId: string = first.json.waitingOn.actionId;
      const [resumed, approved] = await Promise.all([cliEnded(dir, ['resume', 'r']), cliEnded(dir, ['approve', 'r', actionId])]);
      // The resume completes (it took the decision), stops at the gate before it came (3), or finds the approve's
      // resume driving (4), or finds the run completed by it.
      assert.ok([0, 3, 4].includes(resumed.code ?? -1) || /LB_RUN_NOT_RESUMABLE\] Run r already completed/.test(resumed.out), resumed.out);
      assert.equal(approved.code, 0, approved.out);
      assert.doesNotMatch(approved.out, /error/);
      assert.match(approved.out, /completed|takes the decision at its gate|another process took it on first/);
      const after = show(dir, 'r');
      if (after.run.status !== 'completed') assert.equal(cli(dir, ['resume', 'r']).status, 0);
      const gate = show(dir, 'r').actions.find((a: { id: string }) => a.id === actionId);
      assert.equal(gate.status, 'committed');
      assert.equal(gate.executions, 1);
    }
  });
});
