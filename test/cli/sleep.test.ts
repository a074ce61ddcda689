// run.sleep with real processes: killed mid-sleep a resume waits only what is left (the journal's wake time says so),
// `resume --now` goes on at once, and under workers a long sleep holds no lease until another worker wakes it.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURES, cli, cliAsync, foldRows, tmpDir } from '../helpers';
import { startWorker, stopWorker, waitFor, type Env } from '../pg/workers';

const FOLDER = path.join(FIXTURES, 'sleep');
const SCRIPT = path.join(FOLDER, 'sleeper.ts');
/** A preload that runs a process's Date ahead by $LOGBOOK_TEST_CLOCK_OFFSET_MS (the test's fake clock). */
// Outside the scripts folder: a worker loads every script of its folder, and would run this one a second time.
const CLOCK = path.join(FIXTURES, 'clock-offset.cjs');

interface Row {
  status: string;
  lease_token: string | null;
  wake_at: number | null;
  output: string | null;
}

function read<T>(file: string, fn: (db: Database.Database) => T): T {
  // Steps and actions folded from the log first, as any reader does (a live or killed writer may not have yet).
  foldRows(file);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const runRow = (file: string, id: string): Row | undefined =>
  read(file, (db) => db.prepare('SELECT status, lease_token, wake_at, output FROM runs WHERE id = ?').get(id) as Row | undefined);

/** The nap step's journaled wake time, once its start is durable. */
const napWake = (file: string, id: string): number | undefined =>
  read(file, (db) => {
    const r = db.prepare("SELECT result FROM steps WHERE run_id = ? AND name = 'nap' AND status = 'completed'").get(id) as { result: string } | undefined;
    return r ? (JSON.parse(r.result) as { wakeAt: number }).wakeAt : undefined;
  });

/** The kernel's state letter of a process (R, S, T for stopped…), or undefined once it is gone. */
function procState(pid: number | undefined): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid ?? 0}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

const eventsOf = (file: string, id: string): Array<{ kind: string; attempt: number }> =>
  read(file, (db) => db.prepare('SELECT kind, attempt FROM events WHERE run_id = ? ORDER BY seq').all(id) as Array<{ kind: string; attempt: number }>);

/** napWake, or undefined while the journal does not exist yet. */
const napWakeSoon = (file: string, id: string): number | undefined => {
  try {
    return napWake(file, id);
  } catch {
    return undefined;
  }
};

async function killMidSleep(dir: string, sleep: string): Promise<number> {
  const file = path.join(dir, 'journal.db');
  const child = cliAsync(dir, ['run', SCRIPT, '--run-id', 'r', '--input', JSON.stringify({ sleep })]);
  const exited = new Promise((r) => child.on('exit', r));
  const wakeAt = await waitFor(
    'the sleep to start',
    () => {
      try {
        return napWake(file, 'r');
      } catch {
        return undefined;
      }
    },
    60_000,
    25,
  );
  child.kill('SIGKILL');
  await exited;
  return wakeAt;
}

describe('run.sleep', function () {
  this.timeout(120_000);

  it('killed mid-sleep, a resume waits only what is left: the wake time journaled at the start stands, and the next step runs after it', async () => {
    const dir = tmpDir('logbook-sleep-');
    const wakeAt = await killMidSleep(dir, '3s');
    const resumedAt = Date.now();
    const r = cli(dir, ['resume', 'r', '--json']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const file = path.join(dir, 'journal.db');
    assert.equal(napWake(file, 'r'), wakeAt, 'the resume replayed the sleep: its wake time was not journaled anew');
    // Restarted from zero, it would wake at resumedAt + 3 s or later: the wake time is the first attempt's.
    assert.ok(wakeAt < resumedAt + 3000, `wake time ${wakeAt} is the first attempt's, not a new 3 s from ${resumedAt}`);
    const out = JSON.parse(runRow(file, 'r')?.output ?? 'null') as { wokeAt: number };
    assert.ok(out.wokeAt >= wakeAt, `the step after the sleep ran at ${out.wokeAt}, not before the wake time ${wakeAt}`);
  });

  it('--crash-at nap#1@sleep:after-start kills the run with its wake time durable; the resume waits out that wake time, and a replayed sleep never hits the point again', () => {
    const dir = tmpDir('logbook-sleep-');
    const file = path.join(dir, 'journal.db');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'r', '--input', JSON.stringify({ sleep: '2s' }), '--crash-at', 'nap#1@sleep:after-start']);
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    assert.match(killed.stderr, /--crash-at nap#1@sleep:after-start reached in run r/);
    const wakeAt = napWake(file, 'r');
    assert.ok(wakeAt !== undefined, 'the wake time was durable before the kill');
    // Armed again, the point is not reached: a replayed sleep does not start anew.
    const r = cli(dir, ['resume', 'r', '--json', '--crash-at', 'nap#1@sleep:after-start']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /--crash-at nap#1@sleep:after-start was never reached: no run.sleep "nap" passed sleep:after-start/);
    assert.equal(napWake(file, 'r'), wakeAt, "the first start's wake time stands");
    const out = JSON.parse(runRow(file, 'r')?.output ?? 'null') as { wokeAt: number };
    assert.ok(out.wokeAt >= wakeAt, `the step after the sleep ran at ${out.wokeAt}, not before the wake time ${wakeAt}`);
  });

  it('`logbook resume --now` of a run killed in a one-hour sleep goes on at once', async () => {
    const dir = tmpDir('logbook-sleep-');
    const wakeAt = await killMidSleep(dir, '1h');
    const r = cli(dir, ['resume', 'r', '--now']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const out = JSON.parse(runRow(path.join(dir, 'journal.db'), 'r')?.output ?? 'null') as { wokeAt: number };
    assert.ok(out.wokeAt < wakeAt, 'woken before its wake time');
  });

  it('a cancel wakes a sleeping foreground run, which stops cancelled without running the step after it; a released sleeping run is cancelled at once', async () => {
    const dir = tmpDir('logbook-sleep-');
    const file = path.join(dir, 'journal.db');
    const env = { LOGBOOK_LEASE_TTL_MS: '1500' };
    const child = cliAsync(dir, ['run', SCRIPT, '--run-id', 'r', '--input', '{"sleep":"1h"}'], env);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor('the sleep to start', () => napWakeSoon(file, 'r'), 60_000, 25);
      const c = cli(dir, ['cancel', 'r', '--reason', 'no need to wait'], env);
      assert.equal(c.status, 0, c.stdout + c.stderr);
      assert.equal(await exited, 1);
    } finally {
      child.kill('SIGKILL');
    }
    assert.equal(runRow(file, 'r')?.status, 'cancelled');
    assert.equal(read(file, (db) => db.prepare("SELECT COUNT(*) AS n FROM steps WHERE run_id = 'r' AND name = 'after'").get() as { n: number }).n, 0);

    const e: Env = { db: file, dir, ledger: path.join(dir, 'ledger.log') };
    assert.equal(cli(dir, ['run', '--detach', SCRIPT, '--run-id', 's', '--input', '{"sleep":"1h"}']).status, 0);
    const w = startWorker(e, 'wc', [], FOLDER, { LOGBOOK_SLEEP_RELEASE_MS: '500' });
    try {
      await w.waitLine(/s sleeping until/);
    } finally {
      await stopWorker(w);
    }
    const now = cli(dir, ['cancel', 's']);
    assert.equal(now.status, 0, now.stdout + now.stderr);
    assert.match(now.stdout, /^cancelled run s$/m);
    assert.equal(runRow(file, 's')?.status, 'cancelled');
  });

  it('under workers a long sleep releases the lease (sleeping, no holder, ls says until when); a worker killed meanwhile, another wakes it when due', async () => {
    const dir = tmpDir('logbook-sleep-');
    const e: Env = { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
    const q = cli(dir, ['run', '--detach', SCRIPT, '--run-id', 's', '--input', '{"sleep":"3s"}']);
    assert.equal(q.status, 0, q.stdout + q.stderr);
    const env = { LOGBOOK_SLEEP_RELEASE_MS: '500' };
    const a = startWorker(e, 'wa', [], FOLDER, env);
    let b;
    try {
      await a.waitLine(/s sleeping until/);
      const row = runRow(e.db, 's');
      assert.equal(row?.status, 'sleeping');
      assert.equal(row?.lease_token, null, 'a sleeping run holds no lease');
      const wakeAt = row?.wake_at ?? assert.fail('no wake time');
      assert.equal(wakeAt, napWake(e.db, 's'), 'the row says when the journaled sleep ends');
      const ls = cli(dir, ['ls']);
      assert.match(ls.stdout, new RegExp(`s\\s+sleeper\\s+sleeping.*sleeping until ${new Date(wakeAt).toISOString().replace(/\./g, '\\.')}`));
      assert.match(cli(dir, ['plan', 's']).stdout, /sleeping\s+until .*a worker wakes it then/);
      a.child.kill('SIGKILL');
      await a.exited;
      b = startWorker(e, 'wb', [], FOLDER, env);
      await b.waitLine(/s completed/);
      const out = JSON.parse(runRow(e.db, 's')?.output ?? 'null') as { wokeAt: number };
      assert.ok(out.wokeAt >= wakeAt, 'woken when due, not before');
      const kinds = read(
        e.db,
        (db) => db.prepare("SELECT kind, data FROM events WHERE run_id = 's' ORDER BY seq").all() as Array<{ kind: string; data: string }>,
      );
      const slept = kinds.findIndex((k) => k.kind === 'run.sleeping');
      const woken = kinds.findIndex((k, i) => i > slept && k.kind === 'run.lease-acquired');
      assert.ok(slept >= 0 && woken > slept, kinds.map((k) => k.kind).join(' '));
      assert.match(kinds[woken]?.data ?? '', /wb|asleep until due/);
    } finally {
      await stopWorker(a);
      if (b) await stopWorker(b);
    }
  });
  it('a day-long sleep holds no lease and no process: released at once, no worker claims it before it is due, and a worker a day later (a fake clock) wakes it on the journaled wake time', async () => {
    const dir = tmpDir('logbook-sleep-');
    const e: Env = { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
    assert.equal(cli(dir, ['run', '--detach', SCRIPT, '--run-id', 'day', '--input', '{"sleep":"1d"}']).status, 0);
    // The default threshold (30 s): a day is released at once, by a worker on the real clock.
    const a = startWorker(e, 'wa', [], FOLDER);
    let row: Row | undefined;
    try {
      await a.waitLine(/day sleeping until/);
    } finally {
      await stopWorker(a);
    }
    const startedAt = read(
      e.db,
      (db) => (db.prepare("SELECT started_at FROM steps WHERE run_id = 'day' AND name = 'nap'").get() as { started_at: number }).started_at,
    );
    const wakeAt = napWake(e.db, 'day') ?? assert.fail('no journaled wake time');
    // Real: journaled by a process on the real clock, a day after the sleep started.
    assert.ok(Math.abs(wakeAt - (startedAt + 86_400_000)) < 5_000, `wake ${wakeAt} is a day after ${startedAt}`);
    assert.ok(wakeAt > Date.now() + 86_000_000, 'the wake time is a real day ahead');
    const held = read(e.db, (db) => db.prepare("SELECT status, wake_at, lease_token, lease_expires FROM runs WHERE id = 'day'").get()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(held, { status: 'sleeping', wake_at: wakeAt, lease_token: null, lease_expires: null }, 'no lease');
    // No process: the worker that released it is gone, and nothing holds the run for it.
    assert.notEqual(a.child.exitCode ?? a.child.signalCode, null, 'the releasing worker exited');
    const shown = JSON.parse(cli(dir, ['show', 'day', '--json']).stdout) as { run: { status: string; owner: unknown; wakeAt: string } };
    assert.deepEqual([shown.run.status, shown.run.owner, shown.run.wakeAt], ['sleeping', null, new Date(wakeAt).toISOString()]);
    assert.match(cli(dir, ['ls']).stdout, /day\s+sleeper\s+sleeping/);

    // Not due: a worker on the real clock, and one 23 hours later, claim nothing while they poll.
    for (const [name, offset] of [
      ['wb', 0],
      ['wc', 23 * 3_600_000],
    ] as const) {
      const w = startWorker(e, name, [], FOLDER, { NODE_OPTIONS: `--require ${CLOCK}`, LOGBOOK_TEST_CLOCK_OFFSET_MS: String(offset) });
      try {
        await w.waitLine(/claims runs of/);
        await new Promise((r) => setTimeout(r, 1500));
        assert.ok(!w.lines.some((l) => /claimed day/.test(l)), `${name} claimed a run that is not due: ${w.lines.join(' | ')}`);
      } finally {
        await stopWorker(w);
      }
    }
    row = runRow(e.db, 'day');
    assert.equal(row?.status, 'sleeping');

    // A day and a minute later (the fake clock of this worker alone): due, claimed, and the step after the sleep runs once.
    const d = startWorker(e, 'wd', [], FOLDER, { NODE_OPTIONS: `--require ${CLOCK}`, LOGBOOK_TEST_CLOCK_OFFSET_MS: String(86_400_000 + 60_000) });
    try {
      await d.waitLine(/day completed/);
    } finally {
      await stopWorker(d);
    }
    row = runRow(e.db, 'day');
    assert.equal(row?.status, 'completed');
    assert.equal(napWake(e.db, 'day'), wakeAt, 'the wake time journaled when the sleep started stands');
    const out = JSON.parse(row?.output ?? 'null') as { wokeAt: number };
    assert.ok(out.wokeAt >= wakeAt, `the step after the sleep ran at ${out.wokeAt} (its clock), not before ${wakeAt}`);
    assert.equal(fs.readFileSync(path.join(dir, 'after.log'), 'utf8').trim().split('\n').length, 1, 'the step after the sleep ran once');
  });
  it('SIGSTOP of a worker past its lease while it sleeps: another worker wakes the run on the journaled wake time; woken, the frozen one writes and does nothing', async () => {
    const dir = tmpDir('logbook-sleep-');
    const e: Env = { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
    // Shorter than the release threshold: worker a sleeps holding the lease, renewing it, until it is frozen.
    assert.equal(cli(dir, ['run', '--detach', SCRIPT, '--run-id', 'frozen', '--input', '{"sleep":"6s"}']).status, 0);
    const a = startWorker(e, 'wa', [], FOLDER);
    let b;
    try {
      const wakeAt = await waitFor('the sleep to start', () => napWakeSoon(e.db, 'frozen'), 60_000, 20);
      a.child.kill('SIGSTOP');
      await waitFor('worker a stopped', () => procState(a.child.pid) === 'T' || undefined, 5_000, 20);
      const attemptA = read(e.db, (db) => (db.prepare("SELECT attempt FROM runs WHERE id = 'frozen'").get() as { attempt: number }).attempt);
      const writtenByA = eventsOf(e.db, 'frozen').filter((x) => x.attempt === attemptA).length;
      b = startWorker(e, 'wb', [], FOLDER);
      await b.waitLine(/claimed frozen to resume/, 30_000);
      await b.waitLine(/frozen completed/, 30_000);
      const out = JSON.parse(runRow(e.db, 'frozen')?.output ?? 'null') as { wokeAt: number };
      assert.equal(napWake(e.db, 'frozen'), wakeAt, 'the sleep was not started again: the journaled wake time stands');
      assert.ok(out.wokeAt >= wakeAt, `worker b woke the run at ${out.wokeAt}, not before its wake time ${wakeAt}`);
      // On time: a sleep started again would have waited 6 s more from b's claim.
      assert.ok(out.wokeAt < wakeAt + 6_000, `worker b woke the run at ${out.wokeAt}, a full sleep after its wake time ${wakeAt}`);

      a.child.kill('SIGCONT');
      // Woken, its sleep is over at once: its next boundary finds the lease its own clock cannot prove, and stops.
      await a.waitLine(/frozen lost its lease/, 30_000);
      assert.equal(eventsOf(e.db, 'frozen').filter((x) => x.attempt === attemptA).length, writtenByA, 'the woken worker wrote nothing');
      assert.equal(fs.readFileSync(path.join(dir, 'after.log'), 'utf8').trim().split('\n').length, 1, 'the step after the sleep ran once, by b');
      assert.equal(runRow(e.db, 'frozen')?.status, 'completed');
    } finally {
      a.child.kill('SIGCONT');
      await stopWorker(a);
      if (b) await stopWorker(b);
    }
  });
});
