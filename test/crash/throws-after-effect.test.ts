// Errors after the effect, with real processes and a real SIGKILL: in doubt (not failed), shown, planned, reconciled once.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, cli, cliJson, show, tmpDir } from '../helpers';
import { readJson } from './crash';

const SCRIPT = path.join(FIXTURES, 'throws-after-effect.ts');
const effects = (dir: string): Record<string, string[]> => readJson(dir, 'throws-after-effect-world.json').effects;

describe('crash: errors after the effect', function () {
  this.timeout(300_000);

  it('caught and given up on, then SIGKILLed before the end: the resume settles both doubts before completing (verify, then a decision), nothing sent twice', () => {
    const dir = tmpDir();
    const first = cli(dir, ['run', SCRIPT, '--input', '{"retry":false}', '--run-id', 'g', '--crash-at', 'wrap up@before']);
    assert.equal(first.signal, 'SIGKILL');
    const crashed = show(dir, 'g');
    assert.equal(crashed.run.status, 'interrupted');
    const doubts = crashed.actions.filter((a: any) => a.afterError);
    assert.deepEqual(
      doubts.map((a: any) => a.id),
      ['notify:g:1', 'sms:g:1'],
    );
    assert.ok(doubts.every((a: any) => a.status === 'started' && a.display === 'in-doubt-after-error' && /ETIMEDOUT/.test(a.error.message)));
    const text = cli(dir, ['show', 'g']).stdout;
    assert.match(text, /notify\.send notify:g:1 is in doubt after an error: notify\.send: read ETIMEDOUT/);

    const plan = cliJson(dir, ['plan', 'g']).json;
    assert.deepEqual(
      plan.inDoubt.map((d: any) => [d.id, d.reconcile]),
      [
        ['notify:g:1', 'verify'],
        ['sms:g:1', 'needs-decision'],
      ],
    );
    assert.match(plan.inDoubt[0].detail, /before the run completes, verify asks/);
    assert.deepEqual(plan.stops, { kind: 'needs-decision', actionId: 'sms:g:1', type: 'sms.send' });

    const resumed = cliJson(dir, ['resume', 'g']);
    assert.equal(resumed.status, 3, 'the sms has no verify: the run stops for a decision');
    assert.equal(resumed.json.status, 'needs-decision');
    assert.equal(resumed.json.waitingOn.actionId, 'sms:g:1');
    assert.equal(show(dir, 'g').actions.find((a: any) => a.id === 'notify:g:1').reconciliation, 'verified');

    const done = cliJson(dir, ['resume', 'g', '--decide', 'sms:g:1=happened']);
    assert.equal(done.status, 0);
    assert.deepEqual(done.json.output, { done: ['gave up', 'notified', 'gave up', 'texted'] });
    assert.deepEqual(effects(dir), { 'notify.send': ['notify:g:1', 'notify:g:2'], 'sms.send': ['sms:g:1', 'sms:g:2'] });
    assert.ok(
      show(dir, 'g').actions.every((a: any) => a.status === 'committed' && a.executions === 1),
      'a completed run holds nothing in doubt',
    );
  });
});
