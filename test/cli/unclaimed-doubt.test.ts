// A completed run never holds an in-doubt action: a doubt a crash left, which the resumed script never claims (it took
// another branch), is settled before the run may complete (issue 10 §3.5, second half).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES, cli, show, tmpDir } from '../helpers';

const SCRIPT = path.join(FIXTURES, 'changes-branch.ts');
const sent = (dir: string): string[] => JSON.parse(fs.readFileSync(path.join(dir, 'branch-world.json'), 'utf8')) as string[];

describe('cli: a doubt the resumed script never claims', () => {
  it('without verify: the resume stops for a decision (exit 3) instead of completing; decided, it completes and pays once', () => {
    const dir = tmpDir();
    const crashed = cli(dir, ['run', SCRIPT, '--run-id', 'b1', '--crash-at', 'branch.pay#1@after-execute']);
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    assert.deepEqual(sent(dir), ['pay:b1:10']);
    const resumed = cli(dir, ['resume', 'b1']);
    assert.equal(resumed.status, 3, resumed.stdout + resumed.stderr);
    const waiting = show(dir, 'b1');
    assert.equal(waiting.run.status, 'needs-decision');
    assert.equal(waiting.actions.find((a: { id: string }) => a.id === 'pay:b1:10').status, 'started');
    const decided = cli(dir, ['resume', 'b1', '--decide', 'pay:b1:10=happened']);
    assert.equal(decided.status, 0, decided.stdout + decided.stderr);
    const done = show(dir, 'b1');
    assert.equal(done.run.status, 'completed');
    assert.ok(
      done.actions.every((a: { status: string }) => a.status !== 'started'),
      'nothing left in doubt in a completed run',
    );
    assert.deepEqual(sent(dir), ['pay:b1:10'], 'paid once');
  });

  it('with verify: the resume asks verify, records the payment as committed, and completes without paying again', () => {
    const dir = tmpDir();
    const env = { BRANCH_VERIFY: '1' };
    const crashed = cli(dir, ['run', SCRIPT, '--run-id', 'b2', '--crash-at', 'branch.pay#1@after-execute'], env);
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    const resumed = cli(dir, ['resume', 'b2'], env);
    assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
    const done = show(dir, 'b2');
    assert.equal(done.run.status, 'completed');
    const pay = done.actions.find((a: { id: string }) => a.id === 'pay:b2:10');
    assert.equal(pay.status, 'committed');
    assert.equal(pay.reconciliation, 'verified');
    assert.deepEqual(sent(dir), ['pay:b2:10'], 'paid once');
  });
  it('idempotent, no verify: the resume redoes it with its key and reports it re-executed, not decided by a person', () => {
    const dir = tmpDir();
    const env = { BRANCH_EFFECT: 'idempotent' };
    const crashed = cli(dir, ['run', SCRIPT, '--run-id', 'b3', '--crash-at', 'branch.pay#1@after-execute'], env);
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    const resumed = cli(dir, ['resume', 'b3'], env);
    assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
    const pay = show(dir, 'b3').actions.find((a: { id: string }) => a.id === 'pay:b3:10');
    assert.equal(pay.status, 'committed');
    assert.equal(pay.reconciliation, 're-executed');
    assert.match(resumed.stdout, /reconciled branch\.pay pay:b3:10: re-executed/, resumed.stdout);
  });
});
