// `logbook plan` against what `resume` (and `compensate`) then actually did, for a crash at each phase.

import { strict as assert } from 'node:assert';
import { cli, cliJson, tmpDir } from '../helpers';
import { CHARGE, EMAIL, KETTLE, MUG, ORDER, RUN, SHIP, toGate } from './order';

/** The reconciliation outcomes each planned way may produce. */
const OUTCOMES: Record<string, string[]> = {
  verify: ['verified', 'verified-absent'],
  're-execute-with-key': ['re-executed'],
  'run-again': ['re-executed'],
  'needs-decision': ['needs-decision'],
  'decided-happened': ['decided-happened'],
  'decided-not-happened': ['decided-not-happened'],
};

interface Case {
  readonly crash: string;
  /** The in-doubt action and how the plan says it will be reconciled, if any. */
  readonly inDoubt?: [string, string];
  readonly outcome?: string;
  readonly stops?: 'needs-decision' | 'awaiting-approval';
}

const CASES: Case[] = [
  { crash: 'price order@before' },
  { crash: 'reserve sku-kettle@after-checkpoint' },
  { crash: 'stock.reserve#2@before-start' },
  { crash: 'stock.reserve#1@after-start', inDoubt: [KETTLE, 're-execute-with-key'], outcome: 're-executed' },
  { crash: 'stock.reserve#2@after-execute', inDoubt: [MUG, 're-execute-with-key'], outcome: 're-executed' },
  { crash: 'stock.reserve#2@after-commit' },
  { crash: 'payments.charge#1@after-start', inDoubt: [CHARGE, 'verify'], outcome: 'verified-absent' },
  { crash: 'payments.charge#1@after-execute', inDoubt: [CHARGE, 'verify'], outcome: 'verified' },
  { crash: 'email.send#1@after-execute', inDoubt: [EMAIL, 'needs-decision'], outcome: 'needs-decision', stops: 'needs-decision' },
  { crash: 'ship@before' },
];

function compare(plan: any, outcome: any): void {
  const s = outcome.stats;
  assert.equal(s.stepsReplayed, plan.replay.count, 'steps replayed');
  assert.equal(s.stepsRedone, plan.redo.length, 'steps redone');
  assert.equal(s.actionsSkipped, plan.skipped.length, 'committed actions skipped in redone steps');
  assert.equal(s.reconciled.length, plan.inDoubt.length, 'in-doubt actions reconciled');
  for (const d of plan.inDoubt) {
    const done = s.reconciled.find((r: any) => r.id === d.id);
    assert.ok(done, `${d.id} was not reconciled`);
    assert.ok(OUTCOMES[d.reconcile]?.includes(done.outcome), `${d.id}: planned ${d.reconcile}, did ${done.outcome}`);
  }
  if (plan.stops) {
    assert.equal(outcome.status, plan.stops.kind);
    assert.equal(outcome.waitingOn.actionId, plan.stops.actionId);
  } else if (outcome.waitingOn) {
    // A stop the journal could not foresee is at an action it did not know yet (a gate reached for the first time).
    const known = [...plan.inDoubt, ...plan.approvals, ...plan.retry].map((a: any) => a.id);
    assert.ok(!known.includes(outcome.waitingOn.actionId), `unplanned stop at ${outcome.waitingOn.actionId}`);
  }
}

describe('logbook plan, checked against what resume then did (order example)', function () {
  this.timeout(300_000);

  for (const c of CASES) {
    it(`crash at ${c.crash}`, () => {
      const dir = tmpDir();
      const killed = cli(dir, ['run', ORDER, '--run-id', RUN, '--crash-at', c.crash]);
      assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
      const plan = cliJson(dir, ['plan', RUN]).json;
      assert.equal(plan.canResume, true);
      assert.equal(plan.status, 'interrupted');
      if (c.inDoubt)
        assert.deepEqual(
          plan.inDoubt.map((d: any) => [d.id, d.reconcile]),
          [c.inDoubt],
        );
      else assert.deepEqual(plan.inDoubt, []);
      assert.equal(plan.stops?.kind, c.stops);
      const resumed = cliJson(dir, ['resume', RUN]);
      assert.ok(resumed.status === 0 || resumed.status === 3, resumed.stderr);
      compare(plan, resumed.json);
      if (c.outcome) assert.equal(resumed.json.stats.reconciled[0].outcome, c.outcome);
    });
  }

  it('waiting at the approval gate, then approved and killed after the shipment was created', () => {
    const dir = tmpDir();
    toGate(dir);
    const waiting = cliJson(dir, ['plan', RUN]).json;
    assert.deepEqual(waiting.stops, { kind: 'awaiting-approval', actionId: SHIP, type: 'ship.create' });
    assert.deepEqual(
      waiting.approvals.map((a: any) => [a.id, a.state]),
      [[SHIP, 'pending']],
    );
    compare(waiting, cliJson(dir, ['resume', RUN]).json);

    assert.equal(cli(dir, ['approve', RUN, SHIP, '--crash-at', 'ship.create#1@after-execute']).signal, 'SIGKILL');
    const plan = cliJson(dir, ['plan', RUN]).json;
    assert.deepEqual(
      plan.inDoubt.map((d: any) => [d.id, d.reconcile]),
      [[SHIP, 're-execute-with-key']],
    );
    assert.equal(plan.stops, null);
    const done = cliJson(dir, ['resume', RUN]);
    assert.equal(done.status, 0);
    compare(plan, done.json);
  });

  it('a completed run: resume would refuse; --compensate lists the inverses newest-first and the irreversible', () => {
    const dir = tmpDir();
    toGate(dir);
    assert.equal(cli(dir, ['approve', RUN, SHIP]).status, 0);
    const plan = cliJson(dir, ['plan', RUN]).json;
    assert.equal(plan.canResume, false);
    assert.match(plan.blocker, /completed/);
    const comp = cliJson(dir, ['plan', RUN, '--compensate']).json;
    assert.deepEqual(
      comp.inverses.map((i: any) => i.id),
      [CHARGE, MUG, KETTLE],
    );
    assert.deepEqual(
      comp.irreversible.map((i: any) => i.id),
      [SHIP, EMAIL],
    );
    const human = cli(dir, ['plan', RUN, '--compensate']).stdout;
    assert.match(human, /inverses +1\. payments\.charge/);
    assert.match(human, /irreversible ship\.create/);
    const report = cliJson(dir, ['compensate', RUN]).json;
    assert.deepEqual(
      report.compensated.map((c: any) => c.id),
      comp.inverses.map((i: any) => i.id),
    );
    assert.deepEqual(
      report.irreversible.map((i: any) => i.id),
      comp.irreversible.map((i: any) => i.id),
    );
  });

  it('--compensate with an in-doubt charge (verify) and an in-doubt email (needs a decision)', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', ORDER, '--run-id', RUN, '--crash-at', 'email.send#1@after-start']).signal, 'SIGKILL');
    const comp = cliJson(dir, ['plan', RUN, '--compensate']).json;
    assert.deepEqual(
      comp.settleFirst.map((s: any) => [s.id, s.how]),
      [[EMAIL, 'needs-decision']],
    );
    assert.deepEqual(comp.stops, { actionId: EMAIL, type: 'email.send' });
    const stopped = cliJson(dir, ['compensate', RUN]);
    assert.equal(stopped.status, 3);
    assert.equal(stopped.json.waitingOn.actionId, comp.stops.actionId);
    // Decided: it did not happen (the kill came before execute). Nothing of the email to undo.
    const decided = cliJson(dir, ['compensate', RUN, '--decide', `${EMAIL}=not-happened`]);
    assert.equal(decided.status, 0, decided.stderr);
    assert.deepEqual(
      decided.json.compensated.map((c: any) => c.id),
      comp.inverses.filter((i: any) => i.id !== EMAIL).map((i: any) => i.id),
    );

    const dir2 = tmpDir();
    assert.equal(cli(dir2, ['run', ORDER, '--run-id', RUN, '--crash-at', 'payments.charge#1@after-execute']).signal, 'SIGKILL');
    const comp2 = cliJson(dir2, ['plan', RUN, '--compensate']).json;
    assert.deepEqual(
      comp2.settleFirst.map((s: any) => [s.id, s.how]),
      [[CHARGE, 'verify']],
    );
    assert.deepEqual(
      comp2.inverses.map((i: any) => [i.id, i.when]),
      [
        [CHARGE, 'if-found'],
        [MUG, 'always'],
        [KETTLE, 'always'],
      ],
    );
    const report = cliJson(dir2, ['compensate', RUN]).json;
    assert.deepEqual(
      report.settled.map((s: any) => s.id),
      [CHARGE],
    );
    assert.deepEqual(
      report.compensated.map((c: any) => c.id),
      comp2.inverses.map((i: any) => i.id),
      'verify found the charge, so it was refunded first',
    );
  });
});
