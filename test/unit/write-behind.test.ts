// Records written behind (a read-only action's result, a step's start) reach the journal in order, inside the run's
// next transaction or within WRITE_BEHIND_MS, before any record that could depend on them, and before a host pauses.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { RunWriter, WRITE_BEHIND_MAX, WRITE_BEHIND_MS } from '../../src/runtime/store/writer';
import { createRun } from '../../src/runtime/store/lease';
import { beginSession } from '../../src/runtime/store/owner';
import { tmpDir } from '../helpers';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { dbOf } from '../../src/runtime/store/db';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function kinds(store: Store, runId: string): string[] {
  return store.reader
    .events(runId)
    .filter((e) => e.kind !== 'run.started')
    .map((e) => `${e.kind}${e.action_id ? ` ${e.action_id}` : ''}`);
}

function newWriter(id: string): { store: Store; writer: RunWriter } {
  const store = openStore(path.join(tmpDir(), 'j.db'));
  const lease = createRun(dbOf(store.db), store.reader, { id, agent: 'a', script: 'a.ts', input: null }, beginSession('test'));
  return { store, writer: new RunWriter(store.db, lease, 0) };
}

const observed = (id: string, stepIdx = 0) => ({ id, stepIdx, type: 'price.lookup', version: 1, effect: 'read-only' as const, args: '{}' });

describe('records written behind', () => {
  it('are written first, in order, by the next transaction, which a non-read-only action starts with', () => {
    const { store, writer } = newWriter('wb');
    writer.stepStarted(0, 'prices', false);
    writer.actionObserved(observed('price:a'), '{"cents":1}');
    assert.deepEqual(kinds(store, 'wb'), [], 'nothing is written yet');
    assert.equal(writer.holdsPending('price:a'), true);
    writer.actionStarted({ id: 'send:x', stepIdx: 0, type: 'mail.send', version: 1, effect: 'non-idempotent', args: '{}' }, false);
    assert.deepEqual(kinds(store, 'wb'), ['step.started', 'action.committed price:a', 'action.started send:x']);
    assert.equal(writer.holdsPending('price:a'), false);
    const a = store.reader.action('wb', 'price:a');
    assert.equal(a?.status, 'committed');
    assert.equal(a?.seq, 0, 'the action keeps the sequence it was given when it happened');
    assert.equal(store.reader.action('wb', 'send:x')?.seq, 1);
    assert.equal(store.reader.step('wb', 0)?.status, 'started');
    writer.release();
    store.close();
  });

  it(`are written on their own within ${WRITE_BEHIND_MS} ms when the run writes nothing else`, async () => {
    const { store, writer } = newWriter('wb-timer');
    writer.actionObserved(observed('price:b'), 'null');
    assert.equal(store.reader.action('wb-timer', 'price:b'), undefined);
    await sleep(WRITE_BEHIND_MS * 4);
    assert.equal(store.reader.action('wb-timer', 'price:b')?.status, 'committed');
    assert.equal(sqliteOf(store.db).pragma('synchronous', { simple: true }), 2, 'back at FULL after the lazy commit');
    writer.release();
    store.close();
  });

  it(`held after a commit took the ones before (the timer left armed), are still written within ${WRITE_BEHIND_MS} ms`, async () => {
    const { store, writer } = newWriter('wb-rearm');
    writer.actionObserved(observed('price:c'), 'null');
    writer.actionStarted({ id: 'send:y', stepIdx: 0, type: 'mail.send', version: 1, effect: 'non-idempotent', args: '{}' }, false);
    assert.equal(store.reader.action('wb-rearm', 'price:c')?.status, 'committed', 'the commit took the record held before it');
    writer.actionObserved(observed('price:d'), 'null');
    assert.equal(store.reader.action('wb-rearm', 'price:d'), undefined);
    await sleep(WRITE_BEHIND_MS * 4);
    assert.equal(store.reader.action('wb-rearm', 'price:d')?.status, 'committed');
    writer.release();
    store.close();
  });

  it(`are written at once when ${WRITE_BEHIND_MAX} are waiting, and by release`, () => {
    const { store, writer } = newWriter('wb-max');
    for (let i = 0; i < WRITE_BEHIND_MAX - 1; i++) writer.actionObserved(observed(`p:${i}`), 'null');
    assert.equal(store.reader.actionCount('wb-max'), 0);
    writer.actionObserved(observed('p:last'), 'null');
    assert.equal(store.reader.actionCount('wb-max'), WRITE_BEHIND_MAX);
    writer.actionObserved(observed('p:after'), 'null');
    writer.release();
    assert.equal(store.reader.action('wb-max', 'p:after')?.status, 'committed');
    store.close();
  });

  it('are in the journal whenever a host pauses, and a run that ends leaves none behind', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const lookup = defineAction({
      type: 'price.lookup',
      version: 1,
      effect: 'read-only',
      args: z.object({ sku: z.string() }),
      key: (a, run) => `price:${run.id}:${a.sku}`,
      execute: (a) => ({ sku: a.sku }),
    });
    const agent = defineAgent({
      name: 'prices',
      input: z.object({}),
      async run(run) {
        await run.step('one', () => run.do(lookup, { sku: 'a' }));
        await run.step('two', () => run.do(lookup, { sku: 'b' }));
      },
    });
    const seen: string[] = [];
    const out = await startRun(store, agent, {
      script: 'p.ts',
      input: {},
      log: () => undefined,
      hooks: {
        pause: (ev) => {
          // Each pause sees every record of what happened before it.
          if (ev.kind === 'action:committed') seen.push(`${ev.action?.id ?? ''}=${store.reader.action(ev.run.id, ev.action?.id ?? '')?.status ?? 'missing'}`);
          if (ev.kind === 'step:before' && ev.step) seen.push(`before ${ev.step.name}: ${store.reader.stepCount(ev.run.id)} steps`);
          return Promise.resolve();
        },
      },
    });
    assert.equal(out.status, 'completed');
    assert.deepEqual(seen, ['before one: 0 steps', `price:${out.runId}:a=committed`, 'before two: 1 steps', `price:${out.runId}:b=committed`]);
    const events = kinds(store, out.runId);
    assert.deepEqual(events, [
      'step.started',
      `action.committed price:${out.runId}:a`,
      'step.completed',
      'step.started',
      `action.committed price:${out.runId}:b`,
      'step.completed',
      'run.completed',
    ]);
    store.close();
  });

  describe("an idempotent action declared started: 'with-result'", () => {
    const quote = (log: string[], ms = 0) =>
      defineAction({
        type: 'fx.quote',
        version: 1,
        effect: 'idempotent',
        started: 'with-result',
        args: z.object({ pair: z.string() }),
        key: (a, run) => `quote:${run.id}:${a.pair}`,
        execute: async (a) => {
          log.push(a.pair);
          if (ms) await sleep(ms);
          return { pair: a.pair, rate: 1.08 };
        },
      });

    it('writes its started, executing and committed in the commit of its result; paused after start, a host sees it started', async () => {
      const store = openStore(path.join(tmpDir(), 'j.db'));
      const log: string[] = [];
      const q = quote(log);
      const agent = defineAgent({ name: 'fx', input: z.object({}), run: (run) => run.step('rates', () => run.do(q, { pair: 'EURUSD' })) });
      const seen: string[] = [];
      const out = await startRun(store, agent, {
        script: 'fx.ts',
        input: {},
        log: () => undefined,
        hooks: {
          pause: (ev) => (
            ev.kind === 'action:after-start' && seen.push(store.reader.action(ev.run.id, ev.action?.id ?? '')?.status ?? 'missing'),
            Promise.resolve()
          ),
        },
      });
      assert.equal(out.status, 'completed', out.error?.message);
      assert.deepEqual(seen, ['started'], 'a debugger stop after start shows the action started');
      const id = `quote:${out.runId}:EURUSD`;
      assert.deepEqual(
        kinds(store, out.runId).filter((k) => k.endsWith(id)),
        [`action.started ${id}`, `action.executing ${id}`, `action.committed ${id}`],
      );
      const row = store.reader.action(out.runId, id);
      assert.equal(row?.status, 'committed');
      assert.equal(row?.executions, 1);
      store.close();
    });

    it('is refused on a non-idempotent or approval-gated action, with the remedy', () => {
      const base = { type: 'x.send', version: 1, args: z.object({}), key: () => 'k', execute: () => null, started: 'with-result' as const };
      assert.throws(
        () => defineAction({ ...base, effect: 'non-idempotent' }),
        /started: "with-result" is only for an idempotent action without approval; this one is non-idempotent\. .*must be durable before its effect/,
      );
      assert.throws(() => defineAction({ ...base, type: 'x.approve', effect: 'idempotent', approval: true }), /this one is gated by approval/);
      assert.throws(
        () => defineAction({ ...base, type: 'x.odd', effect: 'idempotent', started: 'later' as never }),
        /"started" is "later"\. Use "before-execute" or "with-result"/,
      );
    });
  });
});
