// The blocked caller and a PgDb thread that is gone: it fails with a storage error (exit 5), it never hangs.

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PgDb } from '../../src/runtime/store/pg/pgDb';
import { ErrorCodes, LogbookError, exitCodeOf } from '../../src/runtime/errors';
import { ROOT } from '../helpers';
import { usePgServer } from './server';

function failure(fn: () => unknown): LogbookError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LogbookError) return err;
    throw err;
  }
  throw new Error('expected it to throw');
}

describe('PgDb when its PostgreSQL thread is gone', () => {
  const pg = usePgServer();

  it('a PG thread that dies mid-query (out of memory): the caller gets LB_DB_IO, exit 5, and every later call the same; the server rolled back its open transaction', () => {
    const url = pg.server.createDatabase();
    pg.server.psql('CREATE TABLE t (x int)', url.split('/').pop());
    const db = new PgDb(url, { threadHeapMb: 16 });
    assert.equal(db.prepare('SELECT 1 AS one').pluck().get(), 1, 'the worker answers at first');
    const tx = db.transaction(() => {
      db.prepare('INSERT INTO t VALUES (?)').run(7);
      // A million rows of 1 kB in a worker whose heap is capped at 16 MB: the thread dies while answering.
      return db.prepare("SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 1000000) AS g").all().length;
    });
    const err = failure(() => tx.immediate());
    assert.equal(err.code, ErrorCodes.DB_IO);
    assert.equal(exitCodeOf(err.code), 5);
    assert.match(err.message, /PostgreSQL thread (exited|stopped)/);
    assert.match(err.message, /Nothing journaled was lost/);
    assert.ok(err.remedy.length > 0);
    assert.equal(failure(() => db.prepare('SELECT 1').get()).code, ErrorCodes.DB_IO, 'a later call fails the same way, at once');
    db.close();
    assert.equal(pg.server.psql('SELECT count(*) FROM t', url.split('/').pop()), '0', 'the uncommitted insert was rolled back');
  });

  it('a CLI bundle without dist/pgThread.js: exits 5 with LB_DB_IO naming the missing file, instead of blocking', () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'cli.js')), 'dist/ is built (node scripts/build.mjs)');
    // Inside the repository, so the bundle still finds node_modules.
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'no-worker-'));
    let r;
    try {
      for (const f of fs.readdirSync(path.join(ROOT, 'dist')))
        if (f !== 'pgThread.js' && f.endsWith('.js')) fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(dir, f));
      r = spawnSync(process.execPath, [path.join(dir, 'cli.js'), 'ls', '--journal', pg.server.createDatabase()], { encoding: 'utf8', timeout: 60_000 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(r.signal, null, 'it did not hang');
    assert.equal(r.status, 5, r.stderr);
    assert.match(r.stderr, /LB_DB_IO/);
    assert.match(r.stderr, /pgThread\.js is missing/);
  });
});
