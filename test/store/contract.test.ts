// The store interface's contract, run case for case against both journals: a SQLite file and a real PostgreSQL server.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore, type Store } from '../../src/runtime/store';
import { createRun, acquireRun } from '../../src/runtime/store/lease';
import { RunWriter } from '../../src/runtime/store/writer';
import { beginSession, currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { LATEST_VERSION, MIGRATIONS } from '../../src/runtime/store/migrations';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { ErrorCodes, LogbookError, exitCodeOf } from '../../src/runtime/errors';
import { ROOT, tmpDir } from '../helpers';
import { usePgServer, type PgServer } from '../pg/server';
import { dbOf } from '../../src/runtime/store/db';

interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** A new, empty journal target (a file path or a connection string). */
  fresh(): string;
}

/** An owner on this node whose process is gone: its lease is not live, so another owner may take the run over. */
function deadOwner(label: string): Owner {
  return {
    token: `token-${label}-${Math.random()}`,
    pid: 4_000_000 + Math.floor(Math.random() * 100_000),
    pidStart: '1',
    host: hostField(os.hostname(), currentNode()),
    label: `dead ${label}`,
  };
}

/** A live driving session of this process: its lease is live while the session is (a lease belongs to a session). */
function liveOwner(label: string): Owner {
  return beginSession(`live ${label}`);
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof LogbookError ? err.code : `not a LogbookError: ${String(err)}`;
  }
  return undefined;
}

const action = (id: string) => ({ id, stepIdx: 0, type: 'email.send', version: 1, effect: 'non-idempotent' as const, args: JSON.stringify({ to: id }) });

/** Opens the same journal in a child process (another connection, another process) and prints what `script` returns. */
function inChild(target: string, script: string): Promise<{ code: number | null; out: string; err: string }> {
  const src = `const { openStore } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/store'))}); const target = ${JSON.stringify(target)};\n${script}`;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', src], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (c) => resolve({ code: c, out: out.trim(), err }));
  });
}

function contract(backend: () => Backend): void {
  let store: Store;
  let target: string;
  beforeEach(() => {
    target = backend().fresh();
    store = openStore(target);
  });
  afterEach(() => store.close());

  it('creates a run holding epoch 1, and refuses a second run with the same id', () => {
    const lease = createRun(dbOf(store.db), store.reader, { id: 'r1', agent: 'a', script: 's.ts', input: null }, liveOwner('creator'));
    assert.equal(lease.epoch, 1);
    const row = store.reader.run('r1');
    assert.equal(row?.status, 'running');
    assert.equal(row?.lease_epoch, 1);
    assert.ok((row?.lease_expires ?? 0) > dbOf(store.db).now(), 'the lease expires in the future by the clock leases are measured by');
    assert.equal(
      code(() => createRun(dbOf(store.db), store.reader, { id: 'r1', agent: 'a', script: 's.ts', input: null }, liveOwner('x'))),
      ErrorCodes.RUN_EXISTS,
    );
  });

  it('fences: a live holder keeps the run; after a takeover the stale epoch writes 0 rows and throws LB_LEASE_LOST', () => {
    createRun(dbOf(store.db), store.reader, { id: 'r2', agent: 'a', script: 's.ts', input: null }, liveOwner('holder'));
    assert.equal(
      code(() => acquireRun(store.db, store.reader, 'r2', liveOwner('rival'), { status: 'running', newAttempt: true, purpose: 'resume' })),
      ErrorCodes.LEASE_HELD,
    );

    const first = createRun(dbOf(store.db), store.reader, { id: 'r3', agent: 'a', script: 's.ts', input: null }, deadOwner('first'));
    const stale = new RunWriter(store.db, first, 1);
    stale.stepStarted(0, 'one', false);
    stale.stepCompleted(0, '"one"');
    const taken = acquireRun(store.db, store.reader, 'r3', liveOwner('second'), { status: 'running', newAttempt: true, purpose: 'resume' });
    assert.equal(taken.epoch, 2);
    const events = store.reader.eventCount('r3');
    // The fence itself: the renewing UPDATE with the old epoch matches no row.
    const renew = dbOf(store.db).prepare(dbOf(store.db).dialect.renewLease);
    assert.equal(renew.run(...dbOf(store.db).dialect.renewParams(Date.now(), 1000, 'r3', first.token, first.epoch)).changes, 0);
    assert.equal(
      code(() => stale.actionStarted(action('k1'), false)),
      ErrorCodes.LEASE_LOST,
    );
    // A transaction that reads a result half-way (the commit's event seq) is fenced before that read, too.
    assert.equal(
      code(() => stale.actionCommitted(0, 'k1', '"r"')),
      ErrorCodes.LEASE_LOST,
    );
    assert.ok(stale.signal.aborted, 'the writer that lost its lease aborts its in-flight work');
    assert.equal(
      code(() => stale.assertHolds()),
      ErrorCodes.LEASE_LOST,
      'and starts no new effect',
    );
    assert.equal(store.reader.eventCount('r3'), events, 'nothing more was written');
    assert.equal(store.reader.action('r3', 'k1'), undefined);
    const fresh = new RunWriter(store.db, taken, store.reader.nextActionSeq('r3'));
    fresh.actionStarted(action('k1'), false);
    assert.equal(store.reader.action('r3', 'k1')?.status, 'started');
    fresh.release();
    stale.release();
  });

  it('brackets an action: started is visible to another process before execute, committed after, and both replay', async () => {
    const lease = createRun(dbOf(store.db), store.reader, { id: 'b1', agent: 'a', script: 's.ts', input: null }, liveOwner('w'));
    const w = new RunWriter(store.db, lease, 1);
    w.stepStarted(0, 'send', false);
    w.actionStarted(action('email:1'), false);
    const seen = await inChild(
      target,
      "const s = openStore(target, { readonly: true }); console.log(JSON.stringify(s.reader.action('b1', 'email:1'))); s.close();",
    );
    assert.equal(seen.code, 0, seen.err);
    assert.equal((JSON.parse(seen.out) as { status: string }).status, 'started', 'started is durable and visible before the effect runs');
    w.actionExecuting(0, 'email:1');
    w.actionCommitted(0, 'email:1', '{"id":7}');
    w.stepCompleted(0, '"sent"');
    w.runStatus('completed', { output: '"done"' });
    w.release();
    const a = store.reader.action('b1', 'email:1');
    assert.equal(a?.status, 'committed');
    assert.equal(a?.executions, 1);
    assert.ok(typeof a?.commit_seq === 'number' && a.commit_seq > 0, 'commit_seq is the seq of the commit event');
    const steps = store.reader.replaySteps('b1', 0, 10);
    assert.deepEqual(
      steps.map((s) => [s.idx, s.name, s.status, s.result]),
      [[0, 'send', 'completed', '"sent"']],
    );
    const replay = store.reader.replayActionsOfStep('b1', 0, 0, 10);
    assert.deepEqual(
      replay.map((r) => [r.id, r.status, r.result]),
      [['email:1', 'committed', '{"id":7}']],
    );
    assert.deepEqual(store.reader.replayActionsOfStep('b1', 0, 1, 10), [], 'after the seq of its only action, nothing');
    assert.deepEqual(store.reader.replayActionsOfStep('b1', 1, 0, 10), [], 'another step has none of its actions');
    assert.deepEqual(
      store.reader.events('b1').map((e) => e.kind),
      ['run.started', 'step.started', 'action.started', 'action.executing', 'action.committed', 'step.completed', 'run.completed'],
    );
    assert.equal(store.reader.latestRun()?.id, 'b1');
    assert.equal(store.reader.view(store.reader.run('b1')!).effectiveStatus, 'completed');
  });

  it('commits lazily without leaving the connection at lazy durability, and the lazy record is kept', () => {
    const lease = createRun(dbOf(store.db), store.reader, { id: 'l1', agent: 'a', script: 's.ts', input: null }, liveOwner('w'));
    const w = new RunWriter(store.db, lease, 1);
    w.note('custom.note', { n: 1 });
    const durable =
      dbOf(store.db).kind === 'sqlite'
        ? sqliteOf(store.db).pragma('synchronous', { simple: true })
        : dbOf(store.db).prepare('SHOW synchronous_commit').pluck().get();
    assert.equal(durable, dbOf(store.db).kind === 'sqlite' ? 2 : 'on', 'the next commit is durable again');
    assert.equal(store.reader.events('l1').at(-1)?.kind, 'custom.note');
    w.release();
  });

  it('migrates idempotently: reopening changes nothing, and two processes opening a fresh journal at once migrate once', async () => {
    assert.equal(dbOf(store.db).schemaVersion(), LATEST_VERSION);
    store.close();
    store = openStore(target);
    assert.equal(dbOf(store.db).schemaVersion(), LATEST_VERSION);
    const other = backend().fresh();
    const open = 'const s = openStore(target); console.log(s.db.schemaVersion()); s.close();';
    const both = await Promise.all([inChild(other, open), inChild(other, open), inChild(other, open)]);
    for (const r of both) {
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, String(LATEST_VERSION));
    }
    const check = openStore(other);
    try {
      if (dbOf(check.db).kind === 'postgres') {
        assert.equal(
          dbOf(check.db).prepare('SELECT COUNT(*) FROM logbook_schema').pluck().get(),
          MIGRATIONS.length,
          'one row per migration: each applied once',
        );
      }
      assert.equal(check.reader.runCount(), 0);
    } finally {
      check.close();
    }
  });

  it('finds the first journaled value that is not JSON in a read scope, and only in it (issue 19 case 3)', () => {
    createRun(dbOf(store.db), store.reader, { id: 'd1', agent: 'a', script: 's.ts', input: '{}' }, deadOwner('damage'));
    const step = dbOf(store.db).prepare(
      "INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at) VALUES ('d1', ?, ?, ?, ?, NULL, 1, 0)",
    );
    step.run(0, 'first', 'completed', '{"ok":1}');
    step.run(1, 'second', 'completed', '{"ok":2}');
    step.run(2, 'open', 'started', null);
    const act = dbOf(store.db).prepare(
      "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, compensation_executions) VALUES ('d1', ?, ?, ?, 't', 1, 'idempotent', ?, ?, ?, 1, 1, 0, 0)",
    );
    act.run('done', 1, 0, '{}', 'committed', '{"r":1}');
    act.run('in-open', 2, 2, '{}', 'committed', '{"r":2}');
    const all = { steps: Number.MAX_SAFE_INTEGER, actions: 'all' } as const;
    assert.equal(store.reader.firstDamage('d1', all), undefined, 'an intact run has none');
    dbOf(store.db).prepare("UPDATE steps SET result = '{not json' WHERE run_id = 'd1' AND idx = 1").run();
    assert.deepEqual(store.reader.firstDamage('d1', all), { runId: 'd1', table: 'steps', idx: 1, name: 'second', column: 'result' });
    assert.equal(store.reader.firstDamage('d1', { steps: 1, actions: 'none' }), undefined, 'a fork at step #2 reads only step #1');
    dbOf(store.db).prepare("UPDATE steps SET result = '{\"ok\":2}' WHERE run_id = 'd1' AND idx = 1").run();
    dbOf(store.db).prepare("UPDATE actions SET result = 'nope' WHERE run_id = 'd1' AND id = 'done'").run();
    assert.equal(
      store.reader.firstDamage('d1', { steps: Number.MAX_SAFE_INTEGER, actions: 'open' }),
      undefined,
      'a resume does not read a committed action of a completed step',
    );
    assert.deepEqual(store.reader.firstDamage('d1', all), { runId: 'd1', table: 'actions', id: 'done', stepIdx: 0, column: 'result' });
    dbOf(store.db).prepare("UPDATE actions SET args = '[' WHERE run_id = 'd1' AND id = 'in-open'").run();
    assert.deepEqual(store.reader.firstDamage('d1', { steps: 0, actions: 'open' }), {
      runId: 'd1',
      table: 'actions',
      id: 'in-open',
      stepIdx: 2,
      column: 'args',
    });
    // The journal still answers afterwards (on PostgreSQL, the failed cast must not have broken the connection).
    assert.equal(store.reader.run('d1')?.id, 'd1');
  });

  it("reads replay's step headers without large results, each of those alone, and can leave them out of the damage check", () => {
    createRun(dbOf(store.db), store.reader, { id: 'h1', agent: 'a', script: 's.ts', input: '{}' }, deadOwner('heads'));
    const big = JSON.stringify({ text: 'x'.repeat(5000) });
    const step = dbOf(store.db).prepare("INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at) VALUES ('h1', ?, ?, ?, ?, ?, 1, 0)");
    step.run(0, 'small', 'completed', '{"ok":1}', null);
    step.run(1, 'big', 'completed', big, null);
    step.run(2, 'none', 'failed', null, '{"message":"m"}');
    step.run(3, 'list', 'completed', `[${big}]`, null);
    const heads = store.reader.replayStepHeads('h1', 0, 10, 100);
    assert.deepEqual(
      heads.map((h) => [h.idx, h.name, h.status, h.result, h.large, h.lead, h.error]),
      [
        [0, 'small', 'completed', '{"ok":1}', null, null, null],
        [1, 'big', 'completed', null, big.length, '{', null],
        [2, 'none', 'failed', null, null, null, '{"message":"m"}'],
        [3, 'list', 'completed', null, big.length + 2, '[', null],
      ],
    );
    assert.equal(store.reader.stepResult('h1', 1), big);
    assert.equal(store.reader.stepResult('h1', 2), null);
    assert.equal(store.reader.stepResult('h1', 9), undefined);
    const scope = { steps: Number.MAX_SAFE_INTEGER, actions: 'none' } as const;
    dbOf(store.db).prepare('UPDATE steps SET result = ? WHERE run_id = ? AND idx = 1').run(big.slice(0, -1), 'h1');
    assert.deepEqual(store.reader.firstDamage('h1', scope), { runId: 'h1', table: 'steps', idx: 1, name: 'big', column: 'result' });
    assert.equal(store.reader.firstDamage('h1', { ...scope, deferAbove: 100 }), undefined, 'a large result is left to replay');
    dbOf(store.db).prepare("UPDATE steps SET result = '{' WHERE run_id = 'h1' AND idx = 0").run();
    assert.deepEqual(store.reader.firstDamage('h1', { ...scope, deferAbove: 100 }), { runId: 'h1', table: 'steps', idx: 0, name: 'small', column: 'result' });
    dbOf(store.db).prepare("UPDATE steps SET result = '{\"ok\":1}' WHERE run_id = 'h1' AND idx = 0").run();
    dbOf(store.db).prepare("UPDATE steps SET error = '{' WHERE run_id = 'h1' AND idx = 2").run();
    assert.deepEqual(store.reader.firstDamage('h1', { ...scope, deferAbove: 100 }), { runId: 'h1', table: 'steps', idx: 2, name: 'none', column: 'error' });
    assert.equal(store.reader.run('h1')?.id, 'h1');
  });

  it('refuses a journal of a newer schema, untouched', () => {
    createRun(dbOf(store.db), store.reader, { id: 'n1', agent: 'a', script: 's.ts', input: null }, deadOwner('w'));
    if (dbOf(store.db).kind === 'sqlite') sqliteOf(dbOf(store.db)).pragma(`user_version = ${LATEST_VERSION + 1}`);
    else
      dbOf(store.db)
        .prepare("INSERT INTO logbook_schema (version, name) VALUES (?, 'from the future')")
        .run(LATEST_VERSION + 1);
    store.close();
    let refused: unknown;
    try {
      openStore(target);
    } catch (err) {
      refused = err;
    }
    assert.ok(refused instanceof LogbookError && refused.code === ErrorCodes.DB_TOO_NEW, String(refused));
    assert.match(refused.message, /newer than this Logbook understands.*not modified/s);
  }).timeout(60_000);
}

describe('store contract', function () {
  this.timeout(120_000);
  describe('on SQLite', () => {
    let dir: string;
    let n = 0;
    before(() => (dir = tmpDir('logbook-contract-')));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    contract(() => ({ name: 'sqlite', fresh: () => path.join(dir, `j${++n}.db`) }));
  });
  describe('on PostgreSQL', () => {
    const pg = usePgServer();
    contract(() => ({ name: 'postgres', fresh: () => pg.server.createDatabase() }));
    storageCases(() => pg.server);
  });
});

/** PostgreSQL's storage failures: a server that is down or refuses the role is an exit-5 storage error with a remedy. */
function storageCases(server: () => PgServer): void {
  it('maps a refused connection and a wrong password to exit-5 storage codes, never printing the password', () => {
    const url = server().createDatabase();
    const refusedUrl = url.replace(/:(\d+)\//, ':1/').replace('postgres@', 'postgres:s3cret@');
    let err: unknown;
    try {
      openStore(refusedUrl);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof LogbookError, String(err));
    assert.equal(err.code, ErrorCodes.DB_UNREACHABLE);
    assert.equal(exitCodeOf(err.code), 5);
    assert.doesNotMatch(err.message, /s3cret/);
    assert.match(err.message, /postgres:\*\*\*@/);
    assert.match(err.remedy, /running and reachable/);
    for (const refused of [url.replace('postgres@', 'nosuchrole:s3cret@'), url.replace(/\/[^/]+$/, '/no_such_database')]) {
      let auth: unknown;
      try {
        openStore(refused);
      } catch (e) {
        auth = e;
      }
      assert.ok(auth instanceof LogbookError, String(auth));
      assert.equal(auth.code, ErrorCodes.DB_AUTH, auth.message);
      assert.equal(exitCodeOf(auth.code), 5);
      assert.doesNotMatch(auth.message, /s3cret/);
      assert.match(auth.remedy, /role, password and database name/);
    }
  });

  it('renews the lease from the PG thread while the main thread is blocked in a long execute', async () => {
    const url = server().createDatabase();
    const script = `
      const { createRun } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/store/lease'))});
      const { RunWriter } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/store/writer'))});
      const { beginSession } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/store/owner'))});
      const s = openStore(target);
      const lease = createRun(s.db, s.reader, { id: 'hb', agent: 'a', script: 's.ts', input: null }, beginSession('test'));
      const w = new RunWriter(s.db, lease, 1);
      const first = s.reader.run('hb').lease_expires;
      // A synchronous effect that holds the main thread for 3 TTLs: only the PG thread can renew meanwhile.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2700);
      const during = s.reader.run('hb').lease_expires;
      w.note('after.block', {});
      console.log(JSON.stringify({ first, during, aborted: w.signal.aborted }));
      w.release(); s.close();`;
    const src = `const { openStore } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/store'))}); const target = ${JSON.stringify(url)};\n${script}`;
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const p = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', src], {
        cwd: ROOT,
        env: { ...process.env, LOGBOOK_LEASE_TTL_MS: '900' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (err += d.toString()));
      p.on('close', (c) => resolve({ code: c, out: out.trim(), err }));
    });
    assert.equal(r.code, 0, r.err);
    const got = JSON.parse(r.out) as { first: number; during: number; aborted: boolean };
    assert.ok(got.during > got.first + 1500, `the expiry moved on while the main thread was blocked (${got.first} → ${got.during})`);
    assert.equal(got.aborted, false, 'the lease was never lost, and the write after the long effect succeeded');
  });

  it('a server that goes down mid-run stops the writer with LB_DB_UNREACHABLE; what was committed survives', () => {
    const url = server().createDatabase();
    const s = openStore(url);
    try {
      const lease = createRun(dbOf(s.db), s.reader, { id: 'd1', agent: 'a', script: 's.ts', input: null }, liveOwner('w'));
      const w = new RunWriter(s.db, lease, 1);
      w.actionStarted(action('k'), false);
      server().stop('immediate');
      try {
        assert.equal(
          code(() => w.actionCommitted(0, 'k', '1')),
          ErrorCodes.DB_UNREACHABLE,
        );
        assert.equal(w.broken?.code, ErrorCodes.DB_UNREACHABLE, 'the writer writes nothing more after a storage failure');
      } finally {
        server().start();
      }
      const again = openStore(url);
      try {
        assert.equal(again.reader.action('d1', 'k')?.status, 'started', 'the durable started survives the crash; the action is in doubt');
      } finally {
        again.close();
      }
    } finally {
      s.close();
    }
  });
}
