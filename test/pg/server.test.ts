// The test harness itself: a real server with fsync on, whose committed rows survive a crash-restart.
import * as assert from 'node:assert/strict';
import { usePgServer } from './server';
describe('pg harness', () => {
  const pg = usePgServer();
  it('starts a server with fsync on, makes databases, survives an immediate restart', () => {
    assert.equal(pg.server.psql('SHOW fsync'), 'on');
    const url = pg.server.createDatabase();
    const db = url.split('/').pop()!;
    pg.server.psql('CREATE TABLE t (x int); INSERT INTO t VALUES (1)', db);
    pg.server.restartImmediate();
    assert.equal(pg.server.psql('SELECT count(*) FROM t', db), '1');
  });
});
