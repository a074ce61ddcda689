// fast-check generators of agents and schedules; independent of each other, so both shrink freely.

import fc from 'fast-check';
import type { ActionJ, AgentJ, CallJ, CaseJ, FieldKind, ScheduleJ, StepJ } from './spec';
import { STEP_KINDS } from './steps';
import { opArbitrary } from './operations';

/** Values with weights, shrinking towards the first (fc.oneof does not shrink across its branches). */
function weighted<T>(...choices: Array<readonly [T, number]>): fc.Arbitrary<T> {
  return fc.constantFrom(...choices.flatMap(([v, w]) => Array.from({ length: w }, () => v)));
}

const action: fc.Arbitrary<ActionJ> = fc.record({
  effect: fc.constantFrom('non-idempotent', 'idempotent', 'read-only'),
  verify: fc.boolean(),
  compensate: fc.boolean(),
  approval: weighted<ActionJ['approval']>(['none', 10], ['approve', 1], ['reject', 1]),
  fail: weighted<ActionJ['fail']>(['none', 9], ['definite', 1], ['transient-before', 1], ['transient-after', 1]),
});

const call: fc.Arbitrary<CallJ> = fc.record({
  action: fc.nat(3),
  n: fc.nat(2),
  mode: weighted<CallJ['mode']>(['use', 6], ['ignore', 1], ['catch', 1]),
});

const plainStep: fc.Arbitrary<StepJ> = fc.record({
  kind: weighted<string>(['seq', 4], ['all', 2], ['ai', 1], ['agents', 1], ['wait', 1], ['child', 1]),
  calls: fc.array(call, { minLength: 1, maxLength: 3 }),
});

// A durable sleep before some steps: short, so a schedule's kills and resumes land before, in and after it.
const step: fc.Arbitrary<StepJ> = fc
  .record({ step: plainStep, sleepMs: fc.option(fc.constantFrom(0, 20, 60), { nil: undefined, freq: 4 }) })
  .map(({ step: st, sleepMs }) => (sleepMs === undefined ? st : { ...st, sleepMs }));

/**
 * Keeps a generated agent meaningful: read-only actions have no verify, inverse or gate; a caught error is reported
 * only when it is deterministic (a transient error's report would depend on how many attempts a call took); a step
 * kind gets only the actions it accepts (else it makes its calls one after another).
 */
export function normalizeAgent(a: AgentJ): AgentJ {
  const actions = a.actions.map((x): ActionJ => {
    if (x.effect !== 'read-only') return x;
    return { ...x, verify: false, compensate: false, approval: 'none', fail: x.fail === 'transient-after' ? 'transient-before' : x.fail };
  });
  const steps = a.steps.map((s): StepJ => {
    // A wait makes no calls; its first call's n picks one of two event names, so two waits may share one.
    if (s.kind === 'wait') return { kind: 'wait', calls: [], event: (s.calls[0]?.n ?? 0) % 2 };
    const calls = s.calls
      .map((c) => ({ ...c, action: c.action % actions.length }))
      .map((c) => {
        const act = actions[c.action];
        const deterministic = act !== undefined && (act.fail === 'none' || act.fail === 'definite');
        return c.mode === 'catch' && !deterministic ? { ...c, mode: 'ignore' as const } : c;
      });
    const accepts = STEP_KINDS[s.kind]?.accepts;
    const kind = accepts && !calls.every((c) => actions[c.action] !== undefined && accepts(actions[c.action] as ActionJ)) ? 'seq' : s.kind;
    // A child waits for an event before its calls in one case of three (its first call's n is 0): the parent waits for it.
    const childWaits = kind === 'child' && (s.calls[0]?.n ?? 1) === 0;
    return { kind, calls, ...(childWaits ? { event: 0 } : {}), ...(s.sleepMs !== undefined ? { sleepMs: s.sleepMs } : {}) };
  });
  return { ...a, actions, steps };
}

function agentsOf(steps: fc.Arbitrary<StepJ>): fc.Arbitrary<AgentJ> {
  return fc
    .record({
      fields: fc.array(fc.constantFrom<FieldKind>('plain', 'dollars', 'default', 'coerce'), { maxLength: 3 }),
      onFailure: fc.constantFrom('stop' as const, 'compensate' as const),
      actions: fc.array(action, { minLength: 1, maxLength: 4 }),
      steps: fc.array(steps, { minLength: 1, maxLength: 4 }),
    })
    .map(normalizeAgent);
}

export const agentArb: fc.Arbitrary<AgentJ> = agentsOf(step);
/** Agents without sleeps, drawn as before sleeps existed: the controls that shrink to one step keep their seeds' cases. */
export const agentArbWithoutSleeps: fc.Arbitrary<AgentJ> = agentsOf(plainStep);

/** The schedules of `--workers`: a run queued for workers, then any process operations (a worker resuming among them). */
export const WORKER_STARTS = (name: string): boolean => name.startsWith('worker-');

/**
 * A schedule of in-process operations, or (`processes`) of real child processes, which take seconds each. `starts`:
 * the operations it may start with (by name).
 */
export function scheduleArbOf(processes: boolean, starts: (name: string) => boolean = () => true): fc.Arbitrary<ScheduleJ> {
  return fc
    .record({
      first: opArbitrary(true, processes, starts),
      rest: fc.array(opArbitrary(false, processes), { maxLength: processes ? 2 : 3 }),
      fork: fc.option(fc.nat(3), { nil: undefined, freq: 2 }),
    })
    .map(({ first, rest, fork }) => ({ ops: [first, ...rest], ...(fork !== undefined ? { fork } : {}) }));
}

export function caseArbOf(processes: boolean, starts?: (name: string) => boolean): fc.Arbitrary<CaseJ> {
  return fc.record({ agent: agentArb, schedule: scheduleArbOf(processes, starts) }).map((c) => ({
    ...c,
    schedule: c.schedule.fork === undefined ? c.schedule : { ...c.schedule, fork: c.schedule.fork % c.agent.steps.length },
  }));
}

export const scheduleArb = scheduleArbOf(false);
export const caseArb = caseArbOf(false);
