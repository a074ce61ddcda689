// A journaled model call costs one durable commit: its `started` is a lazy commit (it is idempotent: lost, the call is
// made again by key), its `committed` is durable. A non-idempotent tool keeps both halves of its bracket durable.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { logbookModel, logbookTools } from '../../src/ai';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

/** Each write transaction of the journal: the synchronous level it committed at and the events it wrote. */
function recordCommits(store: Store): Array<{ sync: number; events: string[] }> {
  const commits: Array<{ sync: number; events: string[] }> = [];
  const db = sqliteOf(store.db);
  const realTransaction = db.transaction.bind(db);
  const maxSeq = (): number => (db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM events').get() as { n: number }).n;
  db.transaction = ((fn: (...a: unknown[]) => unknown) => {
    const t = realTransaction(fn);
    const wrap = (run: (...a: unknown[]) => unknown) => (...a: unknown[]) => {
      const before = maxSeq();
      const sync = db.pragma('synchronous', { simple: true }) as number;
      const out = run(...a);
      const events = (db.prepare('SELECT kind, action_id FROM events WHERE seq > ? ORDER BY seq').all(before) as Array<{ kind: string; action_id: string | null }>).map((e) => `${e.kind} ${e.action_id ?? ''}`.trim());
      commits.push({ sync, events });
      return out;
    };
    return Object.assign(wrap(t), { immediate: wrap(t.immediate.bind(t)), deferred: t.deferred.bind(t), exclusive: t.exclusive.bind(t), default: t.default.bind(t) });
  }) as typeof db.transaction;
  return commits;
}

const FULL = 2;
const NORMAL = 1;

describe('ai: what a journaled call costs in commits', () => {
  it('a model call: started in a lazy commit, committed in a durable one; a non-idempotent tool: both durable', async () => {
    const store = openStore(path.join(tmpDir(), 'journal.db'));
    const commits = recordCommits(store);
    const { model, calls } = scriptedModel((_c, n) => (n === 0 ? [toolCall('refund', { orderId: 'A-1' }, 'c1')] : [text('refunded')]));
    const refund = tool({ inputSchema: z.object({ orderId: z.string() }), execute: (a) => ({ refundId: `re-${a.orderId}` }) });
    const agent = defineAgent({
      name: 'commits',
      input: z.object({}),
      run: (run) =>
        run.step('answer', async () => {
          const tools = logbookTools(run, { refund: { tool: refund, effect: 'non-idempotent', key: (a: { orderId: string }) => `refund:${a.orderId}` } });
          const r = await generateText({ model: logbookModel(run, model, { reportReplays: false }), tools, prompt: 'refund A-1', stopWhen: stepCountIs(3), maxRetries: 0 });
          return r.text;
        }),
    });
    const out = await startRun(store, agent, { script: 'commits.ts', input: {}, log: () => undefined });
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(calls(), 2);
    const at = (event: string): number => {
      const c = commits.find((x) => x.events.includes(event));
      assert.ok(c, `no commit wrote ${event}: ${JSON.stringify(commits)}`);
      return c.sync;
    };
    for (const call of ['model:1.1', 'model:1.2']) {
      assert.equal(at(`action.started ${call}`), NORMAL, `${call} started: lazy`);
      assert.equal(at(`action.committed ${call}`), FULL, `${call} committed: durable`);
    }
    assert.equal(at('action.started refund:A-1'), FULL, 'a non-idempotent tool call: started durable before its effect');
    assert.equal(at('action.committed refund:A-1'), FULL);
    const durablePerModelCall = commits.filter((c) => c.sync === FULL && c.events.some((e) => /^action\.(started|committed) model:/.test(e))).length / 2;
    assert.equal(durablePerModelCall, 1, JSON.stringify(commits));
    store.close();
  });
});
