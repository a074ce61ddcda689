// The exactly-once checker over logbookRunAgent: steps that are Agents SDK runs whose gated calls pause the SDK's run
// (its RunState journaled) until the schedule's person answers; crashes and schedules anywhere; a negative control.

import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { check, scratchDir } from './checker';
import { runCase } from './executor';
import { caseArbOf } from './arbitraries';
import type { AgentJ, CaseJ } from './spec';

const SEED = 2323;

/** Generated cases whose steps the SDK drives through logbookRunAgent (a step whose actions it cannot take calls them in turn). */
function pausedRuns(base: fc.Arbitrary<CaseJ>, effect?: 'non-idempotent'): fc.Arbitrary<CaseJ> {
  return base.map((c) => {
    const actions = c.agent.actions.map((x, i) => {
      // Every other action (the first among them) gated, so that runs pause and resume from the SDK's state.
      if (effect) return { ...x, effect, verify: true, approval: i % 2 === 0 ? ('approve' as const) : ('none' as const), fail: 'none' as const };
      return i === 0 && x.effect !== 'read-only' && x.approval === 'none' ? { ...x, approval: 'approve' as const } : x;
    });
    const agent: AgentJ = {
      ...c.agent,
      actions,
      steps: c.agent.steps.map((s) => ({
        ...s,
        kind: s.calls.every((k) => ['none', 'definite'].includes(actions[k.action]?.fail ?? '')) ? 'agents-run' : 'seq',
      })),
    };
    // The control's schedules kill and resume (the person answering between), so a resumed segment meets the lie.
    const ops = effect ? c.schedule.ops.filter((o) => o.op === 'start' || o.op === 'resume' || o.op === 'approve') : c.schedule.ops;
    return { ...c, agent, schedule: { ...c.schedule, ops } };
  });
}

describe('exactly-once checker: Agents SDK runs paused at approvals (logbookRunAgent)', function () {
  this.timeout(1_200_000);

  it('finds no violation in 30 generated agents × schedules whose steps are SDK runs, their gates the SDK pauses', async () => {
    const r = await check({ seed: SEED, runs: 30, arbitrary: pausedRuns(caseArbOf(false)), shrinkMs: 15_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('negative control: a verify that answers "not found" for an effect that landed is caught through logbookRunAgent', async () => {
    const r = await check({
      seed: SEED,
      runs: 60,
      sabotage: { verifyLies: true },
      arbitrary: pausedRuns(caseArbOf(false), 'non-idempotent').filter((c) => c.schedule.ops[0]?.op === 'start'),
      kinds: ['effect-twice'],
      firstOnly: true,
      shrinkKinds: 1,
      shrinkMs: 15_000,
    });
    const s = r.shrunk[0];
    assert.ok(s, `the sabotaged world went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    assert.ok(
      s.result.violations.some((v) => v.kind === 'effect-twice'),
      r.text,
    );
    assert.ok(
      s.c.agent.steps.every((x) => x.kind === 'agents-run'),
      `found through an SDK run:\n${r.text}`,
    );
  });

  it('a fixed case: two gates in one turn (one approved, one rejected), the resumed segment killed after the effect', async () => {
    const c: CaseJ = {
      agent: {
        fields: [],
        onFailure: 'stop',
        actions: [
          { effect: 'non-idempotent', verify: true, compensate: false, approval: 'approve', fail: 'none' },
          { effect: 'idempotent', verify: false, compensate: false, approval: 'reject', fail: 'none' },
          { effect: 'read-only', verify: false, compensate: false, approval: 'none', fail: 'none' },
        ],
        steps: [
          {
            kind: 'agents-run',
            calls: [
              { action: 0, n: 0, mode: 'use' },
              { action: 1, n: 1, mode: 'use' },
              { action: 2, n: 0, mode: 'use' },
            ],
          },
        ],
      },
      schedule: {
        // The gates wait one at a time: answered, resumed, the next answered, then the segment resumed from the state.
        ops: [
          { op: 'start', via: 'engine' },
          { op: 'approve' },
          { op: 'resume', via: 'engine' },
          { op: 'approve' },
          { op: 'resume', via: 'engine', crash: { at: 'provider', n: 0, when: 'after-effect' } },
        ],
      },
    };
    const r = await runCase(c, { dir: scratchDir() });
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    const log = r.log.join('\n');
    // The gates are the SDK's pauses, answered as the actions say; the resumed segment was killed and resumed again.
    assert.match(log, /approve approval:charge\.0:r:0 \(host API\)/);
    assert.match(log, /reject approval:reserve\.1:r:1 \(host API\)/);
    assert.match(log, /resume \(the engine, as the CLI calls it\): killed in charge\.0 charge\.0:r:0 after-effect/);
    assert.equal(r.baseline.status, 'completed');
  });
});
