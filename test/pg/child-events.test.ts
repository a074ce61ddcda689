// run.child with run.waitFor, run.sleep and cancel together, on a real PostgreSQL server (scenarios in
// test/child/eventsHarness.ts).

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { usePgServer } from './server';
import type { Env } from './workers';
import { childEventScenarios } from '../child/eventsHarness';

describe('run.child whose child waits, sleeps or is cancelled (PostgreSQL, real processes)', function () {
  this.timeout(240_000);
  const pg = usePgServer();
  childEventScenarios((): Env => {
    const dir = tmpDir('logbook-pg-child-ev-');
    return { db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') };
  });
});
