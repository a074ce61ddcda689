// Issue 19 case 4, in-process, on both journals: a writer trusts its lease only until the last acknowledged renewal's
// send time + TTL − margin, by the monotonic clock; past it (here: a lease granted "long ago", and a synchronous stall
// that lets no timer run) ctx.signal reads aborted when asked, no write or effect starts, and the loss names the
// effect that was running.

import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore, type Store } from '../../src/runtime/store';
import { createRun } from '../../src/runtime/store/lease';
import { LEASE_MARGIN_MS, LEASE_TTL_MS, RunWriter, type Lease } from '../../src/runtime/store/writer';
import { monoNow } from '../../src/runtime/store/leaseClock';
import { currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';
import { dbOf } from '../../src/runtime/store/db';

const owner = (): Owner => ({
  token: `t-${Math.random()}`,
  pid: process.pid,
  pidStart: null,
  host: hostField(os.hostname(), currentNode()),
  label: 'live test',
});
const isLost = (e: unknown): boolean => e instanceof LogbookError && e.code === ErrorCodes.LEASE_LOST;
const action = (id: string) => ({ id, stepIdx: 0, type: 'card.capture', version: 1, effect: 'non-idempotent' as const, args: '{}' });

function cases(target: () => string): void {
  let store: Store;
  beforeEach(() => {
    store = openStore(target());
  });
  afterEach(() => store.close());

  it('a lease whose trusted time has passed: aborted when asked, assertLease throws, nothing is written, the lease is handed back', () => {
    const lease = createRun(dbOf(store.db), store.reader, { id: 'old', agent: 'a', script: 's.ts', input: null }, owner());
    assert.ok(lease.sentAt !== undefined && lease.sentAt <= monoNow(), 'the grant is timed on the monotonic clock');
    const w = new RunWriter(store.db, { ...lease, sentAt: monoNow() - LEASE_TTL_MS } satisfies Lease, 1);
    const events = store.reader.eventCount('old');
    let heard: unknown;
    w.leaseChecks.signal.addEventListener('abort', () => (heard = w.leaseChecks.signal.reason));
    assert.equal(w.leaseChecks.signal.aborted, true);
    assert.ok(isLost(heard), 'listeners hear it at once, from the check');
    assert.equal(w.leaseChecks.leaseValid(), false);
    assert.throws(() => w.leaseChecks.assertLease(), isLost);
    assert.match(
      (heard as Error).message,
      /cannot prove it still holds the lease.*No effect was running: nothing more was journaled and no effect was started after that/,
    );
    assert.throws(() => w.actionStarted(action('k'), false), isLost, 'no `started` is written past the deadline');
    assert.throws(() => w.effectStarting('card.capture', 'k'), isLost, 'no execute is called');
    assert.equal(store.reader.eventCount('old'), events, 'nothing was written');
    w.release();
    assert.equal(store.reader.run('old')?.lease_token, null, 'no one took it: the fenced release hands it back, resumable');
  });

  it('a stall that lets no timer run, with an execute in flight: the first question after it gets the truth, naming that execute', () => {
    const lease = createRun(dbOf(store.db), store.reader, { id: 'stall', agent: 'a', script: 's.ts', input: null }, owner());
    // Trusted for 40 ms more from now (and nothing renews it: no write is made before the stall).
    const w = new RunWriter(store.db, { ...lease, sentAt: monoNow() - (LEASE_TTL_MS - LEASE_MARGIN_MS) + 40 }, 1);
    const ended = w.effectStarting('card.capture', 'k');
    assert.equal(w.leaseChecks.signal.aborted, false);
    const until = monoNow() + 80;
    while (monoNow() < until) {
      // A frozen process: no timer, no message runs here.
    }
    assert.equal(w.leaseChecks.signal.aborted, true, 'read right after the stall, before any timer could fire');
    assert.match(
      String((w.leaseChecks.signal.reason as Error).message),
      /the execute of card\.capture k was already running and was told by ctx\.signal: if it sent its request anyway, only the provider's refusal of a repeated idempotency key/,
    );
    ended();
    assert.throws(() => w.actionCommitted(0, 'k', '{}'), isLost, 'its result is not committed');
    assert.equal(store.reader.eventCount('stall'), 1, "nothing but the run's start was written");
    w.release();
  });
}

describe("a lease by the process's own clock (issue 19 case 4)", function () {
  this.timeout(120_000);
  describe('on SQLite', () => {
    const dir = tmpDir('logbook-clock-');
    let n = 0;
    cases(() => path.join(dir, `j${++n}.db`));
  });
  describe('on PostgreSQL', () => {
    const pg = usePgServer();
    cases(() => pg.server.createDatabase());
  });
});
