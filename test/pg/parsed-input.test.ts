// Issue 19 case 2 on PostgreSQL: a detached run's workers (one killed after the charge) get the input parsed at detach.

import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { detachedAttemptsSeeParsedInput } from '../priced';
import { usePgServer } from './server';

describe('run --detach and workers on PostgreSQL: every attempt sees the parsed input', function () {
  this.timeout(300_000);
  const pg = usePgServer();

  it('the killed attempt and the one that takes over get the input the schema made once', async () => {
    const dir = tmpDir('logbook-priced-pg-');
    await detachedAttemptsSeeParsedInput({ db: pg.server.createDatabase(), dir, ledger: path.join(dir, 'ledger.log') }, 'queued-pg');
  });
});
