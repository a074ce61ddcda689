// journal.cancel: a run this very process drives hears it at once (its writer is told) and stops; the caller's promise says how.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openJournal } from '../../src/runtime';
import { tmpDir } from '../helpers';

describe('journal.cancel', function () {
  this.timeout(60_000);

  it('a live run in this process: ctx.signal aborts, the action settles, nothing starts after it, and cancel resolves once it stopped', async () => {
    const effects: string[] = [];
    let inFlight: () => void = () => undefined;
    const started = new Promise<void>((r) => (inFlight = r));
    const wait = defineAction({
      type: 'api-cancel.wait',
      version: 1,
      effect: 'idempotent',
      args: z.object({ n: z.number() }),
      key: (a, run) => `wait:${run.id}:${a.n}`,
      async execute(a, ctx) {
        effects.push(`wait ${a.n}`);
        inFlight();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        return { aborted: ctx.signal.aborted, code: (ctx.signal.reason as { code?: string }).code };
      },
      compensate: (a) => void effects.push(`undo ${a.n}`),
    });
    const agent = defineAgent({
      name: 'api-cancel',
      input: z.object({}),
      async run(run) {
        const first = await run.step('first', () => run.do(wait, { n: 1 }));
        await run.step('second', () => run.do(wait, { n: 2 }));
        return first;
      },
    });
    // The default 30 s lease: no heartbeat comes before the cancel is heard, which reaches this process's own writer at once.
    const journal = openJournal({ journal: path.join(tmpDir(), 'j.db'), agents: [agent], log: () => undefined });
    try {
      const outcome = journal.start(agent, {}, { runId: 'r' });
      await started;
      const report = await journal.cancel('r', { reason: 'changed my mind' });
      const out = await outcome;
      assert.equal(out.status, 'cancelled');
      assert.deepEqual(report, { runId: 'r', how: 'at-boundary', status: 'cancelled', reason: 'changed my mind' });
      assert.deepEqual(effects, ['wait 1'], 'the second action never started');
      assert.equal(journal.run('r')?.status, 'cancelled');
      assert.equal(journal.run('r')?.cancel?.reason, 'changed my mind');
      await assert.rejects(journal.resume('r'), /LB_RUN_NOT_RESUMABLE|cancelled/);
      await assert.rejects(journal.cancel('r'), (e: { code?: string }) => e.code === 'LB_RUN_NOT_CANCELLABLE');
      const comp = await journal.compensate('r');
      assert.equal(comp.status, 'compensated');
      assert.deepEqual(effects, ['wait 1', 'undo 1']);
    } finally {
      journal.close();
    }
  });
});
