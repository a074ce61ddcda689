// run.waitFor and `logbook send` on a real PostgreSQL server: the same worker scenarios as on SQLite.

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { usePgServer } from './server';
import { concurrentSends, workerContinuesOnEvent, workerTimesOut } from './eventWorkers';
import type { Env } from './workers';

describe('run.waitFor on PostgreSQL', function () {
  this.timeout(180_000);
  const pg = usePgServer();
  const env = (): Env => {
    const dir = tmpDir('logbook-pg-events-');
    return { db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') };
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
