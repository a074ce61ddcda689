// Order compensation killed at every compensation fault point and run again: each inverse once, newest-first.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli, cliJson, show, tmpDir } from '../helpers';
import { openStore } from '../../src/runtime/store';
import { CHARGE, EMAIL, INITIAL_STOCK, KETTLE, MUG, ORDER, RUN, SHIP, completed, payments, warehouse } from './order';

// Newest-first: the charge (committed last of the three) is refunded first, then the mug, then the kettle.
const POINTS = [
  'payments.charge#1@compensate:after-start',
  'payments.charge#1@compensate:after-execute',
  'stock.reserve#1@compensate:after-start',
  'stock.reserve#1@compensate:after-execute',
  'stock.reserve#2@compensate:after-start',
  'stock.reserve#2@compensate:after-execute',
];

function committedOrder(dir: string): string[] {
  const store = openStore(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return store.reader
      .events(RUN, 0, 10_000)
      .filter((e) => e.kind === 'compensation.committed')
      .map((e) => e.action_id ?? '');
  } finally {
    store.close();
  }
}

describe('compensation of the order example under SIGKILL', function () {
  this.timeout(600_000);

  it('has exactly these compensation fault points (traced from an uncrashed compensate)', () => {
    const dir = tmpDir();
    completed(dir);
    const trace = path.join(dir, 'trace.jsonl');
    const r = cli(dir, ['compensate', RUN], { LOGBOOK_TRACE_FAULTS: trace });
    assert.equal(r.status, 0, r.stderr);
    const hits = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .map((h) => `${h.target}#${h.occurrence}@${h.point}`);
    assert.deepEqual(hits, POINTS);
  });

  it('a declined card after the stock was reserved: the declared policy releases it, nothing is charged, stock exact', () => {
    const dir = tmpDir();
    const r = cliJson(dir, ['run', ORDER, '--run-id', RUN, '--input', '{"card":"tok_declined"}']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'compensated');
    assert.equal(r.json.error.name, 'CardDeclinedError');
    assert.deepEqual(
      r.json.compensation.compensated.map((c: any) => c.id),
      [MUG, KETTLE],
    );
    assert.deepEqual(r.json.compensation.irreversible, []);
    const p = payments(dir);
    assert.equal(p.charges.length, 0);
    assert.equal(p.declines, 1);
    const w = warehouse(dir);
    assert.deepEqual(w.stock, INITIAL_STOCK, 'no double-counted inventory');
    assert.equal(w.releases.length, 2);
    assert.equal(show(dir, RUN).actions.find((a: any) => a.id === CHARGE).status, 'failed');
  });

  for (const point of POINTS) {
    it(`killed at ${point}, then \`logbook compensate\` again: each inverse once, newest-first, irreversible reported`, () => {
      const dir = tmpDir();
      completed(dir);
      const killed = cli(dir, ['compensate', RUN, '--crash-at', point]);
      assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
      assert.equal(show(dir, RUN).run.status, 'interrupted');

      const plan = cliJson(dir, ['plan', RUN, '--compensate']).json;
      const again = cliJson(dir, ['compensate', RUN]);
      assert.equal(again.status, 0, again.stderr);
      const report = again.json;
      assert.equal(report.status, 'compensated');

      // The plan said what the second call then did.
      assert.deepEqual(
        report.compensated.map((c: any) => c.id),
        plan.inverses.map((i: any) => i.id),
      );
      assert.equal(report.alreadyCompensated, plan.alreadyCompensated.length);
      assert.deepEqual(
        report.irreversible.map((i: any) => i.id),
        plan.irreversible.map((i: any) => i.id),
      );
      // The inverse the kill left in doubt ran again with its own key (the provider refused the repeat).
      const target = point.startsWith('payments') ? CHARGE : point.includes('#1@') ? MUG : KETTLE;
      assert.equal(report.compensated[0].id, target);
      assert.equal(report.compensated[0].redone, true);

      // The outside world: each inverse exactly once.
      const w = warehouse(dir);
      assert.deepEqual(w.stock, INITIAL_STOCK, 'stock counts exact');
      assert.deepEqual(
        w.releases.map((r: any) => r.reservationId),
        ['res-2', 'res-1'],
        'mug released before kettle, once each',
      );
      const p = payments(dir);
      assert.equal(p.charges.length, 1);
      assert.equal(p.refunds.length, 1, 'refunded once');
      assert.ok(p.refunds[0].at <= w.releases[0].at, 'the refund (newest effect) came before the releases');

      // The journal: newest-first, and the two irreversible actions reported by the second call too.
      assert.deepEqual(committedOrder(dir), [CHARGE, MUG, KETTLE]);
      assert.deepEqual(report.irreversible.map((i: any) => i.id).sort(), [EMAIL, SHIP].sort());
      const actions = show(dir, RUN).actions;
      for (const id of [CHARGE, MUG, KETTLE]) assert.equal(actions.find((a: any) => a.id === id).compensation, 'committed');
      for (const id of [EMAIL, SHIP]) assert.equal(actions.find((a: any) => a.id === id).compensation, 'irreversible');

      // A third call has nothing left to do and repeats nothing.
      const third = cliJson(dir, ['compensate', RUN]);
      assert.equal(third.status, 0);
      assert.deepEqual(third.json.compensated, []);
      assert.equal(third.json.alreadyCompensated, 3);
      assert.equal(payments(dir).refunds.length, 1);
      assert.equal(warehouse(dir).releases.length, 2);
    });
  }
});
