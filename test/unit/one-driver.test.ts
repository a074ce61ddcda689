// One driving session per run in one process (issue 19 case 1): a second resume, a resume after start, a second
// journal on the same file, or a compensation while the run drives is refused with LB_LEASE_HELD and writes nothing.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAction, defineAgent, openJournal, type Journal } from '../../src/runtime/public';
import { openStore } from '../../src/runtime/store';
import { acquireRun, createRun } from '../../src/runtime/store/lease';
import { beginSession, endSession, leaseIsLive } from '../../src/runtime/store/owner';
import { ROOT, tmpDir } from '../helpers';
import { dbOf } from '../../src/runtime/store/db';

const quiet = { log: (): void => undefined };

/** A payment provider that records every charge by its key; the first charge of a key waits for the test to let it land. */
const provider = {
  calls: new Map<string, number>(),
  landed: new Map<string, { id: string }>(),
  refunds: [] as string[],
  inFlight: undefined as (() => void) | undefined,
  release: undefined as (() => void) | undefined,
  reset(): void {
    this.calls.clear();
    this.landed.clear();
    this.refunds.length = 0;
  },
};

/** Resolves when a first charge is in flight (`provider.release()` then lets it land); fails if `driving` ends first. */
function untilInFlight(driving: Promise<unknown>): Promise<unknown> {
  const inFlight = new Promise<void>((resolve) => (provider.inFlight = resolve));
  return Promise.race([inFlight, driving.then((v) => assert.fail(`the driver ended before its charge: ${JSON.stringify(v)}`))]);
}

const charge = defineAction({
  type: 'one-driver.charge',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ cents: z.number().int() }),
  key: (_a, run) => `charge:${run.id}`,
  execute: async (_a, { idempotencyKey }) => {
    const n = (provider.calls.get(idempotencyKey) ?? 0) + 1;
    provider.calls.set(idempotencyKey, n);
    if (n === 1) {
      await new Promise<void>((resolve) => {
        provider.release = resolve;
        provider.inFlight?.();
      });
    }
    const result = { id: `ch-${idempotencyKey}-${n}` };
    provider.landed.set(idempotencyKey, result);
    return result;
  },
  // The provider's own record: a charge still in flight has not landed, so a second driver would find it absent.
  verify: (_a, { idempotencyKey }) => provider.landed.get(idempotencyKey),
  compensate: (_a, r) => void provider.refunds.push(r.id),
});

let failPrepare = false;
const shop = defineAgent({
  name: 'one-driver-shop',
  input: z.object({ cents: z.number().int() }),
  async run(run, input) {
    await run.step('prepare', () => {
      if (failPrepare) throw new Error('the catalogue is down');
      return 'ready';
    });
    const c = await run.step('charge', () => run.do(charge, { cents: input.cents }));
    return { charged: c.id };
  },
});

/** The shop as a child run: the parent hands the charge to it (run.child), so a child's charge is in flight. */
const childShop = defineAgent({
  name: 'one-driver-child-shop',
  input: z.object({ cents: z.number().int() }),
  async run(run, input) {
    const c = await run.step('charge', () => run.do(charge, { cents: input.cents }));
    return { charged: c.id };
  },
});
const parentShop = defineAgent({
  name: 'one-driver-parent-shop',
  input: z.object({ cents: z.number().int() }),
  async run(run, input) {
    const out = await run.child(childShop, { cents: input.cents });
    return { charged: out.charged };
  },
});

interface Snapshot {
  readonly run: Record<string, unknown>;
  readonly events: unknown[];
}

/** The run's row and events, read over a connection of its own (the lease's expiry left out: a heartbeat renews it). */
function snapshot(file: string, runId: string): Snapshot {
  const db = new Database(file, { readonly: true });
  try {
    // folded_seq is derived (how far steps and actions are folded from the log): any read may move it, as a refusal's does.
    const { lease_expires: _renewed, folded_seq: _folded, ...run } = db.prepare('SELECT * FROM runs WHERE id = ?').get(runId) as Record<string, unknown>;
    return { run, events: db.prepare('SELECT * FROM events WHERE run_id = ? ORDER BY seq').all(runId) };
  } finally {
    db.close();
  }
}

async function refused(p: Promise<unknown>): Promise<LogbookError> {
  const err = await p.then(
    (v) => assert.fail(`expected LB_LEASE_HELD, got ${JSON.stringify(v)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LogbookError && err.code === ErrorCodes.LEASE_HELD, String(err));
  return err;
}

describe('one driving session per run, in one process (host API)', () => {
  let dir: string;
  let file: string;
  let journal: Journal;
  beforeEach(() => {
    dir = tmpDir('logbook-one-driver-');
    file = path.join(dir, 'journal.db');
    provider.reset();
    failPrepare = false;
    journal = openJournal({ journal: file, agents: [shop, parentShop, childShop], role: 'orders-api', ...quiet });
  });
  afterEach(() => journal.close());

  /** Drives `first` into its in-flight charge, tries `second`, then lets the charge land; returns the refusal. */
  async function whileInFlight(runId: string, first: () => Promise<unknown>, second: () => Promise<unknown>): Promise<{ err: LogbookError; first: unknown }> {
    const driving = first();
    await untilInFlight(driving);
    const before = snapshot(file, runId);
    const err = await refused(second());
    assert.deepEqual(snapshot(file, runId), before, 'the refusal wrote nothing: no attempt bump, no event, no status');
    provider.release?.();
    const out = await driving;
    assert.equal(provider.calls.get(`charge:${runId}`), 1, 'the in-flight charge ran exactly once');
    return { err, first: out };
  }

  it('start, then resume while the start still drives: the resume is refused naming the holder', async () => {
    const { err, first } = await whileInFlight(
      's1',
      () => journal.start(shop, { cents: 500 }, { runId: 's1' }),
      () => journal.resume('s1'),
    );
    assert.match(err.message, /Run s1 is being driven by pid \d+ on .+ \(orders-api\) session [0-9a-f]{8}/);
    assert.deepEqual((first as { status: string }).status, 'completed');
    assert.equal(journal.run('s1')?.attempt, 1);
  });

  it('two resumes racing on one journal: the second is refused', async () => {
    failPrepare = true;
    assert.equal((await journal.start(shop, { cents: 700 }, { runId: 'r1' })).status, 'failed');
    failPrepare = false;
    const { first } = await whileInFlight(
      'r1',
      () => journal.resume('r1'),
      () => journal.resume('r1'),
    );
    assert.equal((first as { status: string }).status, 'completed');
    assert.equal(journal.run('r1')?.attempt, 2);
  });

  it('a second openJournal on the same file in the same process is refused too', async () => {
    // The same role, as two modules of one server that each open the journal would have.
    const other = openJournal({ journal: file, agents: [shop], role: 'orders-api', ...quiet });
    try {
      const { err } = await whileInFlight(
        'j1',
        () => journal.start(shop, { cents: 900 }, { runId: 'j1' }),
        () => other.resume('j1'),
      );
      assert.match(err.message, /\(orders-api\) session [0-9a-f]{8}/);
    } finally {
      other.close();
    }
  });

  it('compensate while a resume drives: refused, and the in-flight charge is never decided "not happened"', async () => {
    failPrepare = true;
    await journal.start(shop, { cents: 300 }, { runId: 'c1' });
    failPrepare = false;
    await whileInFlight(
      'c1',
      () => journal.resume('c1'),
      () => journal.compensate('c1'),
    );
    assert.equal(journal.run('c1')?.status, 'completed');
    assert.deepEqual(provider.refunds, []);
    // Once the driver is done, the compensation goes ahead and refunds the charge that landed.
    const report = await journal.compensate('c1');
    assert.equal(report.status, 'compensated');
    assert.deepEqual(provider.refunds, ['ch-charge:c1-1']);
  });

  it('a child run its parent drives in this process: resume and compensate of the child, or of the parent, are refused and write nothing; one charge', async () => {
    const driving = journal.start(parentShop, { cents: 400 }, { runId: 'p1' });
    await untilInFlight(driving);
    const child = journal.runs().find((r) => r.agent === childShop.name);
    assert.ok(child, 'the child run exists while its charge is in flight');
    const before = [snapshot(file, 'p1'), snapshot(file, child.id)];
    for (const second of [() => journal.resume(child.id), () => journal.compensate(child.id), () => journal.resume('p1'), () => journal.compensate('p1')])
      await refused(second());
    assert.deepEqual([snapshot(file, 'p1'), snapshot(file, child.id)], before, 'the refusals wrote nothing to parent or child');
    provider.release?.();
    const out = await driving;
    assert.equal(out.status, 'completed');
    assert.equal(provider.calls.get(`charge:${child.id}`), 1, 'the child charged exactly once');
    assert.deepEqual(out.output, { charged: `ch-charge:${child.id}-1` });
  });

  it('onDriving is called once the lease is held, and never for a refused call', async () => {
    const calls: string[] = [];
    const driving = journal.start(
      shop,
      { cents: 100 },
      { runId: 'o1', onDriving: (r) => calls.push(`start ${r.runId} ${r.attempt} (charges so far: ${provider.calls.size})`) },
    );
    await untilInFlight(driving);
    assert.deepEqual(calls, ['start o1 1 (charges so far: 0)'], 'called once, before the script ran');
    await refused(journal.resume('o1', { onDriving: () => calls.push('resume') }));
    provider.release?.();
    await driving;
    assert.equal(calls.length, 1);
  });
});

describe('a session of this process that ended without releasing its lease', () => {
  it('is held until its lease expires (a worker thread of this process may hold it), then taken over, while a live session is never taken', () => {
    const store = openStore(path.join(tmpDir('logbook-one-driver-'), 'journal.db'));
    try {
      const live = beginSession('api');
      createRun(dbOf(store.db), store.reader, { id: 'live', agent: 'a', script: 's.ts', input: null }, live);
      const gone = beginSession('api');
      createRun(dbOf(store.db), store.reader, { id: 'gone', agent: 'a', script: 's.ts', input: null }, gone);
      endSession(gone.token); // as a driver whose release failed: its session is over, its lease left behind
      const opts = { status: 'running' as const, newAttempt: true, purpose: 'resume' };
      const held = (e: unknown): boolean => e instanceof LogbookError && e.code === ErrorCodes.LEASE_HELD;
      assert.throws(() => acquireRun(store.db, store.reader, 'live', beginSession('api'), opts), held);
      // Unknown to this thread's registry, but unexpired: it could be another thread's session, so it is not taken.
      assert.throws(() => acquireRun(store.db, store.reader, 'gone', beginSession('api'), opts), held);
      const row = (id: string) => store.reader.run(id)!;
      const later = row('gone').lease_expires! + 1;
      assert.equal(leaseIsLive(row('gone'), later), false, 'past its expiry a lease of an ended session is dead');
      assert.equal(leaseIsLive(row('live'), later), true, 'a live session of this process is live even past its expiry');
      // Expire it as its stopped heartbeat would, then take it over.
      new Database(store.target).prepare('UPDATE runs SET lease_expires = ? WHERE id = ?').run(Date.now() - 1, 'gone');
      assert.equal(store.reader.view(row('gone')).effectiveStatus, 'interrupted');
      const taken = acquireRun(store.db, store.reader, 'gone', beginSession('api'), opts);
      assert.equal(taken.epoch, 2);
      assert.match(store.reader.events('gone').at(-1)?.data ?? '', /"previousLease":"dead holder"/);
    } finally {
      store.close();
    }
  });
});

describe('a run driven by a worker thread of this process', () => {
  it('is refused to the main thread with LB_LEASE_HELD while the thread drives it (each thread has its own registry)', async () => {
    const dir = tmpDir('logbook-one-driver-thread-');
    const file = path.join(dir, 'journal.db');
    const runtime = path.join(ROOT, 'dist', 'runtime.js');
    // The thread loads the built runtime (a copy of its own, with its own globals) and holds its charge in flight.
    const source = `
      const { workerData, parentPort } = require('node:worker_threads');
      const { z } = require(workerData.zod);
      const { defineAction, defineAgent, openJournal } = require(workerData.runtime);
      let release;
      parentPort.on('message', () => release());
      const charge = defineAction({ type: 'thread.charge', version: 1, effect: 'non-idempotent', args: z.object({}),
        key: (_a, run) => 'charge:' + run.id,
        execute: () => new Promise((r) => { release = () => r({ ok: true }); parentPort.postMessage('in-flight'); }) });
      const agent = defineAgent({ name: 'thread-agent', input: z.object({}), run: async (run) => run.step('pay', () => run.do(charge, {})) });
      const journal = openJournal({ journal: workerData.file, agents: [agent], log: () => {} });
      journal.start(agent, {}, { runId: 't1' }).then((o) => { journal.close(); parentPort.postMessage('done:' + o.status); });`;
    const worker = new Worker(source, { eval: true, workerData: { file, runtime, zod: require.resolve('zod') } });
    const messages: string[] = [];
    const next = (): Promise<string> => new Promise((resolve) => worker.once('message', (m: string) => (messages.push(m), resolve(m))));
    try {
      assert.equal(await next(), 'in-flight');
      const journal = openJournal({ journal: file, agents: [threadAgent], ...quiet });
      try {
        const before = new Database(file, { readonly: true }).prepare('SELECT attempt, lease_epoch FROM runs WHERE id = ?').get('t1');
        await assert.rejects(journal.resume('t1'), (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.LEASE_HELD);
        assert.deepEqual(new Database(file, { readonly: true }).prepare('SELECT attempt, lease_epoch FROM runs WHERE id = ?').get('t1'), before);
      } finally {
        journal.close();
      }
      const done = next();
      worker.postMessage('release');
      assert.equal(await done, 'done:completed');
    } finally {
      await worker.terminate();
    }
  });
});

const threadAgent = defineAgent({ name: 'thread-agent', input: z.object({}), run: () => Promise.resolve({}) });
