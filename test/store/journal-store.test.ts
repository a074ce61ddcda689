// Every operation of the JournalStore interface, through openStore only, with the same assertions on a real SQLite
// file and a real PostgreSQL server: the two engines are one journal to their callers.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beginSession, endSession, openStore, type Lease, type Store } from '../../src/runtime/store';
import { currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';

/** An owner on this node whose process is gone: its lease is not live (on PostgreSQL, once it expires). */
function deadOwner(label: string): Owner {
  return {
    token: `token-${label}-${Math.random()}`,
    pid: 4_000_000 + Math.floor(Math.random() * 100_000),
    pidStart: '1',
    host: hostField(os.hostname(), currentNode()),
    label: `dead ${label}`,
  };
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof LogbookError ? err.code : `not a LogbookError: ${String(err)}`;
  }
  return undefined;
}

const action = (id: string, stepIdx = 0) => ({
  id,
  stepIdx,
  type: 'email.send',
  version: 1,
  effect: 'non-idempotent' as const,
  args: JSON.stringify({ to: id }),
});
const KNOWN = [{ agent: 'q', version: 'v1' }];

function journalStoreCases(fresh: () => string): void {
  let store: Store;
  const sessions: string[] = [];
  const live = (label: string): Owner => {
    const o = beginSession(`live ${label}`);
    sessions.push(o.token);
    return o;
  };
  beforeEach(() => (store = openStore(fresh())));
  afterEach(() => {
    store.close();
    for (const t of sessions.splice(0)) endSession(t);
  });

  it('opens at the latest schema, with a lease clock close to this machine', () => {
    assert.equal(store.schemaVersion(), LATEST_VERSION);
    assert.ok(Math.abs(store.leaseClock() - Date.now()) < 5_000, 'the lease clock is within seconds of this machine');
    assert.equal(store.reader.runCount(), 0);
  });

  it('creates a run (epoch 1, attempt 1) and refuses the same id again, created or queued', () => {
    const lease = store.createRun({ id: 'c1', agent: 'a', script: 's.ts', input: '{"x":1}' }, live('c1'));
    assert.deepEqual([lease.runId, lease.epoch, lease.attempt, lease.status], ['c1', 1, 1, 'running']);
    const row = store.reader.run('c1');
    assert.equal(row?.status, 'running');
    assert.equal(row?.input, '{"x":1}');
    assert.equal(
      code(() => store.createRun({ id: 'c1', agent: 'a', script: 's.ts', input: null }, live('again'))),
      ErrorCodes.RUN_EXISTS,
    );
    assert.equal(
      code(() => store.enqueueRun({ id: 'c1', agent: 'a', script: 's.ts', scriptVersion: 'v1', input: null })),
      ErrorCodes.RUN_EXISTS,
    );
  });

  it('appends transitions through a writer and reads a run’s steps and actions back from a position', () => {
    const lease = store.createRun({ id: 'w1', agent: 'a', script: 's.ts', input: null }, live('w1'));
    const w = store.openWriter(lease);
    for (let i = 0; i < 3; i++) {
      w.stepStarted(i, `step ${i}`, false);
      w.actionStarted(action(`a${i}`, i), false);
      w.actionExecuting(i, `a${i}`);
      w.actionCommitted(i, `a${i}`, JSON.stringify({ ok: i }));
      w.stepCompleted(i, JSON.stringify(i));
    }
    w.runStatus('completed', { output: '"done"' });
    w.release();
    assert.deepEqual(
      store.reader.steps('w1', 1, 3).map((s) => [s.idx, s.name, s.status, s.result]),
      [
        [1, 'step 1', 'completed', '1'],
        [2, 'step 2', 'completed', '2'],
      ],
    );
    assert.deepEqual(
      store.reader.replaySteps('w1', 2, 10).map((s) => s.idx),
      [2],
    );
    assert.deepEqual(
      store.reader.actions('w1', 1).map((a) => [a.id, a.status, a.executions]),
      [
        ['a1', 'committed', 1],
        ['a2', 'committed', 1],
      ],
    );
    assert.equal(store.reader.run('w1')?.status, 'completed');
    assert.equal(store.reader.run('w1')?.output, '"done"');
    const kinds = store.reader.events('w1').map((e) => e.kind);
    assert.equal(kinds[0], 'run.started');
    assert.ok(kinds.includes('action.committed') && kinds.includes('run.completed'), kinds.join(', '));
    assert.equal(store.reader.nextActionSeq('w1'), 4);
  });

  it('records a child run and its parent’s record of it in one fenced transaction: a parent taken over starts none', () => {
    const lease = store.createRun({ id: 'par', agent: 'a', script: 's.ts', input: null }, live('par'));
    const w = store.openWriter(lease);
    w.stepStarted(0, 'child b', false);
    const child = { id: 'par.child-1', agent: 'b', script: 's.ts', scriptVersion: 'v1', input: '{"y":2}', parentId: 'par', parentStep: 0 };
    const kid = w.childStarted(0, child, live('kid'));
    assert.deepEqual([kid.runId, kid.epoch, kid.attempt, kid.status], ['par.child-1', 1, 1, 'running']);
    const row = store.reader.run('par.child-1');
    assert.deepEqual([row?.parent_id, row?.parent_step, row?.agent, row?.script_version, row?.input], ['par', 0, 'b', 'v1', '{"y":2}']);
    assert.equal(store.leaseIsLive(row!, store.leaseClock()), true, 'held by the session that drives it');
    assert.deepEqual(
      store.reader.children('par').map((c) => c.id),
      ['par.child-1'],
    );
    const started = store.reader.events('par').find((e) => e.kind === 'child.started');
    assert.equal(started?.step_idx, 0);
    assert.ok((store.reader.firstEventSeq('par.child-1') ?? 0) > (started?.seq ?? Infinity) - 2, 'the child starts in its parent’s transaction');
    w.release();
    // Taken over by another session, the first writer is fenced: it writes no child.
    store.acquireRun('par', live('rival'), { status: 'running', newAttempt: true, purpose: 'resume' });
    assert.equal(
      code(() => w.childStarted(1, { ...child, id: 'par.child-2', parentStep: 1 }, live('kid2'))),
      ErrorCodes.LEASE_LOST,
    );
    assert.equal(store.reader.run('par.child-2'), undefined);
    assert.deepEqual(
      store.reader.children('par').map((c) => c.id),
      ['par.child-1'],
    );
  });

  it('renews a lease with the writer’s heartbeat, and refuses an illegal status change', () => {
    const lease = store.createRun({ id: 'h1', agent: 'a', script: 's.ts', input: null }, live('h1'));
    const w = store.openWriter(lease);
    const before = store.reader.run('h1')!.lease_expires!;
    w.heartbeat();
    w.flush();
    assert.ok(w.leaseValid());
    assert.ok(store.reader.run('h1')!.lease_expires! >= before, 'the expiry does not move back');
    w.runStatus('completed');
    assert.equal(
      code(() => w.runStatus('running')),
      ErrorCodes.ILLEGAL_TRANSITION,
    );
    w.release();
  });

  it('acquires a run: refused while a live session holds it, taken (a new epoch) once released, and the stale writer is fenced', () => {
    const first = store.createRun({ id: 'q1', agent: 'a', script: 's.ts', input: null }, live('holder'));
    const stale = store.openWriter(first);
    assert.equal(
      code(() => store.acquireRun('q1', live('rival'), { status: 'running', newAttempt: true, purpose: 'resume' })),
      ErrorCodes.LEASE_HELD,
    );
    assert.equal(store.releaseLease(first), true);
    assert.equal(store.releaseLease(first), false, 'a lease no longer held is not given back twice');
    const second = store.acquireRun('q1', live('next'), { status: 'running', newAttempt: true, purpose: 'resume' });
    assert.deepEqual([second.epoch, second.attempt], [2, 2]);
    assert.equal(
      code(() => stale.actionStarted(action('late'), false)),
      ErrorCodes.LEASE_LOST,
    );
    assert.equal(
      code(() => store.acquireRun('nope', live('x'), { status: 'running', newAttempt: true, purpose: 'resume' })),
      ErrorCodes.RUN_NOT_FOUND,
    );
  });

  it('queues a run and a worker claims it once; a skipped or unknown run is passed over; the waiting reason names the workers', () => {
    store.enqueueRun({ id: 'k1', agent: 'q', script: 'q.ts', scriptVersion: 'v1', input: null });
    store.enqueueRun({ id: 'k2', agent: 'q', script: 'q.ts', scriptVersion: 'v2', input: null });
    assert.equal(store.reader.run('k1')?.status, 'queued');
    const owner = live('worker');
    assert.equal(store.claimRun(owner, KNOWN, { skip: new Set(['k1']) }), undefined, 'skipped, and k2 is of a version this worker lacks');
    store.recordWorker({ name: 'w-a', owner: owner.label, host: owner.host, pid: process.pid, agents: [{ agent: 'q', version: 'v1', script: 'q.ts' }] });
    assert.match(store.waitingReason(store.reader.run('k2')!, false) ?? '', /no worker has version v2/);
    assert.match(store.waitingReason(store.reader.run('k1')!, false) ?? '', /waits for a free worker \(w-a/);
    const claimed = store.claimRun(owner, KNOWN);
    assert.equal(claimed?.kind, 'start');
    assert.deepEqual([claimed?.lease.runId, claimed?.lease.epoch, claimed?.lease.attempt], ['k1', 1, 1]);
    assert.equal(store.reader.run('k1')?.status, 'running');
    assert.equal(store.claimRun(live('other'), KNOWN), undefined, 'claimed once');
    store.forgetWorker('w-a', owner.label);
    assert.equal(store.waitingReason(store.reader.run('k2')!, false)?.startsWith('no worker is running'), true);
  });

  it('tells a live lease from a dead one by this engine’s rule', () => {
    store.createRun({ id: 'l1', agent: 'a', script: 's.ts', input: null }, live('l1'));
    const dead = store.createRun({ id: 'l2', agent: 'a', script: 's.ts', input: null }, deadOwner('l2'));
    const now = store.leaseClock();
    assert.equal(store.leaseIsLive(store.reader.run('l1')!, now), true);
    // A dead holder's lease is live on PostgreSQL until it expires (its pid cannot be asked from another machine).
    assert.equal(store.leaseIsLive(store.reader.run('l2')!, now + 3_600_000), false);
    assert.equal(store.leaseIsLive({ ...store.reader.run('l2')!, lease_token: null }, now), false);
    assert.equal(dead.epoch, 1);
  });

  it('lists runs newest first and pages them; the overview counts what the sidebar shows', () => {
    for (const id of ['r1', 'r2', 'r3']) {
      const l: Lease = store.createRun({ id, agent: 'a', script: `${id}.ts`, input: null }, live(id));
      const w = store.openWriter(l);
      w.stepStarted(0, 'only', false);
      w.actionStarted(action(`${id}-a`), false);
      w.release();
    }
    assert.deepEqual(store.reader.runs(2, 0).length, 2);
    assert.deepEqual(new Set(store.reader.runs(10, 0).map((r) => r.id)), new Set(['r1', 'r2', 'r3']));
    assert.equal(store.reader.runs(10, 2).length, 1);
    const o = store.overview();
    assert.equal(o.runCount(), 3);
    assert.equal(o.actionsIn('r2', 'started'), 1);
    assert.equal(o.latestRunOf('r3.ts')?.id, 'r3');
    assert.ok(o.lastEventSeq() > 0);
    assert.deepEqual(new Set(o.runsChangedSince(0).map((r) => r.run_id)), new Set(['r1', 'r2', 'r3']));
  });

  it('deletes a run and all its rows, refused while it is held', () => {
    const lease = store.createRun({ id: 'd1', agent: 'a', script: 's.ts', input: null }, live('d1'));
    const w = store.openWriter(lease);
    w.stepStarted(0, 'one', false);
    w.actionStarted(action('d1-a'), false);
    assert.equal(
      code(() => store.deleteRun('d1')),
      ErrorCodes.LEASE_HELD,
    );
    w.release();
    const counts = store.deleteRun('d1');
    assert.equal(counts.steps, 1);
    assert.equal(counts.actions, 1);
    assert.ok(counts.events >= 2);
    assert.equal(store.reader.run('d1'), undefined);
    assert.equal(
      code(() => store.deleteRun('d1')),
      ErrorCodes.RUN_NOT_FOUND,
    );
  });
}

describe('JournalStore, the same cases on both engines', function () {
  this.timeout(120_000);
  describe('on SQLite', () => {
    let dir: string;
    let n = 0;
    before(() => (dir = tmpDir('logbook-journal-store-')));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    journalStoreCases(() => path.join(dir, `j${++n}.db`));
  });
  describe('on PostgreSQL', () => {
    const pg = usePgServer();
    journalStoreCases(() => pg.server.createDatabase());
  });
});
