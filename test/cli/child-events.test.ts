// run.child with run.waitFor, run.sleep and cancel together, on a SQLite journal (scenarios in test/child/eventsHarness.ts).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openJournal } from '../../src/runtime/public';
import type { LogbookError } from '../../src/runtime/errors';
import inquirer, { listener } from '../fixtures/child/inquirer';
import { tmpDir } from '../helpers';
import type { Env } from '../pg/workers';
import { childEventScenarios } from '../child/eventsHarness';

function sqlite(): Env {
  const dir = tmpDir('logbook-child-ev-');
  return { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
}

describe('run.child whose child waits, sleeps or is cancelled (SQLite, real processes)', function () {
  this.timeout(240_000);
  childEventScenarios(sqlite);
});

describe('run.child whose child waits, through the host API (openJournal, one process)', function () {
  this.timeout(60_000);

  it('run() names the child and its event; send to the parent is refused; two resumes of the parent at once: one drives, one is refused; a resume of the child alongside one of the parent: both complete, every effect once', async () => {
    const dir = tmpDir('logbook-child-ev-api-');
    const before = process.env.LOGBOOK_STATE_DIR;
    process.env.LOGBOOK_STATE_DIR = dir;
    const j = openJournal({ journal: path.join(dir, 'journal.db'), agents: [inquirer, listener] });
    try {
      const first = await j.start(inquirer, { holdMs: 300 }, { runId: 'h' });
      assert.equal(first.status, 'waiting');
      assert.deepEqual(first.waitingFor, { event: 'reply', until: null, runId: 'h.child-2' });
      assert.deepEqual(j.run('h')?.waitingFor, { event: 'reply', until: null, runId: 'h.child-2' });
      assert.throws(
        () => j.send('h', 'reply', { text: 'no' }),
        (err: LogbookError) => err.code === 'LB_EVENT_REFUSED' && /h\.child-2/.test(err.remedy),
      );
      j.send('h.child-2', 'reply', { text: 'yes' });
      const both = await Promise.allSettled([j.resume('h'), j.resume('h')]);
      assert.deepEqual(both.map((r) => (r.status === 'fulfilled' ? r.value.status : (r.reason as LogbookError).code)).sort(), ['LB_LEASE_HELD', 'completed']);
      await j.start(inquirer, { holdMs: 300 }, { runId: 'g' });
      j.send('g.child-2', 'reply', { text: 'yes' });
      const [g, kid] = await Promise.all([j.resume('g'), j.resume('g.child-2')]);
      assert.equal(g.status, 'completed');
      assert.equal(kid.status, 'completed');
      assert.deepEqual(g.output, { got: 'yes' });
    } finally {
      j.close();
      if (before === undefined) delete process.env.LOGBOOK_STATE_DIR;
      else process.env.LOGBOOK_STATE_DIR = before;
    }
    const lines = fs.readFileSync(path.join(dir, 'ledger.log'), 'utf8').trim().split('\n');
    assert.equal(new Set(lines).size, lines.length, lines.join('\n'));
    assert.equal(lines.length, 8);
  });
});
