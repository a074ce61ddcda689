// run.sleep under workers on a real PostgreSQL server: the long sleep holds no lease, and another worker wakes it when due.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { usePgServer } from './server';
import { cliSync, startWorker, stopWorker, withStore, type Env } from './workers';

const FOLDER = path.join(FIXTURES, 'sleep');

describe('run.sleep on PostgreSQL', function () {
  this.timeout(180_000);
  const pg = usePgServer();

  it('a worker releases the sleeping run (no lease); killed, another worker claims it when due and it completes after its wake time', async () => {
    const dir = tmpDir('logbook-pg-sleep-');
    const e: Env = { db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') };
    const q = cliSync(e, ['run', '--detach', path.join(FOLDER, 'sleeper.ts'), '--run-id', 's', '--input', '{"sleep":"3s"}']);
    assert.equal(q.status, 0, q.stderr);
    const env = { LOGBOOK_SLEEP_RELEASE_MS: '500' };
    const a = startWorker(e, 'pa', [], FOLDER, env);
    let b;
    try {
      await a.waitLine(/s sleeping until/);
      const row = withStore(e, (s) => s.reader.run('s'));
      assert.equal(row?.status, 'sleeping');
      assert.equal(row?.lease_token, null);
      const wakeAt = row?.wake_at ?? assert.fail('no wake time');
      a.child.kill('SIGKILL');
      await a.exited;
      b = startWorker(e, 'pb', [], FOLDER, env);
      await b.waitLine(/s completed/);
      const out = JSON.parse(withStore(e, (s) => s.reader.run('s')?.output) ?? 'null') as { wokeAt: number };
      assert.ok(out.wokeAt >= wakeAt, 'woken when due, not before');
    } finally {
      await stopWorker(a);
      if (b) await stopWorker(b);
    }
  });
});
