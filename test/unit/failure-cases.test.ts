// Issue 10 §3 in-process cases on real SQLite files: parallel key conflicts across types, replayed failures that keep
// their identity, lone surrogates in names and keys, and run.do calls a step did not await.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import {
  ApprovalRejectedError,
  ErrorCodes,
  LogbookError,
  defineAction,
  defineAgent,
  openStore,
  recordApproval,
  resumeRun,
  startRun,
  type Store,
} from '../../src/runtime';
import { showRun } from '../../src/cli/inspect';
import { printable } from '../../src/cli/format';
import { tmpDir } from '../helpers';

const quiet = { log: () => undefined };
const tick = (ms = 20): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('issue 10: failure cases (in-process)', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('two action types with the same key and args in parallel steps: LB_KEY_CONFLICT, the second never runs', async () => {
    const ran: string[] = [];
    const mk = (type: string) =>
      defineAction({
        type,
        version: 1,
        effect: 'non-idempotent',
        args: z.object({ order: z.string() }),
        key: (a) => `order:${a.order}`,
        execute: async (a) => {
          ran.push(type);
          await tick();
          return { type, order: a.order };
        },
      });
    const charge = mk('conflict.charge');
    const refund = mk('conflict.refund');
    const agent = defineAgent({
      name: 'parallel-types',
      input: z.object({}),
      run: async (run) => Promise.all([run.step('charge', () => run.do(charge, { order: 'o1' })), run.step('refund', () => run.do(refund, { order: 'o1' }))]),
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'pt', ...quiet });
    assert.equal(out.status, 'failed', JSON.stringify(out.output));
    assert.equal(out.error?.code, ErrorCodes.KEY_CONFLICT);
    assert.match(out.error?.message ?? '', /used by conflict\.charge and now by conflict\.refund.*two action types cannot share an id/);
    assert.deepEqual(ran, ['conflict.charge'], 'the second type never executed');

    // The sequential form gives the same answer, from the journal's check.
    const seq = defineAgent({
      name: 'sequential-types',
      input: z.object({}),
      run: async (run) => {
        await run.step('charge', () => run.do(charge, { order: 'o2' }));
        return run.step('refund', () => run.do(refund, { order: 'o2' }));
      },
    });
    const out2 = await startRun(store, seq, { script: 'inline', input: {}, runId: 'st', ...quiet });
    assert.equal(out2.error?.code, ErrorCodes.KEY_CONFLICT);
  });

  it('a caught ApprovalRejectedError is replayed as an ApprovalRejectedError, so the catch path is taken again', async () => {
    const shipped: string[] = [];
    const ship = defineAction({
      type: 'replay.ship',
      version: 1,
      effect: 'non-idempotent',
      approval: true,
      args: z.object({ order: z.string() }),
      key: (a, run) => `ship:${run.id}:${a.order}`,
      execute: (a) => {
        shipped.push(a.order);
        return { shipped: a.order };
      },
    });
    let notifyFails = true;
    const caught: unknown[] = [];
    const agent = defineAgent({
      name: 'rejecting',
      input: z.object({}),
      run: async (run) => {
        let path = 'shipped';
        try {
          await run.step('ship', () => run.do(ship, { order: 'o1' }));
        } catch (err) {
          caught.push(err);
          if (!(err instanceof ApprovalRejectedError)) throw err;
          path = 'rejected';
        }
        await run.step('notify', () => {
          if (notifyFails) throw new Error('mail relay down');
          return path;
        });
        return path;
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'rj', ...quiet });
    assert.equal(first.status, 'awaiting-approval');
    recordApproval(store, 'rj', 'ship:rj:o1', false, 'address is a PO box');
    const second = await resumeRun(store, agent, 'rj', quiet);
    assert.equal(second.status, 'failed');
    assert.match(second.error?.message ?? '', /mail relay down/);
    notifyFails = false;
    const third = await resumeRun(store, agent, 'rj', quiet);
    assert.equal(third.status, 'completed', third.error?.message);
    assert.equal(third.output, 'rejected');
    // The first attempt's catch saw the run suspend at the gate; then the rejection, then its replay.
    assert.equal(caught.length, 3);
    const [original, replayed] = caught.slice(1) as [ApprovalRejectedError, ApprovalRejectedError];
    assert.ok(replayed instanceof ApprovalRejectedError && replayed instanceof LogbookError);
    assert.equal(replayed.name, original.name);
    assert.equal(replayed.code, ErrorCodes.APPROVAL_REJECTED);
    assert.equal(replayed.message, original.message);
    assert.equal(replayed.remedy, original.remedy);
    assert.deepEqual(replayed.details, original.details);
    assert.match(replayed.stack ?? '', /replayed from the journal/);
    assert.deepEqual(shipped, []);
  });

  it('a caught user error replays with its name, message, code and JSON-safe properties; built-in classes are kept', async () => {
    class PaymentDeclined extends Error {
      readonly code = 'card_declined';
      readonly status = 402;
      readonly retryable = false;
      constructor(message: string) {
        super(message);
        this.name = 'PaymentDeclined';
      }
    }
    let lastFails = true;
    const seen: Array<Record<string, unknown>> = [];
    const agent = defineAgent({
      name: 'user-errors',
      input: z.object({}),
      run: async (run) => {
        for (const [name, make] of [
          ['charge', () => new PaymentDeclined('card ending 4242 was declined')],
          ['parse', () => new TypeError('cannot read properties of undefined')],
        ] as const) {
          try {
            await run.step(name, () => {
              throw make();
            });
          } catch (err) {
            const e = err as Error & { code?: unknown; status?: unknown; retryable?: unknown };
            seen.push({
              step: name,
              name: e.name,
              message: e.message,
              code: e.code,
              status: e.status,
              retryable: e.retryable,
              typeError: e instanceof TypeError,
            });
          }
        }
        await run.step('last', () => {
          if (lastFails) throw new Error('later failure');
          return 1;
        });
        return seen.length;
      },
    });
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'ue', ...quiet })).status, 'failed');
    lastFails = false;
    assert.equal((await resumeRun(store, agent, 'ue', quiet)).status, 'completed');
    assert.equal(seen.length, 4);
    assert.deepEqual(seen[2], seen[0], 'the user error keeps name, message, code and its own JSON properties');
    assert.deepEqual(seen[3], seen[1], 'a TypeError is a TypeError again');
    assert.deepEqual(seen[0], {
      step: 'charge',
      name: 'PaymentDeclined',
      message: 'card ending 4242 was declined',
      code: 'card_declined',
      status: 402,
      retryable: false,
      typeError: false,
    });
  });

  it('a lone surrogate in a step name or key is refused up front; JSON values holding one round-trip exactly', async () => {
    const cut = '📦 parcel'.slice(0, 1); // half of the emoji
    const echo = defineAction({
      type: 'sur.echo',
      version: 1,
      effect: 'idempotent',
      args: z.object({ text: z.string() }),
      key: (a) => `echo:${a.text}`,
      execute: (a) => ({ back: a.text, [a.text]: 1 }),
    });
    const byName = defineAgent({ name: 'sur-name', input: z.object({}), run: (run) => run.step(`label ${cut}`, () => 1) });
    const o1 = await startRun(store, byName, { script: 'inline', input: {}, runId: 's1', ...quiet });
    assert.equal(o1.error?.code, ErrorCodes.LONE_SURROGATE);
    assert.match(
      o1.error?.message ?? '',
      /The name of step #1 .*lone UTF-16 surrogate \(\\ud83d at index 6\).*Nothing was journaled\. Cut strings by code points/,
    );
    assert.equal(store.reader.stepCount('s1'), 0, 'no step row was written');

    const byKey = defineAgent({ name: 'sur-key', input: z.object({}), run: (run) => run.step('s', () => run.do(echo, { text: cut })) });
    const o2 = await startRun(store, byKey, { script: 'inline', input: {}, runId: 's2', ...quiet });
    assert.equal(o2.error?.code, ErrorCodes.LONE_SURROGATE);
    assert.match(o2.error?.message ?? '', /The key of sur\.echo/);
    assert.equal(store.reader.actionCount('s2'), 0, 'refused before started');

    assert.throws(
      () => defineAction({ type: `bad${cut}`, version: 1, effect: 'idempotent', args: z.object({}), key: () => 'k', execute: () => 1 }),
      (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.LONE_SURROGATE,
    );

    // Args, results and step results are JSON: a lone surrogate is escaped (\ud83d) and reads back exactly.
    const keyed = defineAction({
      type: 'sur.keyed',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ text: z.string() }),
      key: (_a, run) => `keyed:${run.id}`,
      execute: (a) => ({ back: a.text, [a.text]: 1 }),
    });
    let fail = true;
    const results: unknown[] = [];
    const json = defineAgent({
      name: 'sur-json',
      input: z.object({}),
      run: async (run) => {
        results.push(await run.step('first', () => run.do(keyed, { text: cut })));
        results.push(await run.step('second', () => ({ [cut]: cut })));
        await run.step('third', () => {
          if (fail) throw new Error('again');
        });
        return results.length;
      },
    });
    assert.equal((await startRun(store, json, { script: 'inline', input: {}, runId: 's3', ...quiet })).status, 'failed');
    fail = false;
    const resumed = await resumeRun(store, json, 's3', quiet);
    assert.equal(resumed.status, 'completed', resumed.error?.message);
    assert.equal(resumed.stats.stepsReplayed, 2, 'no LB_NONDETERMINISM: both steps replayed');
    assert.deepEqual(results[2], { back: cut, [cut]: 1 });
    assert.deepEqual(results[3], { [cut]: cut });
  });

  it('show escapes keys so that two distinct keys never print alike', async () => {
    const keys = [
      'user:é',
      'user:e\u0301',
      'user:a\u200bb',
      'user:ab',
      'user:x\uFFFD',
      'user:x\\uFFFD',
      `user:${'long-'.repeat(12)}1`,
      `user:${'long-'.repeat(12)}2`,
    ];
    const act = defineAction({ type: 'show.key', version: 1, effect: 'idempotent', args: z.object({ k: z.string() }), key: (a) => a.k, execute: () => 1 });
    const agent = defineAgent({
      name: 'keys',
      input: z.object({}),
      run: async (run) => {
        return run.step('all', async () => {
          for (const k of keys) await run.do(act, { k });
          return keys.length;
        });
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'keys', ...quiet });
    assert.equal(out.status, 'completed', out.error?.message);
    const text = showRun(store, 'keys', false);
    const printed = keys.map((k) => printable(k));
    assert.equal(new Set(printed).size, keys.length, `distinct: ${printed.join(' | ')}`);
    for (const p of printed) assert.ok(text.includes(p), `show prints ${p}`);
    assert.equal(printable('user:é'), 'user:é', 'ordinary text is left alone');
    assert.equal(printable('user:e\u0301'), 'user:e\\u0301');
  });

  it('a step does not end while a run.do it did not await is unsettled', async () => {
    const order: string[] = [];
    const slow = defineAction({
      type: 'unawaited.send',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `send:${run.id}`,
      execute: async () => {
        await tick(50);
        order.push('executed');
        return 'sent';
      },
    });
    const agent = defineAgent({
      name: 'unawaited',
      input: z.object({}),
      run: async (run) => {
        await run.step('fire and forget', () => {
          void run.do(slow, {});
          return 'returned';
        });
        order.push('step ended');
        return null;
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'ua', ...quiet });
    assert.equal(out.status, 'completed');
    assert.deepEqual(order, ['executed', 'step ended']);
    const events = store.reader.events('ua').map((e) => e.kind);
    assert.ok(events.indexOf('action.committed') < events.indexOf('step.completed'), events.join(' '));
  });

  it('a step whose unawaited run.do stopped the run (approval gate) is not checkpointed as completed', async () => {
    const gated = defineAction({
      type: 'unawaited.gated',
      version: 1,
      effect: 'non-idempotent',
      approval: true,
      args: z.object({}),
      key: (_a, run) => `gated:${run.id}`,
      execute: () => 'shipped',
    });
    const agent = defineAgent({
      name: 'unawaited-gate',
      input: z.object({}),
      run: async (run) => {
        await run.step('ship later', () => {
          void run.do(gated, {});
          return 'returned at once';
        });
        return null;
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'ug', ...quiet });
    assert.equal(out.status, 'awaiting-approval');
    assert.notEqual(store.reader.step('ug', 0)?.status, 'completed', 'the step waits for its gated action');
    recordApproval(store, 'ug', 'gated:ug', true, null);
    const resumed = await resumeRun(store, agent, 'ug', quiet);
    assert.equal(resumed.status, 'completed', resumed.error?.message);
    assert.equal(store.reader.action('ug', 'gated:ug')?.status, 'committed');
  });
});
