// `logbook worker` through a PostgreSQL crash: the server restarted with `pg_ctl -m immediate` while workers drive runs.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { usePgServer } from './server';
import { detachMany, effectCounts, expectedKeys, ledger, startWorker, stopWorker, waitFor, withStore, type Env } from './workers';

describe('logbook worker across a PostgreSQL crash (pg_ctl -m immediate)', function () {
  this.timeout(300_000);
  const pg = usePgServer();

  it('keeps everything committed; the workers reconnect and finish every run, each effect once', async () => {
    const dir = tmpDir('logbook-worker-restart-');
    const e: Env = { db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') };
    const ids = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    await detachMany(
      e,
      ids.map((id) => ({ id, input: { items: 4, pauseMs: 250 } })),
    );
    const workers = [startWorker(e, 'w1', ['--concurrency', '3']), startWorker(e, 'w2', ['--concurrency', '3'])];
    try {
      await waitFor('runs under way', () => ledger(e).length >= 8 || undefined, 120_000, 20);
      // What is committed before the crash, read from the server itself.
      const before = withStore(e, (s) =>
        ids.flatMap((id) => [...s.reader.allActions(id)].filter((a) => a.status === 'committed').map((a) => ({ id: a.id, result: a.result }))),
      );
      assert.ok(before.length > 0, 'some actions committed before the crash');
      pg.server.restartImmediate();
      await waitFor('every run completed', () => withStore(e, (s) => ids.every((id) => s.reader.run(id)?.status === 'completed') || undefined), 180_000, 500);
      withStore(e, (s) => {
        assert.ok(
          ids.some((id) => (s.reader.run(id)?.attempt ?? 0) >= 2),
          'the crash stopped runs in flight, and they were resumed',
        );
        for (const b of before) {
          const runId = b.id.split(':')[1] ?? '';
          const a = s.reader.action(runId, b.id);
          assert.equal(a?.status, 'committed', `${b.id} committed before the crash is still committed`);
          assert.equal(a.result, b.result, `${b.id} keeps its result`);
        }
      });
      for (const w of workers) assert.equal(w.child.exitCode, null, `worker ${w.name} is still running after the crash`);
      for (const w of workers) assert.equal((await stopWorker(w)).code, 0, `worker ${w.name} stops cleanly`);
    } finally {
      for (const w of workers) w.child.kill('SIGKILL');
    }
    const counts = effectCounts(e);
    for (const id of ids) for (const k of expectedKeys(id, 4)) assert.equal(counts.get(k), 1, `effect ${k} happened once`);
    assert.equal(ledger(e).length, ids.length * 5, 'no effect beyond the ones asked for');
  });
});
