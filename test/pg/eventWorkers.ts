// run.waitFor under `logbook worker`, on any journal (a SQLite file or a PostgreSQL database): the same scenarios,
// run by test/cli/events-worker.test.ts and test/pg/events.test.ts.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES } from '../helpers';
import { spawn } from 'node:child_process';
import { CLI } from '../helpers';
import { baseEnv, cliSync, startWorker, stopWorker, withStore, type Env, type Worker } from './workers';

export const EVENTS_FOLDER = path.join(FIXTURES, 'events');
const SCRIPT = path.join(EVENTS_FOLDER, 'replier.ts');

const answers = (e: Env): string[] => {
  const f = path.join(e.dir, 'ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean) : [];
};

function detach(e: Env, runId: string, waits: unknown[]): void {
  const q = cliSync(e, ['run', '--detach', SCRIPT, '--run-id', runId, '--input', JSON.stringify({ waits })]);
  assert.equal(q.status, 0, q.stderr);
}

/**
 * A worker releases a run at its wait (status waiting, no lease, which event); `send --no-resume` only keeps the event,
 * and a worker continues the run; the event is used once.
 */
export async function workerContinuesOnEvent(e: Env): Promise<void> {
  detach(e, 'w1', [{ name: 'reply' }]);
  const a = startWorker(e, 'ea', [], EVENTS_FOLDER);
  try {
    await a.waitLine(/w1 waiting for event "reply" \(lease released\)/);
    const row = withStore(e, (s) => s.reader.run('w1'));
    assert.equal(row?.status, 'waiting');
    assert.equal(row?.lease_token, null, 'a waiting run holds no lease');
    assert.equal(row?.waiting_for, 'reply');
    const sent = cliSync(e, ['send', 'w1', 'reply', '--data', '{"text":"via worker"}', '--no-resume', '--json']);
    assert.equal(sent.status, 0, sent.stderr);
    assert.equal((JSON.parse(sent.stdout) as { expect: string }).expect, 'waiting-now');
    await a.waitLine(/w1 completed/);
  } finally {
    await stopWorker(a);
  }
  assert.deepEqual(answers(e), ['answer:w1 via worker']);
  assert.deepEqual(
    withStore(e, (s) => s.reader.inbox.ofRun('w1').map((x) => x.status)),
    ['delivered'],
  );
}

/** The wait's timeout is due by the journal: a worker killed meanwhile, another claims the run then, and the wait returns undefined. */
export async function workerTimesOut(e: Env): Promise<void> {
  detach(e, 'w2', [{ name: 'reply', timeout: '2s' }]);
  const a = startWorker(e, 'eb', [], EVENTS_FOLDER);
  let b: Worker | undefined;
  try {
    await a.waitLine(/w2 waiting for event "reply" until \S+ \(lease released\)/);
    const until = withStore(e, (s) => s.reader.run('w2')?.wake_at) ?? assert.fail('no deadline');
    a.child.kill('SIGKILL');
    await a.exited;
    b = startWorker(e, 'ec', [], EVENTS_FOLDER);
    await b.waitLine(/w2 completed/);
    const out = JSON.parse(withStore(e, (s) => s.reader.run('w2')?.output) ?? 'null') as { replies: unknown[] };
    assert.deepEqual(out.replies, [null]);
    const timedOut = withStore(e, (s) => s.reader.events('w2').find((x) => x.kind === 'wait.timed-out'));
    assert.equal((JSON.parse(timedOut?.data ?? '{}') as { deadline?: number }).deadline, until);
    // A late event to the run that ended is refused, and nothing is written.
    const late = cliSync(e, ['send', 'w2', 'reply', '--data', '{"text":"late"}']);
    assert.equal(late.status, 2);
    assert.match(late.stderr, /LB_EVENT_REFUSED/);
  } finally {
    await stopWorker(a);
    if (b) await stopWorker(b);
  }
}

/** `logbook <args>` as a child process not waited for: its exit code and what it printed. */
function cliAsync(e: Env, args: string[]): Promise<{ code: number | null; out: string }> {
  const c = spawn(process.execPath, [CLI, ...args, '--journal', e.db], { cwd: e.dir, env: baseEnv(e), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => c.on('exit', (code) => resolve({ code, out })));
}

/**
 * Attacks on one run, each in real processes at once: four senders of one dedupe id (one keeps it, three say
 * duplicate), then sends racing resumes of the waiting run (the event is delivered once, and the run completes).
 */
export async function concurrentSends(e: Env): Promise<void> {
  detach(e, 'w3', [{ name: 'first' }, { name: 'reply' }]);
  const a = startWorker(e, 'ed', [], EVENTS_FOLDER);
  try {
    await a.waitLine(/w3 waiting for event "first"/);
  } finally {
    await stopWorker(a);
  }
  const same = await Promise.all(
    [0, 1, 2, 3].map(() => cliAsync(e, ['send', 'w3', 'reply', '--data', '{"text":"once"}', '--id', 'dup-1', '--no-resume', '--json'])),
  );
  const outcomes = same.map((r) => (JSON.parse(r.out) as { outcome: string }).outcome).sort();
  assert.deepEqual(outcomes, ['duplicate', 'duplicate', 'duplicate', 'kept'], same.map((r) => r.out).join('\n'));
  assert.equal(
    withStore(e, (s) => s.reader.inbox.ofName('w3', 'reply').length),
    1,
  );
  // The run waits for "first": a resume races each send of it; whoever takes the lease, the event is taken once.
  const [resumed, sent] = await Promise.all([cliAsync(e, ['resume', 'w3']), cliAsync(e, ['send', 'w3', 'first', '--data', '{"text":"go"}'])]);
  assert.equal(sent.code, 0, sent.out);
  assert.ok([0, 3, 4].includes(resumed.code ?? -1) || /already completed/.test(resumed.out), resumed.out);
  // Whatever the race left (a run still waiting if the resume stopped first and then the send's resume lost), finish it.
  if (withStore(e, (s) => s.reader.run('w3')?.status) !== 'completed') assert.equal(cliSync(e, ['resume', 'w3']).status, 0);
  const out = JSON.parse(withStore(e, (s) => s.reader.run('w3')?.output) ?? 'null') as { replies: unknown[] };
  assert.deepEqual(out.replies, ['go', 'once']);
  assert.deepEqual(
    withStore(e, (s) => s.reader.inbox.ofRun('w3').map((x) => [x.name, x.status])),
    [
      ['reply', 'delivered'],
      ['first', 'delivered'],
    ],
  );
  assert.deepEqual(answers(e), ['answer:w3 go / once']);
}
