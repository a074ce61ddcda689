// The exactly-once checker on PostgreSQL: generated schedules on a private real server, a pause past the lease (real SIGSTOP), workers.

import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { usePgServer } from '../pg/server';
import { agentArb } from './arbitraries';
import { check, inScratch } from './checker';
import { oneChargeAgent, type AgentJ, type CaseJ } from './spec';

const SEED = 19;

/**
 * Agents whose first call reaches a provider at once (an effect with no gate, with verify), so the pause has a call
 * to freeze and the second driver, finding it absent, executes it.
 */
const pausable: fc.Arbitrary<CaseJ> = agentArb
  .map((a): AgentJ => {
    const first = a.steps[0]?.calls[0];
    const act = first ? a.actions[first.action] : undefined;
    if (!first || !act) return a;
    const actions = a.actions.map((x, i) =>
      i === first.action ? { ...x, effect: 'non-idempotent' as const, verify: true, approval: 'none' as const, fail: 'none' as const } : x,
    );
    return { ...a, actions };
  })
  .map((agent) => ({ agent, schedule: { ops: [{ op: 'cli-pause-run', first: 'run', at: 0 }] } }));

describe('exactly-once checker on PostgreSQL', function () {
  this.timeout(900_000);
  const pg = usePgServer();

  it('finds no violation in 6 generated schedules of simulated processes', async () => {
    const r = await check({ seed: SEED, runs: 6, db: pg.server.createDatabase(), shrinkMs: 10_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('a CLI process frozen (SIGSTOP) past its lease inside execute sends nothing when it wakes, after another took over', async () => {
    const r = await check({ seed: SEED, runs: 2, processes: true, arbitrary: pausable, db: pg.server.createDatabase(), shrinkMs: 10_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('the debugger holding a run stopped past its lease: a second driver cannot take it over, and continuing sends once', async () => {
    // The runner is alive while a person reads a stop; on PostgreSQL only the lease's expiry by the database clock
    // tells a dead holder from a live one, so the runner must keep the lease through the stop.
    const c: CaseJ = {
      agent: oneChargeAgent(),
      schedule: { ops: [{ op: 'dap-race', second: 'resume', holdMs: 3000 }] },
    };
    const r = await inScratch(c, { processes: true, db: pg.server.url });
    const log = r.log.join('\n');
    assert.deepEqual(r.violations, [], log);
    assert.match(log, /logbook resume \(a child process\) while the debugger holds the run at its first stop for 3000 ms: refused \[LB_LEASE_HELD\]/, log);
    assert.match(log, /the debugger's run, held at its first stop: completed/, log);
  });

  it('finds no violation in 6 generated worker schedules (real logbook worker processes, a database of their own each)', async () => {
    const r = await check({ seed: SEED, runs: 6, workers: true, db: pg.server.url, shrinkMs: 30_000, shrinkKinds: 2 });
    assert.equal(r.schedules, 6);
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('a worker frozen between its lease check and its send, woken after worker b took over: the provider refuses its repeat', async () => {
    const c: CaseJ = {
      agent: oneChargeAgent(),
      schedule: { ops: [{ op: 'worker-pause', at: 0, where: 'window' }] },
    };
    const r = await inScratch(c, { processes: true, db: pg.server.url });
    const log = r.log.join('\n');
    assert.deepEqual(r.violations, [], log);
    assert.match(log, /logbook worker b while worker a is frozen .*: completed/, log);
    assert.match(log, /woken, worker a sent what it had checked before the freeze \(charge\.0:r\d+:0, the held one: refused as a repeated key\)/, log);
  });
  it('a worker frozen past its lease while the run sleeps in it: worker b wakes the run on the journaled wake time; woken, a writes nothing', async () => {
    const c: CaseJ = {
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
    };
    const r = await inScratch(c, { processes: true, db: pg.server.url });
    const log = r.log.join('\n');
    assert.deepEqual(r.violations, [], log);
    assert.match(log, /logbook worker b while worker a was frozen \(SIGSTOP\) past its 1500 ms lease in the sleep of step #2: completed/, log);
    assert.match(log, /frozen in its sleep and then woken \(SIGCONT\): interrupted \(LB_LEASE_LOST/, log);
  });
});
