// A journal transaction reaches PostgreSQL as one query (one round trip), its fence included, as the server's own statement log shows.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { openStore } from '../../src/runtime/store';
import { createRun } from '../../src/runtime/store/lease';
import { RunWriter } from '../../src/runtime/store/writer';
import * as os from 'node:os';
import { beginSession, currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { dbOf } from '../../src/runtime/store/db';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { acquireRun } from '../../src/runtime/store/lease';
import { usePgServer } from './server';

/** An owner on this node whose process is gone (as test/store/contract.test.ts makes them): another may take its run over. */
const deadOwner = (): Owner => ({
  token: `token-${Math.random()}`,
  pid: 4_000_000 + Math.floor(Math.random() * 100_000),
  pidStart: '1',
  host: hostField(os.hostname(), currentNode()),
  label: 'dead round trips',
});

/** The server log's statement entries written while `fn` ran, leaving out the PG thread's own lease renewals and notifications. */
function statementsDuring(log: string, fn: () => void): string[] {
  const before = fs.statSync(log).size;
  fn();
  const text = fs.readFileSync(log, 'utf8').slice(before);
  return text
    .split(/\n(?=\S)/)
    .filter((e) => /LOG:\s+(statement|execute)/.test(e))
    .filter((e) => !/UPDATE runs SET lease_expires|pg_notify|NOTIFY/i.test(e));
}

describe('PostgreSQL: one round trip per journal transaction', function () {
  this.timeout(120_000);
  const pg = usePgServer();

  it('sends an action started (BEGIN, fence, its rows, COMMIT) as one query, and a stale fence still writes nothing', () => {
    const url = pg.server.createDatabase('roundtrips');
    pg.server.psql("ALTER DATABASE roundtrips SET log_statement = 'all'");
    const store = openStore(url);
    try {
      const lease = createRun(dbOf(store.db), store.reader, { id: 'rt', agent: 'a', script: 's.ts', input: null }, deadOwner());
      const w = new RunWriter(store.db, lease, 1);
      const action = (id: string) => ({ id, stepIdx: 0, type: 'mail.send', version: 1, effect: 'non-idempotent' as const, args: '{"to":"o\'brien"}' });
      const sent = statementsDuring(pg.server.log, () => w.actionStarted(action('send:1'), false));
      assert.equal(sent.length, 1, `one query for the whole transaction, not:\n${sent.join('\n---\n')}`);
      assert.match(sent[0]!, /statement: BEGIN;[\s\S]*SELECT logbook_fence\([\s\S]*INSERT INTO actions[\s\S]*INSERT INTO events[\s\S]*COMMIT/);
      assert.equal(store.reader.action('rt', 'send:1')?.args, '{"to":"o\'brien"}', 'the inlined text arrives as it was');

      // Taken over: the stale writer's fence fails inside the server, and nothing of its transaction is written.
      acquireRun(store.db, store.reader, 'rt', beginSession('taker'), { status: 'running', newAttempt: true, purpose: 'resume' });
      const events = store.reader.eventCount('rt');
      let err: unknown;
      try {
        w.actionStarted(action('send:2'), false);
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST, String(err));
      assert.equal(store.reader.eventCount('rt'), events);
      assert.equal(store.reader.action('rt', 'send:2'), undefined);
      w.release();
    } finally {
      store.close();
    }
  });

  it("sends a bracket as two queries: the call's count waits for the commit of its end, and nothing counts it before", () => {
    const url = pg.server.createDatabase('bracket2');
    pg.server.psql("ALTER DATABASE bracket2 SET log_statement = 'all'");
    const store = openStore(url);
    try {
      const lease = createRun(dbOf(store.db), store.reader, { id: 'b2', agent: 'a', script: 's.ts', input: null }, deadOwner());
      const w = new RunWriter(store.db, lease, 1);
      const a = { id: 'send:1', stepIdx: 0, type: 'mail.send', version: 1, effect: 'non-idempotent' as const, args: '{}' };
      assert.equal(statementsDuring(pg.server.log, () => w.actionStarted(a, false)).length, 1);
      assert.deepEqual(
        statementsDuring(pg.server.log, () => w.actionExecuting(0, a.id)),
        [],
        'the count is held: no round trip before the call',
      );
      assert.equal(store.reader.action('b2', a.id)?.executions, 0);
      const settle = statementsDuring(pg.server.log, () => w.actionCommitted(0, a.id, '{"ok":true}'));
      assert.equal(settle.length, 1, settle.join('\n---\n'));
      assert.match(
        settle[0]!,
        /BEGIN;[\s\S]*logbook_fence\([\s\S]*executions = executions \+ 1[\s\S]*'action\.executing'[\s\S]*status = 'committed'[\s\S]*COMMIT/,
      );
      assert.equal(store.reader.action('b2', a.id)?.executions, 1);
      w.release();
    } finally {
      store.close();
    }
  });
});
