// The exactly-once checker on agent-logbook/langgraph: generated agents whose steps make their calls from LangGraph
// nodes (logbookDo), under generated kills, resumes, forks and second drivers, against the same invariants; and a control.

import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { check } from './checker';
import { LogbookSaver } from 'agent-logbook/langgraph';
import { usePgServer } from '../pg/server';
import { agentArb, normalizeAgent, scheduleArb, scheduleArbOf } from './arbitraries';
import type { AgentJ, CaseJ, ScheduleJ } from './spec';

const SEED = 23;

function graphCases(kind: 'graph' | 'graph-raw-first', crashesOnly: boolean): fc.Arbitrary<CaseJ> {
  const agent: fc.Arbitrary<AgentJ> = agentArb.map((a) =>
    normalizeAgent({
      ...a,
      actions: crashesOnly
        ? a.actions.map((x) => ({ ...x, effect: 'non-idempotent' as const, verify: true, approval: 'none' as const, fail: 'none' as const }))
        : a.actions,
      steps: a.steps.map((s) => ({ ...s, kind })),
    }),
  );
  const schedule = crashesOnly
    ? scheduleArb.map((s) => ({ ops: s.ops.filter((o) => o.op === 'start' || o.op === 'resume') })).filter((s) => s.ops[0]?.op === 'start')
    : scheduleArb;
  // A fork point within the agent's steps, as caseArbOf gives it.
  return fc.record({ agent, schedule }).map((c): CaseJ => {
    const s = c.schedule as ScheduleJ;
    return { ...c, schedule: s.fork === undefined ? s : { ...s, fork: s.fork % c.agent.steps.length } };
  });
}

/** Agents whose whole run is one graph driven by runGraph: a node per step, each node execution a step of the run. */
function graphRunCases(shape: 'nodes' | 'nodes-raw-first', o: { readonly crashesOnly?: boolean; readonly processes?: boolean } = {}): fc.Arbitrary<CaseJ> {
  const agent: fc.Arbitrary<AgentJ> = agentArb.map((a) =>
    normalizeAgent({
      ...a,
      graph: shape,
      actions: o.crashesOnly
        ? a.actions.map((x) => ({ ...x, effect: 'non-idempotent' as const, verify: true, approval: 'none' as const, fail: 'none' as const }))
        : a.actions,
      steps: a.steps.map((s) => ({ ...s, kind: s.kind === 'all' ? 'all' : 'seq' })),
    }),
  );
  const schedules = scheduleArbOf(o.processes === true);
  const schedule = o.crashesOnly
    ? schedules.map((s) => ({ ops: s.ops.filter((x) => x.op === 'start' || x.op === 'resume') })).filter((s) => s.ops[0]?.op === 'start')
    : schedules;
  // Time travel needs the uncrashed run's outcome to be the travelling run's: no fault that fails a call only once.
  const travel = fc.option(fc.nat(3), { nil: undefined, freq: 2 });
  return fc.record({ agent, schedule, travel }).map((c): CaseJ => {
    const s = c.schedule as ScheduleJ;
    const once = c.agent.actions.some((a) => a.fail === 'transient-before' || a.fail === 'transient-after');
    const forked = s.fork === undefined ? s : { ...s, fork: s.fork % (c.agent.steps.length + 1) };
    return { agent: c.agent, schedule: c.travel === undefined || once || o.crashesOnly ? forked : { ...forked, travel: c.travel } };
  });
}

describe('exactly-once checker: LangGraph nodes (agent-logbook/langgraph)', function () {
  this.timeout(600_000);

  it(`finds no violation in 60 generated agents × schedules whose steps are graph nodes (seed ${SEED})`, async () => {
    const r = await check({ seed: SEED, runs: 60, arbitrary: graphCases('graph', false), shrinkMs: 10_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, r.text);
  });

  it(`finds no violation in 60 generated runs driven by runGraph, each node execution a step (kills, second drivers, forks, time travel and a fork of it; seed ${SEED})`, async () => {
    const r = await check({ seed: SEED, runs: 60, arbitrary: graphRunCases('nodes'), shrinkMs: 10_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, r.text);
  });

  it('negative control: a fork whose thread copy keeps none of the fork point’s writes runs an inherited node again (fork-redid)', async () => {
    // Sabotage: the copy drops the writes of the nodes the fork inherited, so LangGraph runs them again under the fork's keys.
    const real = Object.getOwnPropertyDescriptor(LogbookSaver.prototype, 'copyThread');
    Object.defineProperty(LogbookSaver.prototype, 'copyThread', {
      configurable: true,
      value: function (this: LogbookSaver, from: string, to: string, upto: string) {
        return (real?.value as LogbookSaver['copyThread']).call(this, from, to, upto, new Set());
      },
    });
    try {
      const cases = graphRunCases('nodes', { crashesOnly: true }).map((c) => ({
        ...c,
        agent: { ...c.agent, steps: [...c.agent.steps, ...c.agent.steps].slice(0, Math.max(2, c.agent.steps.length)) },
        schedule: { ops: [{ op: 'start', via: 'api' }], fork: 2 },
      }));
      const r = await check({ seed: SEED, runs: 30, arbitrary: cases, kinds: ['fork-redid'], firstOnly: true, shrinkKinds: 1, shrinkMs: 10_000 });
      assert.ok(r.shrunk[0], `a fork that ran an inherited node again went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    } finally {
      if (real) Object.defineProperty(LogbookSaver.prototype, 'copyThread', real);
    }
  });

  it('finds no violation in 6 schedules of real processes driving a graph (SIGKILL at --crash-at, a second CLI racing a live one, SIGSTOP past the lease)', async () => {
    const r = await check({ seed: SEED, runs: 6, processes: true, arbitrary: graphRunCases('nodes', { processes: true }), shrinkMs: 30_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, r.text);
  });

  it('negative control: under runGraph, a node that makes its effect itself makes it twice when a kill inside it runs it again', async () => {
    const r = await check({
      seed: SEED,
      runs: 60,
      arbitrary: graphRunCases('nodes-raw-first', { crashesOnly: true }),
      kinds: ['effect-twice'],
      firstOnly: true,
      shrinkKinds: 1,
      shrinkMs: 15_000,
    });
    const s = r.shrunk[0];
    assert.ok(s, `the node's own effect went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    assert.ok(
      s.result.violations.some((v) => v.kind === 'effect-twice'),
      r.text,
    );
  });

  it('negative control: an effect a node makes itself (not through logbookDo) happens twice when a crash in a later node re-runs the step', async () => {
    const r = await check({
      seed: SEED,
      runs: 60,
      arbitrary: graphCases('graph-raw-first', true),

      kinds: ['effect-twice'],
      firstOnly: true,
      shrinkKinds: 1,
      shrinkMs: 15_000,
    });
    const s = r.shrunk[0];
    assert.ok(s, `the node's own effect went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    assert.ok(
      s.result.violations.some((v) => v.kind === 'effect-twice'),
      r.text,
    );
  });
});

describe('exactly-once checker: runGraph on PostgreSQL', function () {
  this.timeout(900_000);
  const pg = usePgServer();

  it('finds no violation in 8 generated runs driven by runGraph on a real PostgreSQL server (kills, second drivers, forks, time travel)', async () => {
    const r = await check({ seed: SEED, runs: 8, db: pg.server.createDatabase(), arbitrary: graphRunCases('nodes'), shrinkMs: 10_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, r.text);
  });

  it('a CLI process driving a graph, frozen (SIGSTOP) past its lease inside a node, sends nothing when it wakes, after another took over', async () => {
    const frozen = graphRunCases('nodes', { crashesOnly: true }).map((c): CaseJ => ({
      agent: c.agent,
      schedule: { ops: [{ op: 'cli-pause-run', first: 'run', at: 0 }] },
    }));
    const r = await check({ seed: SEED, runs: 2, processes: true, arbitrary: frozen, db: pg.server.createDatabase(), shrinkMs: 10_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, r.text);
  });
});
