// A compensation refused before any inverse runs changes nothing (issue 19 case 7): journal.compensate on a run whose
// committed or in-doubt action has a type this process does not define leaves its status, attempt and events as they were.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAgent, openJournal } from '../../src/runtime/public';
import { openStore } from '../../src/runtime/store';
import { createRun } from '../../src/runtime/store/lease';
import { beginSession } from '../../src/runtime/store/owner';
import { RunWriter } from '../../src/runtime/store/writer';
import { tmpDir } from '../helpers';
import { dbOf } from '../../src/runtime/store/db';

const shop = defineAgent({
  name: 'refusal-shop',
  input: z.object({}),
  async run(run) {
    const charged = await run.step('charge', () => 'never run: replayed from its checkpoint');
    await run.step('ship', () => 'shipped');
    return { charged };
  },
});

/**
 * Journals a failed run the way an older deploy of the host left it: its first step charged with an action type
 * (`refusal.legacy-charge`) that no code of this process defines, committed or (with `inDoubt`) left in doubt.
 */
function legacyRun(file: string, runId: string, inDoubt: boolean): void {
  const store = openStore(file);
  try {
    const w = new RunWriter(
      dbOf(store.db),
      createRun(dbOf(store.db), store.reader, { id: runId, agent: shop.name, script: `api:${shop.name}`, input: '{}' }, beginSession('older deploy')),
      1,
    );
    const id = `legacy:${runId}`;
    w.stepStarted(0, 'charge', false);
    w.actionStarted({ id, stepIdx: 0, type: 'refusal.legacy-charge', version: 1, effect: 'non-idempotent', args: '{}' }, false);
    if (!inDoubt) {
      w.actionCommitted(0, id, JSON.stringify({ id: 'ch-1' }));
      w.stepCompleted(0, JSON.stringify('ch-1'));
      w.stepStarted(1, 'ship', false);
      w.stepFailed(1, { name: 'Error', message: 'the courier is down' });
    }
    w.runStatus('failed', { error: { name: 'Error', message: 'the courier is down' } });
    w.release();
  } finally {
    store.close();
  }
}

function journaled(file: string, runId: string): { run: unknown; events: unknown[] } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      run: db.prepare('SELECT * FROM runs WHERE id = ?').get(runId),
      events: db.prepare('SELECT * FROM events WHERE run_id = ? ORDER BY seq').all(runId),
    };
  } finally {
    db.close();
  }
}

describe('host API: a compensation refused before any inverse runs', () => {
  for (const inDoubt of [false, true]) {
    it(`${inDoubt ? 'an in-doubt' : 'a committed'} action of a type this process does not define: LB_UNKNOWN_ACTION_TYPE, and the run is unchanged`, async () => {
      const file = path.join(tmpDir('logbook-refusal-'), 'journal.db');
      legacyRun(file, 'k1', inDoubt);
      const journal = openJournal({ journal: file, agents: [shop], log: () => undefined });
      try {
        const before = journaled(file, 'k1');
        const err = await journal.compensate('k1').then(
          (report) => assert.fail(`expected a refusal, got ${JSON.stringify(report)}`),
          (e: unknown) => e,
        );
        assert.ok(err instanceof LogbookError && err.code === ErrorCodes.UNKNOWN_ACTION_TYPE, String(err));
        assert.match(err.message, /refusal\.legacy-charge/);
        assert.deepEqual(journaled(file, 'k1'), before, 'no status, attempt or event was written');
        assert.equal(journal.run('k1')?.status, 'failed');
        if (!inDoubt) {
          // Still resumable: the run goes forward as if the compensation had never been asked for.
          const out = await journal.resume('k1');
          assert.equal(out.status, 'completed');
          assert.deepEqual(out.output, { charged: 'ch-1' });
        }
      } finally {
        journal.close();
      }
    });
  }

  it('a declared onFailure: compensate that would be refused the same way leaves the run failed and resumable', async () => {
    const file = path.join(tmpDir('logbook-refusal-'), 'journal.db');
    legacyRun(file, 'k2', false);
    let courierDown = true;
    const declared = defineAgent({
      name: shop.name,
      input: z.object({}),
      onFailure: 'compensate',
      async run(run) {
        const charged = await run.step('charge', () => 'never run: replayed from its checkpoint');
        await run.step('ship', () => {
          if (courierDown) throw new Error('the courier is still down');
          return 'shipped';
        });
        return { charged };
      },
    });
    const lines: string[] = [];
    const journal = openJournal({ journal: file, agents: [declared], log: (l) => lines.push(l) });
    try {
      const out = await journal.resume('k2');
      assert.equal(out.status, 'failed', JSON.stringify(out));
      assert.equal(out.compensation, undefined, 'no compensation was attempted');
      assert.ok(
        lines.some((l) => /declared policy cannot compensate it, so it stays failed: .*refusal\.legacy-charge/.test(l)),
        lines.join('\n'),
      );
      const events = journaled(file, 'k2').events as Array<{ kind: string }>;
      assert.ok(!events.some((e) => e.kind.startsWith('compensation.') || e.kind === 'run.compensation-failed'), events.map((e) => e.kind).join(', '));
      courierDown = false;
      assert.equal((await journal.resume('k2')).status, 'completed');
    } finally {
      journal.close();
    }
  });
});
