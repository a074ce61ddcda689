// The exactly-once checker in the suite: a fixed seed's generated schedules must show no violation; the controls must.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import fc from 'fast-check';
import { check } from './checker';
import { agentArb, agentArbWithoutSleeps, caseArbOf, scheduleArb } from './arbitraries';
import { runCase } from './executor';
import { inScratch, scratchDir } from './checker';
import { oneChargeAgent, type AgentJ, type CaseJ, type ScheduleJ } from './spec';
import { RunWriter } from '../../src/runtime/store/writer';
import { RowWrites, type RowOp } from '../../src/runtime/store/rowOps';
import { JournalReader } from '../../src/runtime/store/reader';
import { withPageErrorsSwallowed, withoutCheckBefore } from '../store/damageControls';
import { MIGRATIONS, type Migration } from '../../src/runtime/store/migrations';
import { MIGRATE_STATS, resetMigrateStats } from './migrateOps';
import { DAMAGE_STATS, resetDamageStats } from './damageOps';

/** Reproducible in CI; `npm run check:exactly-once -- --runs 10000` tries many more, with a fresh seed each time. */
const SEED = 19;
const SCHEDULES = 300;

/** Kills and resumes only (no second driver, no fork): the surfaces the controls sabotage, nothing else. */
function crashesOnly(effect: 'idempotent' | 'non-idempotent'): fc.Arbitrary<CaseJ> {
  // No sleeps: they are not what these controls sabotage, and the cases their seed shrinks are the ones it always did.
  const agent: fc.Arbitrary<AgentJ> = agentArbWithoutSleeps.map((a) => ({
    ...a,
    // An idempotent action is re-executed with its key (verify would answer first); a non-idempotent one is verified.
    actions: a.actions.map((x) => ({ ...x, effect, verify: effect === 'non-idempotent', approval: 'none' as const, fail: 'none' as const })),
  }));
  const schedule: fc.Arbitrary<ScheduleJ> = scheduleArb
    .map((s) => ({ ops: s.ops.filter((o) => o.op === 'start' || o.op === 'resume') }))
    .filter((s) => s.ops[0]?.op === 'start');
  return fc.record({ agent, schedule });
}

/** A case a long run found, replayed (see inScratch). */
async function replayCase(json: string): ReturnType<typeof runCase> {
  return inScratch(JSON.parse(json) as CaseJ);
}

describe('exactly-once checker', function () {
  this.timeout(900_000);

  it(`finds no violation in ${SCHEDULES} generated agents × schedules (seed ${SEED})`, async () => {
    resetMigrateStats();
    resetDamageStats();
    const r = await check({ seed: SEED, runs: SCHEDULES, shrinkMs: 15_000, shrinkKinds: 4 });
    const m = { ...MIGRATE_STATS };
    const d = { ...DAMAGE_STATS };
    console.log(
      `      the journal put back to schema 9 and migrated again ${m.ops} times (${m.threadMigrated} upgraded by a second opener's thread, ${m.driverMigrated} by the driver while that thread waited) in ${(r.ms / 1000).toFixed(1)} s`,
    );
    console.log(`      an action key damaged before a resume ${d.damaged} times in ${d.ops} damage operations, the resume refused ${d.refused} times`);
    console.log(
      `      a killed run's unfolded writes damaged ${d.logDamaged} times in ${d.logOps} operations, the resume or compensation refused ${d.logRefused} times`,
    );
    assert.equal(r.schedules, SCHEDULES);
    assert.equal(r.violating, 0, `\n${r.text}`);
    // A seed that never raced two openers would say nothing of the upgrade's lock.
    assert.ok(m.ops >= 20 && m.threadMigrated > 0 && m.driverMigrated > 0, JSON.stringify(m));
    // A seed that never damaged a key a resume reads would say nothing of the check before the attempt.
    assert.ok(d.damaged >= 3, JSON.stringify(d));
    // And one that never damaged a killed run's unfolded writes, nothing of the fold's read-back.
    assert.ok(d.logDamaged >= 3, JSON.stringify(d));
  });

  it('finds no violation in 8 schedules of real processes (the CLI and workers: real SIGKILL at --crash-at, a second CLI racing a live one)', async () => {
    const r = await check({ seed: SEED, runs: 8, processes: true, shrinkMs: 30_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('finds no violation in 6 schedules started in the debugger (the built adapter and its runner: crashAt, a breakpoint on every step, stepping)', async () => {
    const r = await check({
      seed: SEED,
      runs: 6,
      processes: true,
      arbitrary: caseArbOf(true, (name) => name.startsWith('dap-')),
      shrinkMs: 30_000,
      shrinkKinds: 2,
    });
    assert.equal(r.schedules, 6);
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('negative control: through the debugger, a verify that answers "not found" for a charge that landed is caught as a charge made twice', async () => {
    // Killed by crashAt after the charge's execute returned and before its commit; the debugger's resume reconciles it
    // with verify, which lies, so the charge runs again. The same case with an honest provider is innocent.
    const c: CaseJ = {
      agent: oneChargeAgent(),
      schedule: {
        ops: [
          { op: 'dap-run', armed: 'every-step-next', crash: { point: 4, target: 0, occurrence: 1 } },
          { op: 'dap-resume', armed: 'defaults' },
        ],
      },
    };
    const lied = await inScratch(c, { processes: true, sabotage: { verifyLies: true } });
    assert.ok(
      lied.log.some((l) => l.includes('killed charge.0#1@after-execute')),
      lied.log.join('\n'),
    );
    assert.ok(
      lied.violations.some((v) => v.kind === 'effect-twice'),
      `a lying verify through the debugger went unnoticed: ${JSON.stringify(lied.violations)}\n${lied.log.join('\n')}`,
    );
    const honest = await inScratch(c, { processes: true });
    assert.deepEqual(honest.violations, [], honest.log.join('\n'));
  });

  it('a transient fault spent by a killed attempt: the resumed run is held to an uncrashed run in the world it left (seed 20261201, path 2289)', async () => {
    // Found by the 10,000-schedule run: the uncrashed run fails at the lookup's one transient fault and compensates;
    // killed while that step waited for its charge, the first attempt spent the fault without failing, so the resumed
    // run gets through. Held to the fresh world's outcome it was a false "status differs".
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"compensate","actions":[{"effect":"read-only","verify":false,"compensate":false,"approval":"none","fail":"transient-before"},{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"none"}],"steps":[{"kind":"all","calls":[{"action":1,"n":0,"mode":"use"},{"action":0,"n":0,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api","crash":{"at":"provider","n":1,"when":"after-effect"}}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.equal(r.baseline.status, 'compensated');
    assert.ok(
      r.log.some((l) =>
        l.startsWith(
          'ended as an uncrashed run does once the transient faults a killed attempt spent, or kept from happening, are gone (before:lookup.0:0): completed',
        ),
      ),
      r.log.join('\n'),
    );
  });

  it("a killed run's unfolded writes damaged before anything reads them: the resume is refused and writes nothing; control: the event lost instead, which no reader can tell, charges twice", async () => {
    // Four charges in one step: killed after the first, resumed and killed after the third (its writes in the log, not
    // folded yet), and the newest such event's writes damaged each way the operation knows.
    const json = (how: string): string =>
      `{"agent":{"fields":[],"onFailure":"compensate","actions":[{"effect":"non-idempotent","verify":false,"compensate":true,"approval":"none","fail":"none"}],"steps":[{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"},{"action":0,"n":1,"mode":"use"},{"action":0,"n":2,"mode":"use"},{"action":0,"n":3,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api","crash":{"at":"provider","n":0,"when":"after-effect"}},{"op":"damage-log","via":"engine","n":1,"when":"after-effect","how":"${how}"}]}}`;
    for (const how of ['not-json', 'unknown-write', 'value-cut']) {
      const r = await replayCase(json(how));
      assert.deepEqual(r.violations, [], r.log.join('\n'));
      assert.ok(
        r.log.some((l) => /writes damaged \([a-z-]+\): refused \[LB_JOURNAL_INVALID\]/.test(l)),
        r.log.join('\n'),
      );
    }
    const dir = scratchDir();
    const lost = await runCase(JSON.parse(json('not-json')) as CaseJ, { dir, sabotage: { logDamageLost: true } }).finally(() =>
      fs.rmSync(dir, { recursive: true, force: true }),
    );
    const kinds = lost.violations.map((v) => v.kind);
    assert.ok(kinds.includes('damage-not-refused') && kinds.includes('effect-twice'), lost.log.join('\n'));
  });

  it('a compensating run whose unfolded writes are damaged: the compensation is refused as a damaged journal, not run over the missing rows (seed 1816622851, path 395)', async () => {
    // Its one reservation fails once, so the run compensates; killed before the inverse, it is left compensating.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"compensate","actions":[{"effect":"idempotent","verify":false,"compensate":true,"approval":"none","fail":"transient-before"}],"steps":[{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start-damage-log","via":"api","n":1,"when":"before-effect","how":"not-json"}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(
      r.log.some((l) => /^compensate \(host API\) with event #\d+'s writes damaged \(not-json\): refused \[LB_JOURNAL_INVALID\]$/.test(l)),
      r.log.join('\n'),
    );
  });

  it("a fork that redoes a call an inherited step made is not held to its origin's outcome: under its own id the key is new (seed 1816622851, path 620)", async () => {
    // The origin's second call of charge.0 (n=0) is its first by key; the fork's is a new charge, whose gate rejects it.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"stop","actions":[{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"reject","fail":"none"}],"steps":[{"kind":"agents","calls":[{"action":0,"n":0,"mode":"use"}]},{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api"}],"fork":1}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(
      r.log.some((l) => l.startsWith("not held to the uncrashed run's outcome: the fork redoes action 0 (n=0)")),
      r.log.join('\n'),
    );
  });

  it("a resume over an action key stored as a BLOB is refused and runs nothing again; controls: without the check before the attempt it is not refused, and without replay's page error too it charges twice", async () => {
    // The damage operation on a fixed case: killed before its second charge, the run's first charge (committed, in the
    // step a resume redoes) has its key flipped to a BLOB of the same bytes, which hides the row from the lookup by key.
    const json =
      '{"agent":{"fields":[],"onFailure":"stop","actions":[{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"none"}],"steps":[{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"},{"action":0,"n":1,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api","crash":{"at":"provider","n":1,"when":"before-effect"}},{"op":"damage-key","via":"engine","pick":0}]}}';
    const r = await replayCase(json);
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(
      r.log.some((l) => /key stored as a BLOB: refused \[LB_JOURNAL_INVALID\]/.test(l)),
      r.log.join('\n'),
    );
    // The check taken out: the resume writes before it stops (at the page that hid the row), so it is not refused.
    const c = await withoutCheckBefore(() => replayCase(json));
    const kinds = c.violations.map((v) => v.kind);
    assert.ok(kinds.includes('damage-not-refused') && !kinds.includes('effect-twice'), c.log.join('\n'));
    // And replay's page error swallowed too, as before: the hidden charge runs again.
    const both = await withPageErrorsSwallowed(() => withoutCheckBefore(() => replayCase(json)));
    assert.ok(
      both.violations.some((v) => v.kind === 'effect-twice'),
      both.log.join('\n'),
    );
  });

  it("a resume that decides the parent's actions resumes its child without them: the child refused them, which failed and compensated the parent (seed 240702006, path 835)", async () => {
    // Found by a 1,000-schedule run: the parent's own in-doubt charge was decided on resume, and run.child resumed the
    // waiting child with the same decisions; the child refused one for an action it does not have (LB_ACTION_NOT_FOUND),
    // and that refusal became the parent's failure, which its onFailure compensated.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"compensate","actions":[{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"transient-after"}],"steps":[{"kind":"seq","calls":[{"action":0,"n":0,"mode":"ignore"},{"action":0,"n":1,"mode":"ignore"}]},{"kind":"child","calls":[{"action":0,"n":0,"mode":"use"}],"event":0}]},"schedule":{"ops":[{"op":"start","via":"api"},{"op":"resume","via":"api"}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(!r.log.some((l) => l.includes('LB_ACTION_NOT_FOUND')), r.log.join('\n'));
  });

  it('an idempotent action in doubt at a cancel, redone with its key and undone by the compensation after it, is the contract, not a late effect (seed 1238382625, path 658)', async () => {
    // Found by a 1,000-schedule run: docs/contract.md settles such an action (an inverse, no verify) by executing it
    // again with its key and then undoing it; the check held every effect after a cancel to have been in flight then.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"stop","actions":[{"effect":"idempotent","verify":false,"compensate":true,"approval":"none","fail":"none"}],"steps":[{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"}],"sleepMs":0}]},"schedule":{"ops":[{"op":"start","via":"engine","crash":{"at":"fault","n":5}},{"op":"cancel","via":"api","compensate":false},{"op":"compensate","via":"api"}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(
      r.log.some((l) => /compensate \(host API\): compensated/.test(l)),
      r.log.join('\n'),
    );
  });

  it('a cancel with compensate never makes an effect nothing undoes: an idempotent action in doubt with no inverse is not redone (seed 833822713, path 361)', async () => {
    // Found by a 1,000-schedule run: killed before either of an AI step's two calls reached its provider, the run was
    // cancelled with compensate, and settling the second call (in doubt) redid it with its key: a new effect, after
    // the cancel, with no compensate to undo it. The policy now leaves such an action irreversible, not redone.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"stop","actions":[{"effect":"idempotent","verify":false,"compensate":false,"approval":"none","fail":"none"}],"steps":[{"kind":"ai","calls":[{"action":0,"n":0,"mode":"use"},{"action":0,"n":1,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api","crash":{"at":"provider","n":0,"when":"before-effect"}},{"op":"cancel","via":"api","compensate":true}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(
      r.log.some((l) => /cancel --compensate .*: compensated/.test(l)),
      r.log.join('\n'),
    );
  });

  it('a race whose second sends every event, the first never reaching its provider call: a kept event before a refused one is no refusal that changed the run (seed 833822713, path 861)', async () => {
    // Found by a 1,000-schedule run: the batch's last answer (e0 refused: the child waits for it) was checked as the
    // answer of the whole batch, against a diff holding e1, kept just before. Each send is checked on its own.
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"stop","actions":[{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"none"}],"steps":[{"kind":"child","calls":[{"action":0,"n":0,"mode":"use"}],"event":0},{"kind":"wait","calls":[],"event":1},{"kind":"wait","calls":[],"event":0},{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api"},{"op":"race","second":"send","at":0,"when":"before-effect"}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.ok(r.log.includes('send e1#0 (journal.send): kept'), r.log.join('\n'));
    assert.ok(
      r.log.some((l) => l.startsWith('send e0#0 (journal.send): refused [LB_EVENT_REFUSED]')),
      r.log.join('\n'),
    );
  });

  it("a child's failure that left its action in doubt is no failure the parent's onFailure compensates: resuming the parent reconciles it", async () => {
    // The child's non-idempotent call got a 502 after its request went through: the child failed with it in doubt, and
    // the parent (ChildRunFailedError) was compensated, since only its own actions were asked whether one was in doubt.
    // A resume of that compensation's stop for a decision went forward instead and completed: "status differs".
    const r = await replayCase(
      '{"agent":{"fields":[],"onFailure":"compensate","actions":[{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"transient-after"},{"effect":"non-idempotent","verify":false,"compensate":false,"approval":"none","fail":"none"}],"steps":[{"kind":"child","calls":[{"action":0,"n":1,"mode":"use"}]},{"kind":"seq","calls":[{"action":0,"n":0,"mode":"use"}]}]},"schedule":{"ops":[{"op":"start","via":"api"},{"op":"resume","via":"api"}]}}',
    );
    assert.deepEqual(r.violations, [], r.log.join('\n'));
    assert.equal(r.baseline.status, 'completed');
    assert.ok(
      r.log.some((l) => l.startsWith('start (host API): failed (LB_CHILD_FAILED')),
      r.log.join('\n'),
    );
  });

  /** Agents with at least one run.child step, whose actions neither fail nor wait at a gate (so every case ends). */
  const withChild = (effects: boolean): fc.Arbitrary<AgentJ> =>
    agentArb
      .map((a) =>
        effects
          ? {
              ...a,
              actions: a.actions.map((x) => ({ ...x, effect: 'non-idempotent' as const, compensate: true, approval: 'none' as const, fail: 'none' as const })),
            }
          : a,
      )
      .filter((a) => a.steps.some((st) => st.kind === 'child' && st.calls.length > 0));

  it('finds no violation in 60 generated schedules of agents that start child runs (run.child)', async () => {
    // As caseArbOf does: a fork's step is one the agent has.
    const cases = fc
      .record({ agent: withChild(false), schedule: scheduleArb })
      .map((c) => ({ ...c, schedule: c.schedule.fork === undefined ? c.schedule : { ...c.schedule, fork: c.schedule.fork % c.agent.steps.length } }));
    const r = await check({ seed: SEED, runs: 60, arbitrary: cases, shrinkMs: 15_000, shrinkKinds: 3 });
    assert.equal(r.schedules, 60);
    assert.equal(r.violating, 0, `\n${r.text}`);
  });

  it('negative control: catches a parent that names its child by the attempt, so a resume starts a second one (child-twice)', async () => {
    const schedule: fc.Arbitrary<ScheduleJ> = fc.nat(3).map((n) => ({
      ops: [
        { op: 'start', via: 'api', crash: { at: 'provider', n, when: 'after-effect' } },
        { op: 'resume', via: 'api' },
      ],
    }));
    const r = await check({
      seed: SEED,
      runs: 40,
      sabotage: { childIdPerAttempt: true },
      arbitrary: fc.record({ agent: withChild(true), schedule }),
      kinds: ['child-twice'],
      firstOnly: true,
      shrinkKinds: 1,
      shrinkMs: 10_000,
    });
    assert.ok(r.shrunk[0], `a second child at the same place went unnoticed in ${r.schedules} schedules:\n${r.text}`);
  });

  it('negative control: catches a compensation that forgets the children (effect-not-compensated)', async () => {
    const real = Object.getOwnPropertyDescriptor(JournalReader.prototype, 'children');
    Object.defineProperty(JournalReader.prototype, 'children', { configurable: true, writable: true, value: () => [] });
    try {
      const schedule: fc.Arbitrary<ScheduleJ> = fc.constant({
        ops: [
          { op: 'start', via: 'api' },
          { op: 'compensate', via: 'api' },
        ],
      });
      const r = await check({
        seed: SEED,
        runs: 30,
        arbitrary: fc.record({ agent: withChild(true), schedule }),
        kinds: ['effect-not-compensated'],
        firstOnly: true,
        shrinkKinds: 1,
        shrinkMs: 10_000,
      });
      const s = r.shrunk[0];
      assert.ok(s, `a compensation that leaves children undone went unnoticed in ${r.schedules} schedules:\n${r.text}`);
      assert.ok(
        s.result.violations.some((v) => v.kind === 'effect-not-compensated' && /\.child-\d+:/.test(v.detail)),
        r.text,
      );
    } finally {
      if (real) Object.defineProperty(JournalReader.prototype, 'children', real);
    }
  });

  it('negative control: catches a runtime that ignores a cancel (effect-after-cancel)', async () => {
    // Sabotage: the writer never reports the cancel it read, so the run goes on past its next boundary.
    const real = Object.getOwnPropertyDescriptor(RunWriter.prototype, 'cancelRequest');
    Object.defineProperty(RunWriter.prototype, 'cancelRequest', { configurable: true, get: () => undefined });
    try {
      const agent = agentArb
        .map((a) => ({ ...a, actions: a.actions.map((x) => ({ ...x, approval: 'none' as const, fail: 'none' as const })) }))
        .filter((a) => a.steps.reduce((n, st) => n + st.calls.length, 0) >= 2);
      const schedule: fc.Arbitrary<ScheduleJ> = fc.constant({
        ops: [
          { op: 'start', via: 'api', crash: { at: 'provider', n: 0, when: 'after-effect' } },
          { op: 'race-cancel', second: 'cancel', at: 0, when: 'after-effect' },
        ],
      });
      const r = await check({
        seed: SEED,
        runs: 40,
        arbitrary: fc.record({ agent, schedule }),
        kinds: ['effect-after-cancel'],
        firstOnly: true,
        shrinkKinds: 1,
        shrinkMs: 10_000,
      });
      assert.ok(r.shrunk[0], `a runtime that ignores cancels went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    } finally {
      if (real) Object.defineProperty(RunWriter.prototype, 'cancelRequest', real);
    }
  });

  /**
   * Checks crash schedules of non-idempotent actions for `kind` while `patch` is in force (it returns its undo), asserts
   * it was caught, and that the shrunk case is innocent once the patch is undone.
   */
  async function caughtWhile(patch: () => () => void, kind: string, what: string): Promise<void> {
    const undo = patch();
    let found: Awaited<ReturnType<typeof check>>;
    try {
      found = await check({ seed: SEED, runs: 20, arbitrary: crashesOnly('non-idempotent'), kinds: [kind], firstOnly: true, shrinkKinds: 1, shrinkMs: 10_000 });
    } finally {
      undo();
    }
    const s = found.shrunk[0];
    assert.ok(s, `${what} went unnoticed in ${found.schedules} schedules:\n${found.text}`);
    const honest = await inScratch(s.c);
    assert.deepEqual(honest.violations, [], honest.log.join('\n'));
  }

  it('negative control: catches a journal that counts a call of execute twice (counted-not-called)', async () => {
    const proto = RunWriter.prototype as unknown as { actionExecuting: (this: RunWriter, stepIdx: number, id: string) => void };
    await caughtWhile(
      () => {
        const held = proto.actionExecuting;
        proto.actionExecuting = function (this: RunWriter, stepIdx: number, id: string) {
          held.call(this, stepIdx, id);
          held.call(this, stepIdx, id);
        };
        return () => (proto.actionExecuting = held);
      },
      'counted-not-called',
      'a journal counting each call twice',
    );
  });

  it('negative control: catches a fold that loses a write (fold-differs)', async () => {
    // The rows as read then lack each call's count, which the log carries: a fold applying its writes incompletely.
    const proto = RowWrites.prototype as unknown as { apply: (this: RowWrites, runId: string, seq: number, op: RowOp) => { changes: number } };
    await caughtWhile(
      () => {
        const held = proto.apply;
        proto.apply = function (this: RowWrites, runId: string, seq: number, op: RowOp) {
          return op[0] === 'actionExecuting' ? { changes: 1 } : held.call(this, runId, seq, op);
        };
        return () => (proto.apply = held);
      },
      'fold-differs',
      'a fold losing writes',
    );
  });

  it('negative control: catches a sleep that journals its wake time and does not wait for it (woke-early)', async () => {
    // Every step slept before: long enough that the step after a sleep that does not wait starts well before its wake time.
    const agent = agentArb.map((a) => ({
      ...a,
      actions: a.actions.map((x) => ({ ...x, approval: 'none' as const, fail: 'none' as const })),
      steps: a.steps.slice(0, 2).map((st) => ({ ...st, sleepMs: 300 })),
    }));
    const r = await check({
      seed: SEED,
      runs: 6,
      sabotage: { sleepNoWait: true },
      arbitrary: fc.record({ agent, schedule: fc.constant({ ops: [{ op: 'start', via: 'api' }] }) }),
      kinds: ['woke-early'],
      firstOnly: true,
      shrinkKinds: 1,
      shrinkMs: 10_000,
    });
    const s = r.shrunk[0];
    assert.ok(s, `a sleep that does not wait went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    // With run.sleep itself the same case is innocent.
    const honest = await inScratch(s.c);
    assert.deepEqual(honest.violations, [], honest.log.join('\n'));
  });

  it('negative control: catches a sleep deaf to a cancel, which waits its wake time out (cancel-waited-out-sleep)', async () => {
    const c: CaseJ = {
      agent: {
        fields: [],
        onFailure: 'stop',
        actions: [{ effect: 'idempotent', verify: false, compensate: true, approval: 'none', fail: 'none' }],
        steps: [
          { kind: 'seq', calls: [{ action: 0, n: 0, mode: 'use' }] },
          { kind: 'seq', calls: [{ action: 0, n: 1, mode: 'use' }], sleepMs: 0 },
        ],
      },
      schedule: { ops: [{ op: 'start-sleep-cancel', via: 'api', compensate: true }] },
    };
    const dir = scratchDir();
    try {
      const deaf = await runCase(c, { dir, sabotage: { sleepDeaf: true } });
      assert.ok(
        deaf.violations.some((v) => v.kind === 'cancel-waited-out-sleep'),
        `a sleep deaf to a cancel went unnoticed: ${JSON.stringify(deaf.violations)}\n${deaf.log.join('\n')}`,
      );
      const honest = await runCase(c, { dir });
      assert.deepEqual(honest.violations, [], honest.log.join('\n'));
      assert.ok(
        honest.log.some((l) => /^cancel --compensate \(host API\) while the run sleeps in step #2: compensated$/.test(l)),
        honest.log.join('\n'),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('run.waitFor in the schedules: agents that wait, events sent early, late, twice, racing a resume, by a killed CLI; each delivered once, none lost', async () => {
    // Agents with at least one wait; schedules as generated, plus sends. The fixed-seed run above draws waits too.
    const agent = agentArb.filter((a) => a.steps.some((st) => st.kind === 'wait'));
    const withSend = scheduleArb.map((sc) => ({ ...sc, ops: [...sc.ops, { op: 'send' }] }));
    const cases = fc
      .record({ agent, schedule: fc.oneof(scheduleArb, withSend) })
      .map((c) => ({ ...c, schedule: c.schedule.fork === undefined ? c.schedule : { ...c.schedule, fork: c.schedule.fork % c.agent.steps.length } }));
    const r = await check({ seed: SEED, runs: 60, arbitrary: cases, shrinkMs: 15_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
    const p = await check({
      seed: SEED,
      runs: 4,
      processes: true,
      arbitrary: fc.record({
        agent: agent.map((a) => ({ ...a, steps: a.steps.map((st) => (st.kind === 'ai' || st.kind === 'agents' ? { ...st, kind: 'seq' } : st)) })),
        schedule: fc.record({ crash: fc.boolean() }).map(({ crash }) => ({ ops: [{ op: 'cli-run' }, { op: 'cli-send', crash }] })),
      }),
      shrinkMs: 30_000,
      shrinkKinds: 1,
    });
    assert.equal(p.violating, 0, `\n${p.text}`);
  });

  it('logbook send or approve racing a resume or a compensate in another process: what it gave is kept and it is not refused; negative control: a giver that keeps and then answers refused is caught', async () => {
    const cliOnly = (a: AgentJ): AgentJ => ({ ...a, steps: a.steps.map((st) => (st.kind === 'ai' || st.kind === 'agents' ? { ...st, kind: 'seq' } : st)) });
    const waits = agentArb.filter((a) => a.steps.some((st) => st.kind === 'wait')).map((a) => ({ agent: cliOnly(a), give: 'send' }));
    const gated = agentArb
      .filter((a) => a.steps.some((st) => st.kind !== 'agents-run' && st.calls.some((c) => (a.actions[c.action]?.approval ?? 'none') !== 'none')))
      .map((a) => ({ agent: cliOnly(a), give: 'approve' }));
    const cases = (control: boolean): fc.Arbitrary<CaseJ> =>
      fc.record({ given: fc.oneof(waits, gated), second: fc.constantFrom('resume', 'compensate') }).map(({ given, second }) => ({
        agent: given.agent,
        schedule: { ops: [{ op: 'cli-run' }, { op: 'cli-give-race', give: given.give, second, ...(control ? { control: 'refused-after-keep' } : {}) }] },
      }));
    const r = await check({ seed: SEED, runs: 6, processes: true, arbitrary: cases(false), shrinkMs: 30_000, shrinkKinds: 1 });
    assert.equal(r.violating, 0, `\n${r.text}`);
    const c = await check({ seed: SEED, runs: 4, processes: true, arbitrary: cases(true), shrinkMs: 0, shrinkKinds: 0 });
    assert.ok(c.kinds.has('refusal-changed-run'), `the negative control was not caught:\n${c.text}`);
  });

  it('run.child whose child waits for an event: the parent waits for its child; the operator and `logbook send` (killed after the delivery) send to the child; every effect once, each event once', async () => {
    const childWaits = (a: AgentJ): boolean => a.steps.some((st) => st.kind === 'child' && st.event !== undefined);
    const agent = agentArb.filter(childWaits);
    const cases = fc
      .record({ agent, schedule: scheduleArb })
      .map((c) => ({ ...c, schedule: c.schedule.fork === undefined ? c.schedule : { ...c.schedule, fork: c.schedule.fork % c.agent.steps.length } }));
    const r = await check({ seed: SEED, runs: 30, arbitrary: cases, shrinkMs: 15_000, shrinkKinds: 2 });
    assert.equal(r.violating, 0, `\n${r.text}`);
    const p = await check({
      seed: SEED,
      runs: 3,
      processes: true,
      arbitrary: fc.record({
        agent: agent.map((a) => ({ ...a, steps: a.steps.map((st) => (st.kind === 'ai' || st.kind === 'agents' ? { ...st, kind: 'seq' } : st)) })),
        schedule: fc.record({ crash: fc.boolean() }).map(({ crash }) => ({ ops: [{ op: 'cli-run' }, { op: 'cli-send', crash }] })),
      }),
      shrinkMs: 30_000,
      shrinkKinds: 1,
    });
    assert.equal(p.violating, 0, `\n${p.text}`);
  });

  it('negative control: an event a child run leaves untaken is caught in the child (event-lost), not only in its parent', async () => {
    const real = Object.getOwnPropertyDescriptor(RunWriter.prototype, 'eventDelivered');
    Object.defineProperty(RunWriter.prototype, 'eventDelivered', {
      configurable: true,
      value: function (this: RunWriter, idx: number, _seq: number, result: string): void {
        this.stepCompleted(idx, result);
      },
    });
    try {
      const c: CaseJ = {
        agent: {
          fields: [],
          onFailure: 'stop',
          actions: [{ effect: 'idempotent', verify: false, compensate: false, approval: 'none', fail: 'none' }],
          steps: [{ kind: 'child', calls: [{ action: 0, n: 0, mode: 'use' }], event: 0 }],
        },
        schedule: { ops: [{ op: 'start', via: 'api' }] },
      };
      const dir = scratchDir();
      try {
        const sabotaged = await runCase(c, { dir });
        assert.ok(
          sabotaged.violations.some((v) => v.kind === 'event-lost' && /\.child-/.test(v.detail)),
          `an event left pending in a child went unnoticed: ${JSON.stringify(sabotaged.violations)}\n${sabotaged.log.join('\n')}`,
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      if (real) Object.defineProperty(RunWriter.prototype, 'eventDelivered', real);
    }
    const dir = scratchDir();
    try {
      const honest = await runCase(
        {
          agent: {
            fields: [],
            onFailure: 'stop',
            actions: [{ effect: 'idempotent', verify: false, compensate: false, approval: 'none', fail: 'none' }],
            steps: [{ kind: 'child', calls: [{ action: 0, n: 0, mode: 'use' }], event: 0 }],
          },
          schedule: { ops: [{ op: 'start', via: 'api' }] },
        },
        { dir },
      );
      assert.deepEqual(honest.violations, [], honest.log.join('\n'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('negative control: catches a runtime that delivers an event without taking it from the inbox (event-held-not-taken)', async () => {
    // Sabotage: the wait's step completes with the event, but the event stays pending, so a later wait of the same name
    // takes it again.
    const real = Object.getOwnPropertyDescriptor(RunWriter.prototype, 'eventDelivered');
    Object.defineProperty(RunWriter.prototype, 'eventDelivered', {
      configurable: true,
      value: function (this: RunWriter, idx: number, _seq: number, result: string): void {
        this.stepCompleted(idx, result);
      },
    });
    try {
      const agent = agentArb.map((a) => ({
        ...a,
        actions: a.actions.map((x) => ({ ...x, approval: 'none' as const, fail: 'none' as const })),
        steps: [...a.steps, { kind: 'wait', calls: [], event: 0 }, { kind: 'wait', calls: [], event: 0 }],
      }));
      const r = await check({
        seed: SEED,
        runs: 20,
        arbitrary: fc.record({ agent, schedule: fc.constant({ ops: [{ op: 'start', via: 'api' }] }) }),
        kinds: ['event-held-not-taken', 'event-delivered-twice'],
        firstOnly: true,
        shrinkKinds: 1,
        shrinkMs: 10_000,
      });
      assert.ok(r.shrunk[0], `a runtime that does not take the events it delivers went unnoticed in ${r.schedules} schedules:\n${r.text}`);
      assert.ok(r.kinds.has('event-delivered-twice'), `the second wait took the same event: ${r.text}`);
    } finally {
      if (real) Object.defineProperty(RunWriter.prototype, 'eventDelivered', real);
    }
  });

  it('negative control: catches a migration 10 that loses a committed action while copying actions (effect-twice), mid-schedule', async () => {
    // Sabotage: the copy of actions skips the run's latest committed action. Only this process's runner is sabotaged,
    // so the driver alone opens the schema-9 journal (no second opener's thread).
    const i = MIGRATIONS.findIndex((m) => m.version === 10);
    const real = MIGRATIONS[i] as Migration;
    const keep = 'FROM actions_v9 ORDER BY run_id, seq;';
    const lossy = real.sql.replace(
      keep,
      `FROM actions_v9 WHERE (run_id, id) NOT IN (SELECT run_id, id FROM actions_v9 WHERE run_id = 'r' AND status = 'committed' ORDER BY seq DESC LIMIT 1) ${keep.slice(15)}`,
    );
    assert.notEqual(lossy, real.sql);
    const agent = agentArbWithoutSleeps.map((a) => ({
      ...a,
      actions: a.actions.map((x) => ({ ...x, effect: 'non-idempotent' as const, verify: false, approval: 'none' as const, fail: 'none' as const })),
    }));
    const schedule: fc.Arbitrary<ScheduleJ> = fc.nat(3).map((n) => ({
      ops: [
        { op: 'start', via: 'api', crash: { at: 'provider', n, when: 'before-effect' } },
        { op: 'migrate-9', opener: 'driver', via: 'api' },
      ],
    }));
    Object.defineProperty(MIGRATIONS, i, { configurable: true, writable: true, value: { ...real, sql: lossy } });
    let r: Awaited<ReturnType<typeof check>>;
    try {
      r = await check({
        seed: SEED,
        runs: 40,
        arbitrary: fc.record({ agent, schedule }),
        kinds: ['effect-twice'],
        firstOnly: true,
        shrinkKinds: 1,
        shrinkMs: 10_000,
      });
    } finally {
      Object.defineProperty(MIGRATIONS, i, { configurable: true, writable: true, value: real });
    }
    const s = r.shrunk[0];
    assert.ok(s, `a migration that loses a committed action went unnoticed in ${r.schedules} schedules:\n${r.text}`);
    assert.ok(
      s.result.violations.some((v) => v.kind === 'effect-twice'),
      r.text,
    );
    // The shrunk case is innocent with the real migration: the violation is the sabotage's.
    const honest = await inScratch(s.c);
    assert.deepEqual(honest.violations, [], honest.log.join('\n'));
    console.log(`      caught: ${[...r.kinds.keys()].join(', ')} in ${r.schedules} schedule(s); shrunk to ${JSON.stringify(s.c)}`);
  });

  for (const control of [
    {
      name: 'an action declared idempotent whose provider does not dedupe by key',
      sabotage: { noDedupe: true },
      effect: 'idempotent' as const,
      type: /^reserve\./,
    },
    {
      name: 'a verify that answers "not found" for an effect that landed',
      sabotage: { verifyLies: true },
      effect: 'non-idempotent' as const,
      type: /^charge\./,
    },
  ]) {
    it(`negative control: catches and shrinks ${control.name}`, async () => {
      const r = await check({
        seed: SEED,
        runs: 60,
        sabotage: control.sabotage,
        arbitrary: crashesOnly(control.effect),
        kinds: ['effect-twice'],
        firstOnly: true,
        shrinkKinds: 1,
        shrinkMs: 15_000,
      });
      const s = r.shrunk[0];
      assert.ok(s, `the sabotaged world went unnoticed in ${r.schedules} schedules:\n${r.text}`);
      assert.ok(
        s.result.violations.some((v) => v.kind === 'effect-twice' && control.type.test(v.detail)),
        r.text,
      );
      assert.ok(
        s.c.schedule.ops.length <= 2 && s.c.agent.steps.length === 1 && s.c.agent.actions.length === 1,
        `not shrunk to one action in one step:\n${r.text}`,
      );
      // The shrunk case is innocent with an honest provider: the violation is the sabotage's, not the runtime's.
      const honest = await inScratch(s.c);
      assert.deepEqual(
        honest.violations.filter((v) => v.kind === 'effect-twice'),
        [],
        honest.log.join('\n'),
      );
    });
  }
});
