// `logbook run --detach` and `logbook worker` on a SQLite journal: queued runs, why a run waits, versions, SIGTERM release.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tmpDir } from '../helpers';
import { WORKER_SCRIPTS, cliSync, detach, effectCounts, expectedKeys, startWorker, stopWorker, waitFor, withStore, type Env } from '../pg/workers';

function sqliteEnv(): Env {
  const dir = tmpDir('logbook-worker-sqlite-');
  return { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
}

/** A copy of the worker scripts folder whose ledger agent is another version (its code differs), with node_modules reachable. */
function otherVersion(): string {
  const dir = tmpDir('logbook-worker-v2-');
  for (const f of fs.readdirSync(WORKER_SCRIPTS)) fs.copyFileSync(path.join(WORKER_SCRIPTS, f), path.join(dir, f));
  const file = path.join(dir, 'ledger.ts');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('return { items: input.items };', "return { items: input.items, version: 'two' };"));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

describe('logbook run --detach and logbook worker (SQLite)', function () {
  this.timeout(120_000);

  it('queues a run (exit 0, prints its id); ls says no worker runs; resume refuses it', () => {
    const e = sqliteEnv();
    const id = detach(e, { items: 2 }, 'queued-1');
    assert.equal(id, 'queued-1');
    const ls = cliSync(e, ['ls']);
    assert.match(ls.stdout, /queued-1\s+ledger\s+queued/);
    assert.match(ls.stdout, /no worker is running: start one with `logbook worker/);
    const json = JSON.parse(cliSync(e, ['ls', '--json']).stdout) as Array<{ id: string; status: string; scriptVersion: string; waiting: string }>;
    assert.equal(json[0]?.status, 'queued');
    assert.match(json[0]?.scriptVersion ?? '', /^[0-9a-f]{16}$/);
    const resume = cliSync(e, ['resume', 'queued-1']);
    assert.equal(resume.status, 2);
    assert.match(resume.stderr, /LB_RUN_NOT_RESUMABLE.*queued/);
    const bad = cliSync(e, ['run', '--detach', path.join(WORKER_SCRIPTS, 'ledger.ts'), '--input', '{"items":0}']);
    assert.equal(bad.status, 2, 'the input is checked before anything is queued');
    assert.match(bad.stderr, /LB_INVALID_INPUT/);
  });

  it('claims only the versions it has: a run of another version waits, and ls says why', async () => {
    const e = sqliteEnv();
    detach(e, { items: 1 }, 'v1-run');
    const v2 = startWorker(e, 'has-v2', [], otherVersion());
    try {
      await v2.waitLine(/claims runs of ledger/);
      await new Promise((r) => setTimeout(r, 800));
      assert.ok(!v2.lines.some((l) => /claimed v1-run/.test(l)), 'a worker never claims a version it does not have');
      const ls = cliSync(e, ['ls']);
      assert.match(ls.stdout, /v1-run\s+ledger\s+queued.*no worker has version [0-9a-f]{8} of ledger \(has-v2 has [0-9a-f]{8}\)/);
    } finally {
      await stopWorker(v2);
    }
    assert.equal(effectCounts(e).size, 0, 'nothing ran');
    // The worker with the run's own version takes it.
    const right = startWorker(e, 'has-v1');
    await right.waitLine(/v1-run completed/);
    assert.equal((await stopWorker(right)).code, 0);
  });

  it('refuses --agents naming an agent its folder lacks, and a folder with no agent', () => {
    const e = sqliteEnv();
    const r = cliSync(e, ['worker', '--scripts', WORKER_SCRIPTS, '--agents', 'ledger,nope']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--agents names nope, which no script in .* defines \(found: ledger\)/);
    const empty = cliSync(e, ['worker', '--scripts', tmpDir('logbook-empty-')]);
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /No agent script in/);
  });

  it('on SIGTERM stops claiming, lets the grace period pass, releases the run it holds; another worker takes it at once and finishes it', async () => {
    const e = sqliteEnv();
    const a = startWorker(e, 'term-a', ['--grace', '1']);
    await a.waitLine(/claims runs of ledger/);
    detach(e, { items: 3, pauseMs: 1500 }, 'long');
    await a.waitLine(/claimed long to start/);
    await waitFor('the first effect', () => effectCounts(e).has('post:long:0') || undefined, 30_000, 50);
    const holder = withStore(e, (s) => s.reader.run('long')?.lease_owner);
    assert.match(holder ?? '', /worker term-a/, 'ls shows the worker that holds it');
    assert.match(cliSync(e, ['ls']).stdout, /long\s+ledger\s+running.*\(worker term-a\) session [0-9a-f]{8} \(epoch 1\)/);
    a.child.kill('SIGTERM');
    assert.equal((await a.exited).code, 0, 'exit 0 after releasing');
    assert.ok(
      a.lines.some((l) => /long released: it stays resumable/.test(l)),
      a.lines.join('\n'),
    );
    const row = withStore(e, (s) => s.reader.run('long'));
    assert.equal(row?.lease_token, null, 'its lease is given back');
    assert.equal(row?.status, 'running', 'the run keeps its status, resumable');
    const b = startWorker(e, 'term-b');
    await b.waitLine(/claimed long to resume \(epoch 2, attempt 2\)/);
    await b.waitLine(/long completed/);
    assert.equal((await stopWorker(b)).code, 0);
    const counts = effectCounts(e);
    for (const k of expectedKeys('long', 3)) assert.equal(counts.get(k), 1, k);
  });

  it('a doubt with no verify found by a worker stops the run for a decision; the CLI decides it and the run completes', async () => {
    const e = sqliteEnv();
    const a = startWorker(e, 'doubt-a', ['--crash-at', 'ledger.charge#1@after-start']);
    await a.waitLine(/claims runs of ledger/);
    detach(e, { items: 1, charge: true }, 'doubt');
    assert.equal((await a.exited).signal, 'SIGKILL');
    const b = startWorker(e, 'doubt-b');
    try {
      await b.waitLine(/claimed doubt to resume/);
      await b.waitLine(/doubt needs-decision/);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(b.lines.filter((l) => /claimed doubt/.test(l)).length, 1, 'a run waiting for a person is not claimed again');
    } finally {
      assert.equal((await stopWorker(b)).code, 0);
    }
    assert.match(cliSync(e, ['ls']).stdout, /doubt\s+ledger\s+needs a decision/);
    assert.equal(effectCounts(e).get('charge:doubt'), undefined, 'the charge never ran: the kill came after its start');
    const decided = cliSync(e, ['resume', 'doubt', '--decide', 'charge:doubt=not-happened']);
    assert.equal(decided.status, 0, decided.stderr);
    assert.equal(
      withStore(e, (s) => s.reader.run('doubt')?.status),
      'completed',
    );
    const counts = effectCounts(e);
    for (const k of [...expectedKeys('doubt', 1), 'charge:doubt']) assert.equal(counts.get(k), 1, k);
  });
});
