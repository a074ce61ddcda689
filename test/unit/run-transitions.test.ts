// One table says which run status follows which (policy.ts), and the store refuses, writing nothing, any other.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAgent, openJournal } from '../../src/runtime/public';
import { RUN_TRANSITIONS, transitionAllowed } from '../../src/runtime/policy';
import { RUN_STATUSES } from '../../src/runtime/types';
import { openStore } from '../../src/runtime/store';
import { acquireRun } from '../../src/runtime/store/lease';
import { withNewSession } from '../../src/runtime/store/owner';
import { RunWriter } from '../../src/runtime/store/writer';
import { tmpDir } from '../helpers';

const agent = defineAgent({ name: 'transitions', input: z.object({}), run: async (run) => run.step('one', () => 1) });

describe('run status transitions', () => {
  it('the table names every stored status; a compensated run can only be compensated again', () => {
    assert.deepEqual(Object.keys(RUN_TRANSITIONS).sort(), [...RUN_STATUSES].sort());
    for (const to of Object.values(RUN_TRANSITIONS).flat()) assert.ok((RUN_STATUSES as readonly string[]).includes(to), to);
    assert.deepEqual(RUN_TRANSITIONS.compensated, ['compensating']);
    assert.equal(transitionAllowed('completed', 'running'), false);
    assert.equal(transitionAllowed('failed', 'running'), true);
  });

  it('the store refuses an illegal change with LB_ILLEGAL_TRANSITION, as a journal error, and writes nothing', async () => {
    const file = path.join(tmpDir('transitions'), 'journal.db');
    const journal = openJournal({ journal: file, agents: [agent] });
    try {
      assert.equal((await journal.start(agent, {}, { runId: 't-1' })).status, 'completed');
    } finally {
      journal.close();
    }
    const store = openStore(file);
    try {
      const before = JSON.stringify(store.reader.run('t-1'));
      const events = store.reader.events('t-1').length;
      // A completed run taken for a resume straight in the store (the engine's own check would refuse it first).
      assert.throws(
        () => withNewSession('test', (owner) => acquireRun(store.db, store.reader, 't-1', owner, { status: 'running', newAttempt: true, purpose: 'resume' })),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.ILLEGAL_TRANSITION && /from completed to running/.test(e.message),
      );
      assert.equal(JSON.stringify(store.reader.run('t-1')), before, 'the run is as it was');
      assert.equal(store.reader.events('t-1').length, events, 'no event was written');
      // A session that took the run to compensate it cannot record it completed again.
      const lease = withNewSession('test', (owner) =>
        acquireRun(store.db, store.reader, 't-1', owner, { status: 'compensating', newAttempt: true, purpose: 'compensate' }),
      );
      const writer = new RunWriter(store.db, lease, store.reader.nextActionSeq('t-1'));
      assert.throws(
        () => writer.runStatus('completed'),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.ILLEGAL_TRANSITION,
      );
      assert.equal(store.reader.run('t-1')?.status, 'compensating');
      writer.runStatus('compensated');
      assert.equal(store.reader.run('t-1')?.status, 'compensated');
      writer.release();
    } finally {
      store.close();
    }
  });
});
