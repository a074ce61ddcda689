// The exactly-once checker's worker schedules on SQLite: real `logbook worker` processes killed, frozen, woken, raced.

import { strict as assert } from 'node:assert';
import { check, inScratch } from './checker';
import type { CaseResult } from './executor';
import { oneChargeAgent, type CaseJ } from './spec';
import type { Sabotage } from './world';

const SEED = 19;

/** One non-idempotent action with verify in one step: the frozen worker's call is the run's first, and b executes it. */
function frozen(where: 'before-check' | 'window'): CaseJ {
  return {
    agent: oneChargeAgent(['dollars']),
    schedule: { ops: [{ op: 'worker-pause', at: 0, where }] },
  };
}

async function run(c: CaseJ, sabotage?: Sabotage): Promise<CaseResult> {
  return inScratch(c, { processes: true, ...(sabotage ? { sabotage } : {}) });
}
const kinds = (r: CaseResult): string[] => r.violations.map((v) => v.kind);

describe('exactly-once checker: logbook worker schedules (SQLite)', function () {
  this.timeout(600_000);

  it('finds no violation in 8 generated worker schedules (seed 19)', async () => {
    const r = await check({ seed: SEED, runs: 8, workers: true, shrinkMs: 30_000, shrinkKinds: 2 });
    assert.equal(r.schedules, 8);
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  for (const where of ['before-check', 'window'] as const) {
    it(`a worker frozen past its lease ${where === 'window' ? 'between its lease check and its send' : 'before its lease check'}, woken after worker b took over: one charge`, async () => {
      const r = await run(frozen(where));
      const log = r.log.join('\n');
      assert.deepEqual(r.violations, [], log);
      assert.match(log, /logbook worker b while worker a is frozen .*: completed/, 'worker b took the run over and completed it');
      assert.match(log, /frozen in provider call #1 .* woken \(SIGCONT\): interrupted \(LB_LEASE_LOST/, 'woken, worker a stopped LB_LEASE_LOST');
      // In the window a sends anyway (no process can close it): the provider refuses the repeated key.
      if (where === 'window')
        assert.match(log, /woken, worker a sent what it had checked before the freeze \(charge\.0:r:0, the held one: refused as a repeated key\)/, log);
      else assert.doesNotMatch(log, /woken, worker a sent/, log);
    });
  }

  it('a worker frozen past its lease while the run sleeps in it: worker b wakes the run on the journaled wake time; woken, a writes and sends nothing', async () => {
    const r = await run({
      agent: {
        fields: [],
        onFailure: 'stop',
        actions: [{ effect: 'non-idempotent', verify: true, compensate: false, approval: 'none', fail: 'none' }],
        steps: [
          { kind: 'seq', calls: [{ action: 0, n: 0, mode: 'use' }] },
          { kind: 'seq', calls: [{ action: 0, n: 1, mode: 'use' }], sleepMs: 0 },
        ],
      },
      schedule: { ops: [{ op: 'worker-pause-sleep' }] },
    });
    const log = r.log.join('\n');
    assert.deepEqual(r.violations, [], log);
    assert.match(log, /logbook worker b while worker a was frozen \(SIGSTOP\) past its 1500 ms lease in the sleep of step #2: completed/, log);
    assert.match(log, /frozen in its sleep and then woken \(SIGCONT\): interrupted \(LB_LEASE_LOST/, log);
  });

  it('negative controls: a provider that accepts the repeat in the window, and an execute that skips its lease check, are caught', async () => {
    const window = await run(frozen('window'), { acceptsRepeats: true });
    assert.ok(kinds(window).includes('effect-twice'), window.log.join('\n'));
    const unchecked = await run(frozen('before-check'), { noLeaseCheck: true });
    assert.ok(
      kinds(unchecked).includes('effect-twice') && kinds(unchecked).includes('woken-holder-sent'),
      `${unchecked.log.join('\n')}\n${JSON.stringify(unchecked.violations)}`,
    );
  });
});
