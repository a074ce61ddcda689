// `logbook worker` on a real PostgreSQL server: a worker killed at every action phase, a partitioned (stopped) worker, a claim race.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { usePgServer } from './server';
import { detach, detachMany, effectCounts, expectedKeys, startWorker, stopWorker, waitFor, withStore, type Env, type Worker } from './workers';
import type { EventRow } from '../../src/runtime/store/rows';

function env(url: string): Env {
  const dir = tmpDir('logbook-worker-');
  return { db: url, dir, ledger: path.join(dir, 'ledger.log') };
}

function status(e: Env, runId: string): string | undefined {
  return withStore(e, (s) => {
    const row = s.reader.run(runId);
    return row ? s.reader.view(row).effectiveStatus : undefined;
  });
}

function events(e: Env, runId: string): EventRow[] {
  return withStore(e, (s) => s.reader.events(runId, 0, 100_000));
}

/** Each key of the run's effects happened exactly once, and no effect of the run happened that the run did not ask for. */
function assertExactlyOnce(e: Env, runId: string, items: number): void {
  const counts = effectCounts(e);
  const mine = [...counts.entries()].filter(([k]) => k.split(':')[1] === runId);
  assert.deepEqual(new Map(mine), new Map(expectedKeys(runId, items).map((k) => [k, 1])), `effects of ${runId}`);
}

/**
 * The run's events tell one story without holes: attempts follow each other (no event of an older attempt after a newer
 * one began), each attempt begins with its claim, every journaled step and action has its events.
 */
function assertNoGap(e: Env, runId: string): EventRow[] {
  const ev = events(e, runId);
  for (let i = 1; i < ev.length; i++) {
    assert.ok(ev[i]!.seq > ev[i - 1]!.seq, 'seq increases');
    assert.ok(
      ev[i]!.attempt >= ev[i - 1]!.attempt,
      `event ${ev[i]!.seq} (${ev[i]!.kind}, attempt ${ev[i]!.attempt}) after attempt ${ev[i - 1]!.attempt} began`,
    );
  }
  const firstOf = new Map<number, EventRow>();
  for (const x of ev) if (!firstOf.has(x.attempt)) firstOf.set(x.attempt, x);
  for (const [attempt, first] of firstOf) {
    if (attempt === 0) assert.equal(first.kind, 'run.queued');
    else assert.match(first.kind, /^run\.(started|lease-acquired)$/, `attempt ${attempt} begins with its claim`);
  }
  withStore(e, (s) => {
    for (const step of s.reader.steps(runId, 0, 1000)) {
      if (step.status === 'completed')
        assert.ok(
          ev.some((x) => x.kind === 'step.completed' && x.step_idx === step.idx),
          `step ${step.idx} has its completion event`,
        );
    }
    for (const a of s.reader.allActions(runId)) {
      assert.ok(
        ev.some((x) => x.action_id === a.id && x.kind === 'action.started'),
        `action ${a.id} has its started event`,
      );
      if (a.status === 'committed')
        assert.ok(
          ev.some((x) => x.action_id === a.id && x.seq === a.commit_seq),
          `action ${a.id} has its commit event (commit_seq ${a.commit_seq}; events: ${ev.map((x) => `${x.seq} ${x.attempt} ${x.kind} ${x.action_id ?? ''}`).join(', ')})`,
        );
    }
  });
  return ev;
}

describe('logbook worker on PostgreSQL', function () {
  this.timeout(300_000);
  const pg = usePgServer();

  describe('a worker killed at every action phase: another takes the run after the lease expires and finishes it', () => {
    let e: Env;
    before(() => {
      e = env(pg.server.createDatabase());
    });

    for (const phase of ['before-start', 'after-start', 'after-execute', 'after-commit'] as const) {
      it(`killed at ledger.post#2@${phase}`, async () => {
        const runId = `kill-${phase}`;
        const a = startWorker(e, `a-${phase}`, ['--crash-at', `ledger.post#2@${phase}`]);
        let b: Worker | undefined;
        try {
          await a.waitLine(/claims runs of ledger/);
          detach(e, { items: 3 }, runId);
          const died = await a.exited;
          assert.equal(died.signal, 'SIGKILL', `worker a was killed at ${phase}`);
          assert.equal(status(e, runId), 'interrupted', 'the run is interrupted once its lease expired or its holder is seen dead');
          b = startWorker(e, `b-${phase}`);
          await b.waitLine(new RegExp(`${runId} completed`));
          assert.equal((await stopWorker(b)).code, 0, 'worker b stops cleanly on SIGTERM');
        } finally {
          a.child.kill('SIGKILL');
          b?.child.kill('SIGKILL');
        }
        assert.equal(status(e, runId), 'completed');
        assertExactlyOnce(e, runId, 3);
        const ev = assertNoGap(e, runId);
        const takeover = ev.find((x) => x.kind === 'run.lease-acquired');
        assert.ok(takeover, 'worker b took the run over');
        const data = JSON.parse(takeover.data ?? '{}') as { epoch: number; owner: string };
        assert.equal(data.epoch, 2, 'with a new epoch');
        assert.match(data.owner, new RegExp(`worker b-${phase}`));
        const killed = withStore(e, (s) => s.reader.action(runId, `post:${runId}:1`));
        const expected = { 'before-start': null, 'after-start': 'verified-absent', 'after-execute': 'verified', 'after-commit': null }[phase];
        if (phase === 'before-start') assert.equal(killed?.attempt, 2, 'the action never started before the kill: the second attempt starts it');
        else assert.equal(killed?.reconciliation ?? null, expected, `the action killed ${phase} is reconciled as ${String(expected)}`);
        assert.equal(killed?.status, 'committed');
      });
    }
  });

  describe('partition: a worker stopped past its lease', () => {
    it('is taken over with a new epoch; woken, it writes nothing and starts no new effect', async () => {
      const e = env(pg.server.createDatabase());
      const runId = 'partition';
      const a = startWorker(e, 'pa');
      let b: Worker | undefined;
      try {
        await a.waitLine(/claims runs of ledger/);
        detach(e, { items: 3, pauseMs: 1500 }, runId);
        // Its first effect is done and it sleeps before the second: stop it there, like a machine cut off the network.
        await waitFor('the first effect', () => effectCounts(e).has(`post:${runId}:0`) || undefined, 60_000, 20);
        a.child.kill('SIGSTOP');
        const ofA = (): number => events(e, runId).filter((x) => x.attempt === 1).length;
        const writtenByA = ofA();
        b = startWorker(e, 'pb');
        await b.waitLine(new RegExp(`${runId} completed`));
        assert.equal(ofA(), writtenByA, 'nothing of attempt 1 was written while it was stopped');
        a.child.kill('SIGCONT');
        // It finds out at its next write: its fence fails (lease lost), or, stopped inside a transaction that the server
        // ended meanwhile, the rest of that transaction is refused (a journal failure). Either way it writes nothing.
        await a.waitLine(new RegExp(`${runId} (lost its lease|interrupted: \\[LB_DB_UNREACHABLE\\])`), 30_000);
        assert.equal(ofA(), writtenByA, 'woken, the stopped worker wrote 0 rows to the run');
        assert.equal((await stopWorker(a)).code, 0);
        assert.equal((await stopWorker(b)).code, 0);
      } finally {
        a.child.kill('SIGCONT');
        a.child.kill('SIGKILL');
        b?.child.kill('SIGKILL');
      }
      assertExactlyOnce(e, runId, 3);
      const ev = assertNoGap(e, runId);
      const takeover = ev.find((x) => x.kind === 'run.lease-acquired');
      assert.equal((JSON.parse(takeover?.data ?? '{}') as { epoch?: number }).epoch, 2, 'the second worker holds a new epoch');
      assert.equal(status(e, runId), 'completed');
    });
  });

  describe('claim race', () => {
    it('4 workers, 100 runs queued or interrupted: each claimed once, all complete, every effect once', async () => {
      const e = env(pg.server.createDatabase());
      // 30 runs interrupted for real: a worker takes them all at once and is killed by its first effect.
      await detachMany(
        e,
        Array.from({ length: 30 }, (_, i) => ({ id: `x${String(i).padStart(2, '0')}`, input: { items: 2, pauseMs: 300 } })),
      );
      const crasher = startWorker(e, 'crasher', ['--concurrency', '30', '--crash-at', 'ledger.post#1@after-execute']);
      const died = await crasher.exited;
      assert.equal(died.signal, 'SIGKILL');
      assert.equal(crasher.lines.filter((l) => / claimed /.test(l)).length, 30, 'the crashed worker held all 30');
      await detachMany(
        e,
        Array.from({ length: 70 }, (_, i) => ({ id: `q${String(i).padStart(2, '0')}`, input: { items: 2 } })),
      );
      const workers = [0, 1, 2, 3].map((i) => startWorker(e, `race${i}`, ['--concurrency', '4']));
      try {
        await waitFor(
          'all 100 runs completed',
          () => withStore(e, (s) => s.reader.runs(200).filter((r) => r.status === 'completed').length === 100 || undefined),
          240_000,
          500,
        );
        for (const w of workers) assert.equal((await stopWorker(w)).code, 0);
      } finally {
        for (const w of workers) w.child.kill('SIGKILL');
      }
      const claims = workers.flatMap((w) => w.lines.flatMap((l) => /claimed (\S+) to/.exec(l)?.[1] ?? []));
      assert.equal(claims.length, 100, 'exactly 100 claims among the 4 workers');
      assert.equal(new Set(claims).size, 100, 'no run claimed twice');
      withStore(e, (s) => {
        for (const r of s.reader.runs(200)) {
          const ev = s.reader.events(r.id, 0, 10_000);
          assert.equal(ev.filter((x) => x.kind === 'run.started').length, 1, `${r.id} started once`);
          assert.equal(
            ev.filter((x) => x.kind === 'run.lease-acquired').length,
            r.id.startsWith('x') ? 1 : 0,
            `${r.id} taken over ${r.id.startsWith('x') ? 'once' : 'never'}`,
          );
          assert.equal(r.attempt, r.id.startsWith('x') ? 2 : 1);
        }
      });
      for (let i = 0; i < 30; i++) assertExactlyOnce(e, `x${String(i).padStart(2, '0')}`, 2);
      for (let i = 0; i < 70; i++) assertExactlyOnce(e, `q${String(i).padStart(2, '0')}`, 2);
    });
  });
});
