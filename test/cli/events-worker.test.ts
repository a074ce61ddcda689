// run.waitFor under `logbook worker` on a SQLite file: a waiting run holds no lease, and a worker continues it when its
// event arrives or its timeout passes (test/pg/events.test.ts runs the same on PostgreSQL).

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { concurrentSends, workerContinuesOnEvent, workerTimesOut } from '../pg/eventWorkers';
import type { Env } from '../pg/workers';

describe('run.waitFor under workers (SQLite)', function () {
  this.timeout(180_000);
  const env = (): Env => {
    const dir = tmpDir('logbook-events-worker-');
    return { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
  };

  it('a worker releases the run at its wait; send --no-resume keeps the event, and a worker continues the run with it', async () => {
    await workerContinuesOnEvent(env());
  });

  it('a worker killed while the run waits: another claims it when the journaled timeout passes, and the wait returns undefined', async () => {
    await workerTimesOut(env());
  });

  it('four processes send one dedupe id at once: one keeps it; sends racing resumes: each event taken once', async () => {
    await concurrentSends(env());
  });
});
