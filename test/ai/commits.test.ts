// A journaled model call costs one durable commit: its `started` is written with its result (it is idempotent: lost,
// the call is made again by key), or within 50 ms when the call is slow. A non-idempotent tool keeps both halves durable.

import { strict as assert } from 'node:assert';
import Database from 'better-sqlite3';
import * as path from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { logbookModel, logbookTools } from '../../src/ai';
import { foldRows, tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

/** Each write transaction of the journal: the synchronous level it committed at and the events it wrote. */
function recordCommits(store: Store): Array<{ sync: number; events: string[] }> {
  const commits: Array<{ sync: number; events: string[] }> = [];
  const db = sqliteOf(store.db);
  const realTransaction = db.transaction.bind(db);
  const maxSeq = (): number => (db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM events').get() as { n: number }).n;
  db.transaction = ((fn: (...a: unknown[]) => unknown) => {
    const t = realTransaction(fn);
    const wrap =
      (run: (...a: unknown[]) => unknown) =>
      (...a: unknown[]) => {
        const before = maxSeq();
        const sync = db.pragma('synchronous', { simple: true }) as number;
        const out = run(...a);
        const events = (
          db.prepare('SELECT kind, action_id FROM events WHERE seq > ? ORDER BY seq').all(before) as Array<{ kind: string; action_id: string | null }>
        ).map((e) => `${e.kind} ${e.action_id ?? ''}`.trim());
        commits.push({ sync, events });
        return out;
      };
    return Object.assign(wrap(t), {
      immediate: wrap(t.immediate.bind(t)),
      deferred: t.deferred.bind(t),
      exclusive: t.exclusive.bind(t),
      default: t.default.bind(t),
    });
  }) as typeof db.transaction;
  return commits;
}

const FULL = 2;
const NORMAL = 1;

describe('ai: what a journaled call costs in commits', () => {
  it('a model call: started, executing and committed in one durable commit; a non-idempotent tool: both halves durable', async () => {
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
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false }),
            tools,
            prompt: 'refund A-1',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
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
      const mine = commits.filter((c) => c.events.some((e) => e.endsWith(` ${call}`)));
      assert.equal(mine.length, 1, `${call} is one commit: ${JSON.stringify(mine)}`);
      assert.equal(mine[0]!.sync, FULL, `${call} committed: durable`);
      assert.deepEqual(
        mine[0]!.events.filter((e) => e.endsWith(` ${call}`)),
        [`action.started ${call}`, `action.executing ${call}`, `action.committed ${call}`],
      );
    }
    assert.equal(at('action.started refund:A-1'), FULL, 'a non-idempotent tool call: started durable before its effect');
    assert.equal(at('action.committed refund:A-1'), FULL);
    assert.notEqual(
      commits.find((c) => c.events.includes('action.started refund:A-1')),
      commits.find((c) => c.events.includes('action.committed refund:A-1')),
      "the tool's started is committed before its effect runs",
    );
    store.close();
  });

  it('a slow model call is in the journal as started while the provider works, in a lazy commit of its own', async () => {
    const file = path.join(tmpDir(), 'journal.db');
    const store = openStore(file);
    const commits = recordCommits(store);
    const { model } = scriptedModel(() => [text('done')]);
    let seen: { status: string; executions: number } | undefined;
    const slow = new MockLanguageModelV3({
      provider: 'mock',
      modelId: 'slow-1',
      doGenerate: async (o) => {
        await new Promise((r) => setTimeout(r, 400));
        // Another connection, as the sidebar reads the journal while the call is in flight (folding the log first, as it does).
        foldRows(file);
        const peek = new Database(file, { readonly: true });
        seen = peek.prepare("SELECT status, executions FROM actions WHERE id = 'model:1.1'").get() as typeof seen;
        peek.close();
        return model.doGenerate(o);
      },
    });
    const agent = defineAgent({
      name: 'slow-call',
      input: z.object({}),
      run: (run) =>
        run.step('answer', async () => (await generateText({ model: logbookModel(run, slow, { reportReplays: false }), prompt: 'hi', maxRetries: 0 })).text),
    });
    const out = await startRun(store, agent, { script: 'slow.ts', input: {}, log: () => undefined });
    assert.equal(out.status, 'completed', out.error?.message);
    assert.deepEqual(seen, { status: 'started', executions: 1 }, 'visible in flight to another reader');
    const started = commits.find((c) => c.events.includes('action.started model:1.1'));
    assert.equal(started?.sync, NORMAL, 'its started went out in a lazy commit, ahead of the result');
    assert.equal(commits.find((c) => c.events.includes('action.committed model:1.1'))?.sync, FULL);
    store.close();
  });
});
