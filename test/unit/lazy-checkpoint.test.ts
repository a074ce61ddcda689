// Large checkpoints replayed lazily (issue 22): read and parsed only when the script uses them, the same value when it
// does, and a damaged one is the journal's failure at that use (the run stops resumable), never the script's.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as util from 'node:util';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAgent, openStore, resumeRun, startRun, ErrorCodes, LogbookError, type Store } from '../../src/runtime';
import { LAZY_ABOVE_BYTES } from '../../src/runtime/lazyValue';
import { tmpDir } from '../helpers';

const quiet = { log: () => undefined };
const filler = 'lorem ipsum '.repeat(Math.ceil(LAZY_ABOVE_BYTES / 12));
const state = (i: number) => ({ turn: i, messages: [{ role: 'user', content: filler }], tags: ['a', 'b'] });
const list = (i: number) => [i, filler, { nested: [i] }];

/** Three big steps (an object, an array, an object), then a fourth; `use` says what the replayed script reads. */
function agent(use: (vals: unknown[]) => unknown, stopAt: number | undefined, seen: unknown[]) {
  return defineAgent({
    name: 'lazy',
    input: z.object({}),
    async run(run) {
      const vals: unknown[] = [];
      vals.push(await run.step('s0', () => state(0)));
      vals.push(await run.step('s1', () => list(1)));
      vals.push(await run.step('s2', () => state(2)));
      if (stopAt === 3) throw new Error('stop before s3');
      const out = await run.step('s3', () => use(vals));
      seen.push(...vals);
      return out;
    },
  });
}

describe('large checkpoints replayed lazily', () => {
  let dir: string;
  let store: Store;
  let runId: string;
  beforeEach(async () => {
    dir = tmpDir();
    store = openStore(path.join(dir, 'journal.db'));
    const first = await startRun(
      store,
      agent(() => 0, 3, []),
      { script: 'l.ts', input: {}, ...quiet },
    );
    assert.equal(first.status, 'failed');
    runId = first.runId;
    // Failed runs resume (the failure was thrown outside any step, so the three steps stay completed).
  });
  afterEach(() => store.close());

  function damage(idx: number, text: string): void {
    const raw = new Database(path.join(dir, 'journal.db'));
    raw.prepare('UPDATE steps SET result = ? WHERE run_id = ? AND idx = ?').run(text, runId, idx);
    raw.close();
  }

  it('are the same values when used: equal, same kinds, printable, serialisable, writable', async () => {
    const seen: unknown[] = [];
    const out = await resumeRun(
      store,
      agent(
        (vals) => {
          const [a, b, c] = vals as [ReturnType<typeof state>, ReturnType<typeof list>, ReturnType<typeof state>];
          assert.deepStrictEqual(a, state(0));
          assert.ok(Array.isArray(b));
          assert.equal(b.length, 3);
          assert.deepStrictEqual([...b], list(1));
          assert.equal(JSON.stringify(c), JSON.stringify(state(2)));
          assert.match(util.inspect(c, { depth: 0 }), /turn: 2/);
          assert.deepEqual(Object.keys(c), ['turn', 'messages', 'tags']);
          c.tags.push('c');
          (c as { extra?: number }).extra = 1;
          return { turns: a.turn + c.turn, tags: c.tags, extra: (c as { extra?: number }).extra };
        },
        undefined,
        seen,
      ),
      runId,
      quiet,
    );
    assert.equal(out.status, 'completed', out.error?.message);
    assert.deepEqual(out.output, { turns: 2, tags: ['a', 'b', 'c'], extra: 1 });
    assert.equal(out.stats.stepsReplayed, 3);
  });

  it('a damaged one the script never uses does not stop the run (it is never read)', async () => {
    damage(0, `{"turn": 0, "messages": "${filler}`);
    const out = await resumeRun(
      store,
      agent((vals) => (vals[2] as { turn: number }).turn, undefined, []),
      runId,
      quiet,
    );
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(out.output, 2);
  });

  it('a damaged one the script uses stops the run as a journal failure there: resumable, the step that used it not checkpointed', async () => {
    damage(1, `[1, "${filler}`);
    let caught: unknown;
    const out = await resumeRun(
      store,
      agent(
        (vals) => {
          try {
            return (vals[1] as unknown[]).length;
          } catch (err) {
            caught = err;
            return -1;
          }
        },
        undefined,
        [],
      ),
      runId,
      quiet,
    );
    assert.ok(caught instanceof LogbookError && caught.code === ErrorCodes.JOURNAL_INVALID, `the script's catch got ${String(caught)}`);
    assert.match((caught as Error).message, /step #2 "s1", column result holds text that is not JSON/);
    assert.equal(out.status, 'interrupted', JSON.stringify(out));
    assert.equal(out.error?.code, ErrorCodes.JOURNAL_INVALID);
    const row = store.reader.run(runId);
    assert.equal(row?.status, 'running', 'no status written: shown interrupted, resumable');
    assert.equal(row?.lease_token, null);
    assert.notEqual(store.reader.step(runId, 3)?.status, 'completed', 'the step that used it was not checkpointed');
  });

  it('a small damaged one is still refused before anything is written', async () => {
    const small = defineAgent({
      name: 'small',
      input: z.object({}),
      async run(run) {
        await run.step('a', () => ({ n: 1 }));
        throw new Error('stop');
      },
    });
    const first = await startRun(store, small, { script: 's.ts', input: {}, ...quiet });
    const raw = new Database(path.join(dir, 'journal.db'));
    raw.prepare('UPDATE steps SET result = \'{"n": \' WHERE run_id = ?').run(first.runId);
    raw.close();
    const attempt = store.reader.run(first.runId)?.attempt;
    await assert.rejects(resumeRun(store, small, first.runId, quiet), (err: unknown) => err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID);
    assert.equal(store.reader.run(first.runId)?.attempt, attempt, 'nothing was written');
  });
});
