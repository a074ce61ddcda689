// Crash tests: a real child process SIGKILLed at every fault point of every step and action, then resumed to the end.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, cli, cliJson, show, tmpDir } from '../helpers';
import { killAndResume, pointsOf, readJson } from './crash';

function dupes(keys: string[]): string[] {
  return keys.filter((k, i) => keys.indexOf(k) !== i);
}

describe('crash: the email campaign story (50 emails, killed after email 30 was sent)', () => {
  it('skips 29, reconciles email 30 through verify without re-sending, sends 31–50: the provider has exactly 50', () => {
    const dir = tmpDir();
    const script = path.join(EXAMPLES, 'email-campaign.ts');
    const first = cli(dir, ['run', script, '--run-id', 'story', '--crash-at', 'email.send#30@after-execute']);
    assert.equal(first.signal, 'SIGKILL');
    const crashed = show(dir, 'story');
    assert.equal(crashed.run.status, 'interrupted');
    assert.equal(crashed.actions.filter((a: any) => a.status === 'committed').length, 29);
    const doubt = crashed.actions.filter((a: any) => a.inDoubt);
    assert.deepEqual(
      doubt.map((a: any) => a.id),
      ['email:story:user30@example.com'],
    );
    assert.equal(readJson(dir, 'email-outbox.json').sent.length, 30, 'the provider sent email 30 before the kill');

    const r = cliJson(dir, ['resume', 'story']);
    assert.equal(r.status, 0);
    assert.equal(r.json.status, 'completed');
    assert.deepEqual(r.json.output, { sent: 50 });
    assert.equal(r.json.stats.stepsReplayed, 30, 'load recipients + emails 1–29 replayed from the journal');
    assert.deepEqual(r.json.stats.reconciled, [{ id: 'email:story:user30@example.com', type: 'email.send', outcome: 'verified' }]);
    assert.equal(r.json.stats.actionsExecuted, 20);

    const outbox = readJson(dir, 'email-outbox.json');
    assert.equal(outbox.sent.length, 50);
    assert.equal(outbox.calls, 50, 'send was called exactly 50 times');
    assert.deepEqual(dupes(outbox.sent.map((s: any) => s.to)), []);
    const done = show(dir, 'story');
    assert.ok(done.actions.every((a: any) => a.executions === 1 && a.status === 'committed'));
    assert.equal(done.actions.find((a: any) => a.id === 'email:story:user30@example.com').reconciliation, 'verified');
  });
});

describe('crash: SIGKILL at every fault point, then resume to the end', function () {
  this.timeout(900_000);

  const cases = [
    { name: 'email campaign (5 recipients)', script: path.join(EXAMPLES, 'email-campaign.ts'), input: '{"recipients":5}', world: 'email-outbox.json' },
    {
      name: 'every effect kind, parallel actions, no-verify action',
      script: path.join(FIXTURES, 'all-effects.ts'),
      input: '{}',
      world: 'all-effects-world.json',
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const base = tmpDir();
      const clean = cliJson(base, ['run', c.script, '--input', c.input, '--run-id', 'r']);
      assert.equal(clean.status, 0);
      const points = pointsOf(show(base, 'r'));
      assert.ok(points.length >= 20, `enough points (${points.length})`);
      const kinds = new Set(points.map((p) => p.phase));
      assert.equal(kinds.size, 6, 'every step and action fault point kind is exercised');
      for (const p of points) {
        const dir = tmpDir();
        const probeKeys = (): Record<string, string[]> => {
          const w = readJson(dir, c.world);
          return w.sent ? { 'email.send': w.sent.map((s: any) => s.key) } : w.calls;
        };
        const res = killAndResume(dir, c.script, c.input, p.spec, (key) => Object.values(probeKeys()).some((keys) => keys.includes(key)));
        assert.deepEqual(res.output, clean.json.output, `same output after a crash at ${p.spec}`);
        for (const [type, keys] of Object.entries(probeKeys())) {
          if (type.endsWith('.call')) continue;
          assert.deepEqual(dupes(keys), [], `${type} happened twice after a crash at ${p.spec}`);
        }
        for (const a of res.journal.actions) {
          assert.equal(a.status, 'committed', `${a.id} after ${p.spec}`);
          if (a.effect === 'non-idempotent') assert.ok(a.executions <= 1, `${a.id} executed ${a.executions}× after a crash at ${p.spec}`);
        }
        const inDoubtAtKill = p.phase === 'action:after-start' || p.phase === 'action:after-execute';
        const noVerify = p.type === 'sms.notify';
        assert.equal(
          res.decisions.length > 0,
          inDoubtAtKill && noVerify,
          `needs-decision exactly when a no-verify action was in doubt (${p.spec}: ${res.decisions.join(',')})`,
        );
        if (p.type === 'card.charge' && inDoubtAtKill) {
          const charge = res.journal.actions.find((a: any) => a.type === 'card.charge');
          assert.equal(charge.reconciliation, p.phase === 'action:after-execute' ? 'verified' : 'verified-absent');
        }
        if (c.world === 'all-effects-world.json') assert.equal(readJson(dir, c.world).stock, 8, `stock exact after ${p.spec}`);
      }
    });
  }
});
