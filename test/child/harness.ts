// Child runs with real processes, the same scenarios on a SQLite file and on PostgreSQL: the parent (campaign) and its
// child (drafter) as real `logbook` processes, killed with SIGKILL, raced, resumed, compensated and cancelled.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES } from '../helpers';
import { baseEnv, cliSync, effectCounts, ledger, startWorker, stopWorker, withStore, type Env } from '../pg/workers';
import type { RunRow } from '../../src/runtime/store/rows';

export const CHILD_FOLDER = path.join(FIXTURES, 'child');
export const CAMPAIGN = path.join(CHILD_FOLDER, 'campaign.ts');

export interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; out: string; err: string }>;
}

/** `logbook <args> --journal <db>` started, not waited for. */
export function start(e: Env, args: string[], extra: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, [CLI, ...args, '--journal', e.db], { cwd: e.dir, env: baseEnv(e, extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
  return { child, exited };
}

export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The marker a fixture writes when it starts holding (its pid), removed so the next hold is seen afresh. */
export function takeMarker(e: Env, name: string): number | undefined {
  const f = path.join(e.dir, name);
  try {
    const pid = Number(fs.readFileSync(f, 'utf8'));
    // Read half-written (created, not yet filled): looked at again on the next poll.
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    fs.rmSync(f);
    return pid;
  } catch {
    return undefined;
  }
}

export function runRow(e: Env, id: string): RunRow | undefined {
  return withStore(e, (s) => s.reader.run(id));
}

export function childrenOf(e: Env, id: string): RunRow[] {
  return withStore(e, (s) => s.reader.children(id));
}

/** Every effect of the fixture's world happened at most once per key. */
export function assertOnce(e: Env): void {
  for (const [k, n] of effectCounts(e)) assert.equal(n, 1, `${k} happened ${n} times:\n${ledger(e).join('\n')}`);
}

export function parsedOutput(e: Env, id: string): unknown {
  return JSON.parse(runRow(e, id)?.output ?? 'null');
}

/** Starts the campaign whose child holds `holdMs` in its first step, and SIGKILLs the process while the child holds. */
export async function killParentWhileChildRuns(e: Env, runId: string, holdMs = 30_000, holdAttempts = 1): Promise<void> {
  const p = start(e, ['run', CAMPAIGN, '--run-id', runId, '--input', JSON.stringify({ holdMs, holdAttempts })]);
  const pid = await waitFor('the child to start holding', () => takeMarker(e, 'child-holding'));
  assert.equal(pid, p.child.pid, 'the child runs in its parent’s process');
  p.child.kill('SIGKILL');
  await p.exited;
}

export function cli(e: Env, args: string[]): { status: number | null; stdout: string; stderr: string } {
  return cliSync(e, args);
}

// ---- the scenarios, each on the journal `e` names ----------------------------------------------------------------

/** Kill the parent while its child runs: the child is left interrupted, and resuming the parent resumes it, once. */
export async function parentKilledWhileChildRuns(e: Env): Promise<void> {
  await killParentWhileChildRuns(e, 'p');
  const kids = childrenOf(e, 'p');
  assert.deepEqual(
    kids.map((k) => [k.id, k.agent, k.parent_step, k.attempt]),
    [['p.child-2', 'drafter', 1, 1]],
    'one child, started at the parent’s step #2',
  );
  assert.equal(runRow(e, 'p.child-2')?.status, 'running', 'left as its process died: interrupted');
  const r = cli(e, ['resume', 'p', '--json']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(parsedOutput(e, 'p'), { sent: 'a draft about spring' });
  const again = childrenOf(e, 'p');
  assert.deepEqual(
    again.map((k) => [k.id, k.status, k.attempt]),
    [['p.child-2', 'completed', 2]],
    'the same child, resumed (attempt 2), not a second one',
  );
  assertOnce(e);
  assert.equal(ledger(e).length, 3, ledger(e).join('\n'));
}

/**
 * Kill the child: the parent's process is gone, a second process drives the child (`logbook resume <child>`), and the
 * parent, resumed meanwhile, waits for it; that process is killed too, and the parent resumes the child itself.
 */
export async function childKilledWhileParentWaits(e: Env): Promise<void> {
  await killParentWhileChildRuns(e, 'p', 30_000, 2);
  const b = start(e, ['resume', 'p.child-2']);
  const pidB = await waitFor('the second driver of the child to hold', () => takeMarker(e, 'child-holding'));
  assert.equal(pidB, b.child.pid);
  // The parent, resumed while another process drives its child, waits for it (it does not start a second one).
  const c = start(e, ['resume', 'p', '--json']);
  await waitFor('the resumed parent to hold its lease', () => {
    const row = runRow(e, 'p');
    return row && row.attempt === 2 && row.lease_token !== null ? row : undefined;
  });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(runRow(e, 'p.child-2')?.attempt, 2, 'the parent did not take the child from its live driver');
  b.child.kill('SIGKILL');
  await b.exited;
  // The parent finds its child's driver gone and resumes the child itself (attempt 3), in its own process.
  const done = await c.exited;
  assert.equal(done.code, 0, done.out + done.err);
  assert.equal(runRow(e, 'p.child-2')?.attempt, 3);
  const took = withStore(e, (s) => s.reader.events('p.child-2').filter((ev) => ev.kind === 'run.lease-acquired' && ev.attempt === 3));
  assert.equal(took.length, 1);
  assert.match(took[0]?.data ?? '', new RegExp(`pid ${c.child.pid} `), 'the waiting parent’s process took its child over');
  assert.equal(childrenOf(e, 'p').length, 1);
  assertOnce(e);
}

/** A second driver on the child while the parent drives it is refused (LB_LEASE_HELD, exit 4), and writes nothing. */
export async function secondDriverOnChildRefused(e: Env): Promise<void> {
  const p = start(e, ['run', CAMPAIGN, '--run-id', 'p', '--input', JSON.stringify({ holdMs: 10_000 })]);
  await waitFor('the child to start holding', () => takeMarker(e, 'child-holding'));
  const lease = (): unknown =>
    withStore(e, (s) => {
      const row = s.reader.run('p.child-2');
      return [row?.attempt, row?.lease_epoch, row?.lease_token, row?.status];
    });
  const before = lease();
  const r = cli(e, ['resume', 'p.child-2']);
  assert.equal(r.status, 4, r.stdout + r.stderr);
  assert.match(r.stderr, /LB_LEASE_HELD/);
  const c = cli(e, ['compensate', 'p']);
  assert.equal(c.status, 4, `compensating a parent while it runs is refused: ${c.stdout}${c.stderr}`);
  assert.deepEqual(lease(), before, 'the refusals took no lease of the child and changed nothing of it');
  const done = await p.exited;
  assert.equal(done.code, 0, done.out + done.err);
  assertOnce(e);
}

/** A parent resumed twice at once drives one child: one resume holds the parent, the other is refused. */
export async function parentResumedTwice(e: Env): Promise<void> {
  await killParentWhileChildRuns(e, 'p', 3000, 2);
  const a = start(e, ['resume', 'p']);
  const b = start(e, ['resume', 'p']);
  const [ra, rb] = await Promise.all([a.exited, b.exited]);
  const codes = [ra.code, rb.code].sort();
  assert.deepEqual(codes, [0, 4], `one completes, one is refused as held:\n${ra.out}${ra.err}\n${rb.out}${rb.err}`);
  const third = cli(e, ['resume', 'p']);
  assert.notEqual(third.status, 0, 'a completed parent is not resumed again');
  assert.equal(childrenOf(e, 'p').length, 1, 'one child, not two');
  assertOnce(e);
}

/** Killed at run.child's own fault points, a resumed parent finds its child and goes on, with one child and every effect once. */
export function killedAtChildPoints(e: Env): void {
  for (const [n, point] of [
    [1, 'child:after-start'],
    [2, 'child:after-end'],
  ] as const) {
    const id = `k${n}`;
    const r = cli(e, ['run', CAMPAIGN, '--run-id', id, '--crash-at', `drafter#1@${point}`]);
    assert.equal(r.status, null, `killed at ${point}: ${r.stdout}${r.stderr}`);
    const kid = runRow(e, `${id}.child-2`);
    assert.ok(kid, `the child's row is durable at ${point}`);
    assert.equal(kid.status, point === 'child:after-start' ? 'running' : 'completed');
    const again = cli(e, ['resume', id]);
    assert.equal(again.status, 0, again.stdout + again.stderr);
    assert.equal(childrenOf(e, id).length, 1);
    assert.equal(runRow(e, `${id}.child-2`)?.attempt, point === 'child:after-start' ? 2 : 1, 'a completed child is not run again');
  }
  assertOnce(e);
}

/**
 * Compensating the parent undoes its child in the same walk, newest first: the parent's last email, the child's draft,
 * the parent's first email. Killed during the child's inverse, compensating again finishes it, each inverse once.
 */
export function compensationOfParentAndChildren(e: Env): void {
  assert.equal(cli(e, ['run', CAMPAIGN, '--run-id', 'p']).status, 0);
  const killed = cli(e, ['compensate', 'p', '--crash-at', 'draft.save#1@compensate:after-start']);
  assert.equal(killed.status, null, killed.stdout + killed.stderr);
  const r = cli(e, ['compensate', 'p', '--json']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(runRow(e, 'p')?.status, 'compensated');
  assert.equal(runRow(e, 'p.child-2')?.status, 'compensated');
  const undo = ledger(e).filter((l) => /retract|delete/.test(l));
  assert.deepEqual(undo, [
    'email.retract compensate:email:p:all@example.com',
    'draft.delete compensate:draft:p.child-2:spring',
    'email.retract compensate:email:p:boss@example.com',
  ]);
  assertOnce(e);
}

/** A failing child makes run.child throw its error with the child's id; resuming the parent resumes (retries) the child. */
export function failingChild(e: Env): void {
  const r = cli(e, ['run', CAMPAIGN, '--run-id', 'p', '--input', '{"fail":true}', '--json']);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout) as { status: string; error: { code: string; message: string } };
  assert.equal(out.status, 'failed');
  assert.equal(out.error.code, 'LB_CHILD_FAILED');
  assert.match(out.error.message, /Child run p\.child-2 \(agent drafter\) failed: the draft is too short/);
  const caught = cli(e, ['run', CAMPAIGN, '--run-id', 'q', '--input', '{"fail":true,"catchFailure":true}']);
  assert.equal(caught.status, 0, caught.stdout + caught.stderr);
  assert.deepEqual(parsedOutput(e, 'q'), { childFailed: 'q.child-2', status: 'failed' });
  const again = cli(e, ['resume', 'p', '--json']);
  assert.equal(again.status, 1);
  assert.equal(runRow(e, 'p.child-2')?.attempt, 2, 'the failed child was resumed, not started again');
  assert.equal(childrenOf(e, 'p').length, 1);
  assertOnce(e);
}

/** Cancelling a parent whose child runs stops both (the child first, at its next boundary); with --compensate both are undone. */
export async function cancelReachesChild(e: Env, compensate: boolean): Promise<void> {
  const p = start(e, ['run', CAMPAIGN, '--run-id', 'p', '--input', JSON.stringify({ holdMs: 3000 })]);
  await waitFor('the child to start holding', () => takeMarker(e, 'child-holding'));
  const c = cli(e, ['cancel', 'p', '--reason', 'wrong topic', ...(compensate ? ['--compensate'] : []), '--json']);
  assert.equal(c.status, 0, c.stdout + c.stderr);
  const report = JSON.parse(c.stdout) as { children?: Array<{ runId: string; how: string }> };
  assert.deepEqual(report.children, [{ runId: 'p.child-2', how: 'requested' }]);
  const done = await p.exited;
  // Its own process stops it, cancelled (exit 1). Asked to compensate, that process or the waiting `logbook cancel`,
  // whichever takes the lease first once the run stopped, compensates it; the other finds it held and leaves it be.
  if (!compensate) assert.equal(done.code, 1, done.out + done.err);
  const want = compensate ? 'compensated' : 'cancelled';
  assert.equal(runRow(e, 'p')?.status, want);
  assert.equal(runRow(e, 'p.child-2')?.status, want);
  assert.equal(withStore(e, (s) => s.reader.steps('p.child-2', 0, 10)).filter((s) => s.name === 'save').length, 0, 'no new step after the cancel');
  assert.deepEqual(
    ledger(e).filter((l) => l.startsWith('email')),
    compensate ? ['email.send email:p:boss@example.com', 'email.retract compensate:email:p:boss@example.com'] : ['email.send email:p:boss@example.com'],
  );
  assertOnce(e);
}

/** Under workers: one claims the parent and drives its child in its own process; killed, another finishes both, once. */
export async function workerKilledMidChild(e: Env): Promise<void> {
  const q = cli(e, ['run', '--detach', CAMPAIGN, '--run-id', 'w', '--input', JSON.stringify({ holdMs: 30_000 })]);
  assert.equal(q.status, 0, q.stdout + q.stderr);
  const a = startWorker(e, 'wa', [], CHILD_FOLDER);
  let b;
  try {
    await a.waitLine(/has drafter/);
    const pid = await waitFor('the child to start holding', () => takeMarker(e, 'child-holding'));
    assert.equal(pid, a.child.pid, 'the worker that claimed the parent drives its child');
    a.child.kill('SIGKILL');
    await a.exited;
    b = startWorker(e, 'wb', [], CHILD_FOLDER);
    await b.waitLine(/w completed/);
  } finally {
    await stopWorker(a);
    if (b) await stopWorker(b);
  }
  assert.equal(runRow(e, 'w')?.status, 'completed');
  assert.deepEqual(
    childrenOf(e, 'w').map((k) => [k.id, k.status, k.attempt]),
    [['w.child-2', 'completed', 2]],
  );
  assertOnce(e);
  assert.equal(ledger(e).length, 3, ledger(e).join('\n'));
}

/**
 * A child stopped for a decision (its action without verify, killed after the effect) stops its parent too: exit 3,
 * naming the child and the action; decided on the child, resuming the parent goes on with the child's output.
 */
export function childNeedsDecision(e: Env): void {
  const killed = cli(e, ['run', CAMPAIGN, '--run-id', 'p', '--input', '{"verify":false}', '--crash-at', 'draft.keep#1@after-execute']);
  assert.equal(killed.status, null, killed.stdout + killed.stderr);
  const stop = cli(e, ['resume', 'p', '--json']);
  assert.equal(stop.status, 3, stop.stdout + stop.stderr);
  const o = JSON.parse(stop.stdout) as { status: string; waitingOn: { actionId: string; runId: string } };
  assert.equal(o.status, 'needs-decision');
  assert.deepEqual(o.waitingOn && { actionId: o.waitingOn.actionId, runId: o.waitingOn.runId }, { actionId: 'keep:p.child-2:spring', runId: 'p.child-2' });
  const text = cli(e, ['resume', 'p']);
  assert.equal(text.status, 3);
  assert.match(
    text.stdout,
    /next {5}logbook resume p\.child-2 --decide keep:p\.child-2:spring=happened\|not-happened \[--result JSON\]; then: logbook resume p/,
  );
  const plan = cli(e, ['plan', 'p']);
  assert.match(plan.stdout, /stops {8}for a decision on draft\.keep keep:p\.child-2:spring of child run p\.child-2/);
  const decided = cli(e, ['resume', 'p.child-2', '--decide', 'keep:p.child-2:spring=happened']);
  assert.equal(decided.status, 0, decided.stdout + decided.stderr);
  assert.equal(runRow(e, 'p')?.status, 'needs-decision', 'the parent waits until it is resumed');
  const done = cli(e, ['resume', 'p']);
  assert.equal(done.status, 0, done.stdout + done.stderr);
  assert.deepEqual(parsedOutput(e, 'p'), { sent: 'a draft about spring' });
  assertOnce(e);
}
