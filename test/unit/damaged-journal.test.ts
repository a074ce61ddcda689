// A damaged value found while the script runs (not by the check before the attempt): the script that catches it cannot
// go on, nothing new starts, no declared policy fires, and the run stops resumable (issue 19 case 3).

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, resumeRun, startRun, type Store } from '../../src/runtime';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { tmpDir } from '../helpers';

const world = { charged: 0, refunded: 0, lastRan: 0 };
const caught: unknown[] = [];
const charge = defineAction({
  type: 'damaged-unit.charge',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({}),
  key: (_a, run) => `charge:${run.id}`,
  execute: () => ({ n: ++world.charged }),
  compensate: () => void world.refunded++,
});

const agent = defineAgent({
  name: 'damaged-unit',
  input: z.object({}),
  onFailure: 'compensate',
  async run(run) {
    await run.step('charge', () => run.do(charge, {}));
    try {
      await run.step('flaky', () => {
        throw new Error('declined');
      });
    } catch (err) {
      caught.push(err);
    }
    await run.step('middle', () => 'ok');
    await run.step('last', () => ++world.lastRan);
    return 'done';
  },
});

describe('a damaged value met during replay (issue 19 case 3)', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = tmpDir();
    store = openStore(path.join(dir, 'journal.db'));
    Object.assign(world, { charged: 0, refunded: 0, lastRan: 0 });
    caught.length = 0;
  });
  afterEach(() => store.close());

  it('a failed step whose error is JSON but no error record: the catch gets LB_JOURNAL_INVALID, and the run stops there', async () => {
    // The first attempt stops (on the host's request) before step "last", with "flaky" journaled as failed and caught.
    let stop = false;
    const first = await startRun(store, agent, {
      script: 'd.ts',
      input: {},
      runId: 'd',
      log: () => undefined,
      hooks: {
        shouldStop: () => stop,
        pause: (ev) => {
          stop ||= ev.kind === 'step:after' && ev.step?.name === 'middle';
          return Promise.resolve();
        },
      },
    });
    assert.equal(first.status, 'interrupted');
    assert.equal(caught.length, 1);
    // Valid JSON, so the check before the attempt lets it through; replay finds it is not an error record.
    const raw = new Database(path.join(dir, 'journal.db'));
    raw.prepare("UPDATE steps SET error = '42' WHERE run_id = 'd' AND name = 'flaky'").run();
    raw.close();
    const logs: string[] = [];
    const out = await resumeRun(store, agent, 'd', { log: (l) => logs.push(l) });
    assert.equal(out.status, 'interrupted', JSON.stringify(out));
    assert.equal(out.error?.code, ErrorCodes.JOURNAL_INVALID);
    assert.match(out.error?.message ?? '', /run d is damaged: step #2 "flaky", column error holds JSON that is not an error record/);
    const err = caught[1];
    assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, `the script's catch got ${String(err)}`);
    assert.equal(world.lastRan, 0, 'the step after the catch did not run');
    assert.equal(world.refunded, 0, 'onFailure: compensate did not fire');
    assert.equal(world.charged, 1);
    const row = store.reader.run('d');
    assert.equal(row?.status, 'running', 'no status written: shown interrupted, resumable');
    assert.equal(row?.lease_token, null);
    assert.equal(store.reader.step('d', 3), undefined, 'step "last" was never started');
    assert.ok(!store.reader.events('d').some((e) => e.kind === 'run.failed' || (e.kind === 'step.failed' && e.attempt === 2)));
    assert.ok(
      logs.some((l) => /stopped because its journal failed; it is resumable/.test(l)),
      logs.join('\n'),
    );
  });
});
