// Approval gates (order example): exit 3 at the gate, kills around it, approve goes on, reject is a typed error.

import { strict as assert } from 'node:assert';
import { cli, cliJson, show, tmpDir } from '../helpers';
import { EMAIL, INITIAL_STOCK, ORDER, RUN, SHIP, carrier, payments, toGate, warehouse } from './order';

describe('approval gates (order example)', function () {
  this.timeout(300_000);

  it('stops at the gate with exit 3, survives kills before and after approval, and ships exactly once', () => {
    const dir = tmpDir();
    // Killed just before the gate: the resume reaches the gate and waits there.
    const killed = cli(dir, ['run', ORDER, '--run-id', RUN, '--crash-at', 'ship@before']);
    assert.equal(killed.signal, 'SIGKILL');
    const waiting = cli(dir, ['resume', RUN]);
    assert.equal(waiting.status, 3, waiting.stdout + waiting.stderr);
    assert.match(waiting.stdout, /awaiting approval/);
    assert.match(waiting.stdout, new RegExp(`logbook approve ${RUN} ${SHIP}`));
    let j = show(dir, RUN);
    assert.equal(j.run.status, 'awaiting-approval');
    const gate = j.actions.find((a: any) => a.id === SHIP);
    assert.equal(gate.status, 'awaiting-approval');
    assert.equal(gate.approval, 'pending');
    assert.equal(gate.executions, 0);

    // Resuming while it waits stops at the same gate again: one pending approval, nothing shipped.
    const again = cli(dir, ['resume', RUN]);
    assert.equal(again.status, 3);
    j = show(dir, RUN);
    assert.equal(j.actions.filter((a: any) => a.type === 'ship.create').length, 1);
    assert.equal(j.actions.find((a: any) => a.id === SHIP).approval, 'pending');

    // Approve, and the resume that ships is killed after the carrier created the shipment.
    const approved = cli(dir, ['approve', RUN, SHIP, '--crash-at', 'ship.create#1@after-execute']);
    assert.equal(approved.signal, 'SIGKILL');
    j = show(dir, RUN);
    const inDoubt = j.actions.find((a: any) => a.id === SHIP);
    assert.equal(inDoubt.approval, 'approved');
    assert.equal(inDoubt.status, 'started');
    assert.equal(inDoubt.inDoubt, true);
    assert.equal(carrier(dir).shipments.length, 1);

    // The approval is journaled: the resume does not ask again, it re-executes with the key and the carrier dedupes.
    const done = cliJson(dir, ['resume', RUN]);
    assert.equal(done.status, 0, done.stderr);
    assert.equal(done.json.status, 'completed');
    assert.deepEqual(done.json.stats.reconciled, [{ id: SHIP, type: 'ship.create', outcome: 're-executed' }]);
    assert.equal(done.json.output.trackingNumber, 'TRK1001');
    assert.equal(carrier(dir).shipments.length, 1, 'shipped exactly once');

    const twice = cli(dir, ['approve', RUN, SHIP]);
    assert.equal(twice.status, 2);
    assert.match(twice.stderr, /LB_BAD_DECISION/);
  });

  it('reject: the script sees ApprovalRejectedError, cancels the order, and its policy compensates', () => {
    const dir = tmpDir();
    toGate(dir);
    const r = cliJson(dir, ['reject', RUN, SHIP, '--note', 'address could not be verified']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'compensated');
    const j = show(dir, RUN);
    // The step saw the typed error; the script caught it by class and threw its own.
    const ship = j.steps.find((s: any) => s.name === 'ship');
    assert.equal(ship.status, 'failed');
    assert.equal(ship.error.name, 'ApprovalRejectedError');
    assert.equal(ship.error.code, 'LB_APPROVAL_REJECTED');
    assert.equal(r.json.error.name, 'OrderCancelledError');
    assert.match(r.json.error.message, /order order-1001 was cancelled: the shipment was rejected .*address could not be verified/);
    assert.equal(j.actions.find((a: any) => a.id === SHIP).status, 'rejected');
    assert.equal(j.actions.find((a: any) => a.id === SHIP).executions, 0);
    // Compensation: refund, both releases; the sent confirmation cannot be unsent.
    assert.deepEqual(r.json.compensation.irreversible, [{ id: EMAIL, type: 'email.send' }]);
    assert.equal(carrier(dir).shipments.length, 0);
    assert.equal(payments(dir).refunds.length, 1);
    assert.deepEqual(warehouse(dir).stock, INITIAL_STOCK);
  });
});
