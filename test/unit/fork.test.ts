// Forking a run: inherited checkpoints replay in the fork, actions stay with the origin, bad fork points are refused.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, forkRun, openStore, startRun, type Store } from '../../src/runtime';
import { copyStepsForFork } from '../../src/runtime/store/fork';
import { tmpDir } from '../helpers';
import { dbOf } from '../../src/runtime/store/db';

const effects: string[] = [];
const note = defineAction({
  type: 'fork-test.note',
  version: 1,
  effect: 'idempotent',
  args: z.object({ n: z.number() }),
  key: (a, run) => `note:${run.id}:${a.n}`,
  execute: (a, { idempotencyKey }) => {
    effects.push(idempotencyKey);
    return { n: a.n };
  },
});

const agent = defineAgent({
  name: 'fork-test',
  input: z.object({ steps: z.number().int() }),
  async run(run, input) {
    const seen: number[] = [];
    for (let i = 0; i < input.steps; i++) seen.push((await run.step(`step ${i}`, () => run.do(note, { n: i }))).n);
    return seen;
  },
});

describe('fork (store)', () => {
  let store: Store;
  beforeEach(() => {
    effects.length = 0;
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('replays the inherited steps and runs only the steps from the fork point on', async () => {
    const origin = await startRun(store, agent, { script: 'fork-test.ts', input: { steps: 4 }, runId: 'origin' });
    assert.equal(origin.status, 'completed');
    effects.length = 0;
    const fork = await forkRun(store, agent, { script: 'fork-test.ts', runId: 'fork', from: 'origin', stepIdx: 2 });
    assert.equal(fork.status, 'completed');
    assert.deepEqual(fork.output, [0, 1, 2, 3]);
    assert.equal(fork.stats.stepsReplayed, 2);
    assert.equal(fork.stats.stepsRun, 2);
    assert.deepEqual(effects, ['note:fork:2', 'note:fork:3']);
    const row = store.reader.run('fork');
    assert.equal(row?.forked_from, 'origin');
    assert.equal(row?.forked_at_step, 2);
    // The inherited steps' actions stay in the origin: compensating the fork must not undo the origin's effects.
    assert.deepEqual(
      [...store.reader.allActions('fork')].map((a) => a.id),
      ['note:fork:2', 'note:fork:3'],
    );
    assert.ok(store.reader.events('fork').some((e) => e.kind === 'run.forked'));
  });

  it('refuses a fork point past an unfinished step and writes nothing', () => {
    dbOf(store.db)
      .prepare("INSERT INTO runs (id, agent, script, input, status, attempt, created_at, updated_at) VALUES ('o', 'fork-test', 's', '{}', 'running', 1, 0, 0)")
      .run();
    dbOf(store.db)
      .prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('o', 0, 'a', 'completed', 1, 0), ('o', 1, 'b', 'started', 1, 0)")
      .run();
    dbOf(store.db)
      .prepare("INSERT INTO runs (id, agent, script, input, status, attempt, created_at, updated_at) VALUES ('f', 'fork-test', 's', '{}', 'running', 1, 0, 0)")
      .run();
    assert.throws(() => copyStepsForFork(dbOf(store.db), store.reader, 'o', 'f', 2), /step #2 "b" has no checkpoint/);
    assert.throws(() => copyStepsForFork(dbOf(store.db), store.reader, 'o', 'f', 4), /step #2 "b" has no checkpoint/);
    dbOf(store.db).prepare("UPDATE steps SET status = 'completed' WHERE run_id = 'o'").run();
    assert.throws(() => copyStepsForFork(dbOf(store.db), store.reader, 'o', 'f', 3), /step #3 was never journaled/);
    assert.throws(() => copyStepsForFork(dbOf(store.db), store.reader, 'nope', 'f', 1), /not in this journal/);
    assert.equal(store.reader.stepCount('f'), 0);
    assert.equal(copyStepsForFork(dbOf(store.db), store.reader, 'o', 'f', 1), 1);
    assert.equal(store.reader.step('f', 0)?.attempt, 0);
  });

  it('refuses to fork a run of another agent', async () => {
    await startRun(store, agent, { script: 'fork-test.ts', input: { steps: 1 }, runId: 'origin' });
    const other = defineAgent({ name: 'other', input: z.object({ steps: z.number() }), run: () => null });
    await assert.rejects(forkRun(store, other, { script: 'o.ts', from: 'origin', stepIdx: 1 }), /of agent fork-test with the script of agent other/);
    assert.equal(store.reader.runCount(), 1);
  });
});
