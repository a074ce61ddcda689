// run.child with run.waitFor, run.sleep and cancel together, on a SQLite journal (scenarios in test/child/eventsHarness.ts).

import * as path from 'node:path';
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
