// The exactly-once checker over agent-logbook/openai-agents: every step an Agents SDK Runner turn, with a negative control.

import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { check } from './checker';
import { caseArbOf } from './arbitraries';
import type { AgentJ, CaseJ } from './spec';

const SEED = 23;

function actionsOf(c: CaseJ, effect: string | undefined): ReadonlyArray<{ fail: string }> {
  return effect ? c.agent.actions.map(() => ({ fail: 'none' })) : c.agent.actions;
}

/** Generated cases whose every step the Agents SDK drives (steps whose actions it cannot take call them in turn). */
function agentsOnly(base: fc.Arbitrary<CaseJ>, effect?: 'idempotent' | 'non-idempotent'): fc.Arbitrary<CaseJ> {
  return base.map((c) => {
    const agent: AgentJ = {
      ...c.agent,
      actions: effect
        ? c.agent.actions.map((x) => ({ ...x, effect, verify: effect === 'non-idempotent', approval: 'none' as const, fail: 'none' as const }))
        : c.agent.actions,
      // Only actions whose errors are deterministic: a transient error's report would depend on the attempt count.
      steps: c.agent.steps.map((s) => ({
        ...s,
        kind: s.calls.every((k) => ['none', 'definite'].includes(actionsOf(c, effect)[k.action]?.fail ?? '')) ? 'agents' : 'seq',
      })),
    };
    return { ...c, agent, schedule: effect ? { ops: c.schedule.ops.filter((o) => o.op === 'start' || o.op === 'resume') } : c.schedule };
  });
}

describe('exactly-once checker: the OpenAI Agents SDK surface', function () {
  this.timeout(900_000);

  it('finds no violation in 40 generated agents × schedules whose steps are Runner turns', async () => {
    const r = await check({ seed: SEED, runs: 40, arbitrary: agentsOnly(caseArbOf(false)), shrinkMs: 15_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('negative control: a verify that answers "not found" for an effect that landed is caught through the Runner', async () => {
    const r = await check({
      seed: SEED,
      runs: 60,
      sabotage: { verifyLies: true },
      arbitrary: agentsOnly(caseArbOf(false), 'non-idempotent').filter((c) => c.schedule.ops[0]?.op === 'start'),
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
      s.c.agent.steps.every((x) => x.kind === 'agents'),
      `found through a Runner turn:\n${r.text}`,
    );
  });
});
