// `--crash-at …@after-execute-throw` from the CLI: the run fails with the injected error, the action is in doubt, resume verifies.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EXAMPLES, cli, cliJson, show, tmpDir } from '../helpers';
import { readJson } from '../crash/crash';

const EMAIL = path.join(EXAMPLES, 'email-campaign.ts');

describe('cli: an error after the effect (injected)', function () {
  this.timeout(120_000);

  it('run fails (exit 1) and says the action is in doubt; show and plan agree; resume verifies it instead of sending again', () => {
    const dir = tmpDir();
    const first = cli(dir, ['run', EMAIL, '--input', '{"recipients":3}', '--run-id', 'x', '--crash-at', 'email.send#2@after-execute-throw']);
    assert.equal(first.status, 1, first.stdout + first.stderr);
    assert.match(first.stdout, /failed/);
    assert.match(first.stdout, /in doubt email\.send email:x:user2@example\.com: execute threw \(injected by --crash-at email\.send#2@after-execute-throw/);
    assert.match(first.stdout, /next +fix the cause, then: logbook resume x/);
    assert.equal(readJson(dir, 'email-outbox.json').sent.length, 2, 'the effect happened before the error');

    const j = show(dir, 'x');
    assert.equal(j.run.status, 'failed');
    const a = j.actions.find((x: any) => x.id === 'email:x:user2@example.com');
    assert.equal(a.status, 'started');
    assert.equal(a.display, 'in-doubt-after-error');
    assert.equal(a.error.name, 'InjectedFault');
    assert.match(cli(dir, ['show', 'x']).stdout, /in doubt after an error/);
    const plan = cliJson(dir, ['plan', 'x']).json;
    assert.equal(plan.canResume, true);
    assert.deepEqual(
      plan.inDoubt.map((d: any) => [d.id, d.reconcile]),
      [['email:x:user2@example.com', 'verify']],
    );
    assert.match(
      cli(dir, ['plan', 'x']).stdout,
      /in doubt +email\.send email:x:user2@example\.com \(non-idempotent\): in doubt after an error \(injected by --crash-at/,
    );

    const r = cliJson(dir, ['resume', 'x']);
    assert.equal(r.status, 0);
    assert.deepEqual(r.json.stats.reconciled, [{ id: 'email:x:user2@example.com', type: 'email.send', outcome: 'verified' }]);
    const outbox = readJson(dir, 'email-outbox.json');
    assert.equal(outbox.sent.length, 3);
    assert.equal(outbox.calls, 3, 'send was called once per email');
  });

  it('a crash spec with an unknown phase lists after-execute-throw among the phases', () => {
    const r = cli(tmpDir(), ['run', EMAIL, '--crash-at', 'email.send#1@after-throw']);
    assert.equal(r.status, 2);
    assert.match(r.stderr + r.stdout, /after-execute-throw/);
  });
});
