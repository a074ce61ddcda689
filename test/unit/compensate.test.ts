// Compensation tests: inverses newest-first, irreversible actions reported, a throwing inverse resumed later.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { DefiniteFailure, ErrorCodes, compensateRun, defineAction, defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { tmpDir } from '../helpers';

const quiet = { log: () => undefined };

describe('compensation', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('applies inverses newest-first, reports irreversible ones, and never repeats a finished inverse', async () => {
    const log: string[] = [];
    let refundFails = true;
    const reserve = defineAction({
      type: 'c.reserve',
      version: 1,
      effect: 'idempotent',
      args: z.object({ sku: z.string() }),
      key: (a, run) => `reserve:${run.id}:${a.sku}`,
      execute: (a) => {
        log.push(`reserve ${a.sku}`);
        return { sku: a.sku };
      },
      compensate: (a, r, { idempotencyKey }) => {
        log.push(`release ${a.sku} (${r.sku}) key=${idempotencyKey}`);
      },
    });
    const charge = defineAction({
      type: 'c.charge',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ cents: z.number() }),
      key: (_a, run) => `charge:${run.id}`,
      execute: (a) => {
        log.push(`charge ${a.cents}`);
        return { id: 'ch-1' };
      },
      compensate: (_a, r) => {
        if (refundFails) throw new Error('refund API down');
        log.push(`refund ${r.id}`);
      },
    });
    const email = defineAction({
      type: 'c.email',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `email:${run.id}`,
      execute: () => log.push('email'),
    });
    const agent = defineAgent({
      name: 'shop',
      input: z.object({}),
      run: async (run) => {
        await run.step('reserve', () => Promise.all(['a', 'b'].map((sku) => run.do(reserve, { sku }))));
        await run.step('charge', () => run.do(charge, { cents: 500 }));
        await run.step('email', () => run.do(email, {}));
        return 'ok';
      },
    });
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'shop', ...quiet })).status, 'completed');
    log.length = 0;

    const failed = await compensateRun(store, 'shop', quiet);
    assert.equal(failed.status, 'compensation-failed');
    assert.equal(failed.error?.code, ErrorCodes.COMPENSATE_FAILED);
    assert.match(failed.error?.message ?? '', /refund API down.*finished inverses are not repeated/);
    assert.deepEqual(
      failed.irreversible.map((i) => i.id),
      ['email:shop'],
    );
    assert.equal(store.reader.action('shop', 'email:shop')?.compensation, 'irreversible');

    refundFails = false;
    const done = await compensateRun(store, 'shop', quiet);
    assert.equal(done.status, 'compensated');
    assert.deepEqual(log, ['refund ch-1', 'release b (b) key=compensate:reserve:shop:b', 'release a (a) key=compensate:reserve:shop:a']);
    assert.deepEqual(
      done.compensated.map((c) => [c.id, c.redone]),
      [
        ['charge:shop', true],
        ['reserve:shop:b', false],
        ['reserve:shop:a', false],
      ],
    );
    assert.deepEqual(
      done.irreversible.map((i) => i.id),
      ['email:shop'],
    );

    log.length = 0;
    const again = await compensateRun(store, 'shop', quiet);
    assert.equal(again.status, 'compensated');
    assert.equal(again.alreadyCompensated, 3);
    assert.deepEqual(log, [], 'nothing applied twice');
  });

  it('compensates automatically when the agent declares onFailure: compensate', async () => {
    const stock = { level: 5 };
    const reserve = defineAction({
      type: 'p.reserve',
      version: 1,
      effect: 'idempotent',
      args: z.object({ qty: z.number() }),
      key: (_a, run) => `r:${run.id}`,
      execute: (a) => {
        stock.level -= a.qty;
        return null;
      },
      compensate: (a) => {
        stock.level += a.qty;
      },
    });
    const charge = defineAction({
      type: 'p.charge',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `c:${run.id}`,
      // A decline proves nothing was charged: a definite failure, so compensation has nothing in doubt to settle.
      execute: () => {
        throw new DefiniteFailure('card declined');
      },
    });
    const agent = defineAgent({
      name: 'policy',
      input: z.object({}),
      onFailure: 'compensate',
      run: async (run) => {
        await run.step('reserve', () => run.do(reserve, { qty: 2 }));
        await run.step('charge', () => run.do(charge, {}));
        return 'never';
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'pol', ...quiet });
    assert.equal(out.status, 'compensated');
    assert.match(out.error?.message ?? '', /card declined/);
    assert.equal(stock.level, 5);
    assert.equal(store.reader.run('pol')?.status, 'compensated');
  });
});
