// Attacks on run.child together with run.waitFor, run.sleep and cancel, with real processes, on the journal `env` gives
// (SQLite in test/cli/child-events.test.ts, PostgreSQL in test/pg/child-events.test.ts): a child that waits for an event
// (its parent's status, `logbook send` to the child and to the parent by mistake, under a worker), a child that sleeps
// under a worker, cancels of a parent whose child waits, kills at every fault point, and a planted secret.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { CLI } from '../helpers';
import { baseEnv } from '../pg/workers';
import { GITHUB_TOKEN, assertNoSecret } from '../secrets/plant';
import { startWorker, stopWorker, withStore, type Env } from '../pg/workers';
import { CHILD_FOLDER, assertOnce, childrenOf, cli, runRow } from './harness';
import { ledger } from '../pg/workers';
import { start } from './harness';

const INQUIRER = path.join(CHILD_FOLDER, 'inquirer.ts');

function inbox(e: Env, id: string): Array<{ name: string; status: string }> {
  return withStore(e, (s) => s.reader.inbox.ofRun(id).map((r) => ({ name: r.name, status: r.status })));
}

const REPLY = JSON.stringify({ text: 'yes' });

/** Every note once, and the three of a completed run. */
function assertNotes(e: Env, id: string): void {
  assertOnce(e);
  assert.deepEqual(
    ledger(e).sort(),
    [`note.send note:${id}.child-2:heard`, `note.send note:${id}.child-2:ready`, `note.send note:${id}:close`, `note.send note:${id}:open`].sort(),
  );
}

/** The scenarios, as `it`s of the caller's describe. */
export function childEventScenarios(env: () => Env): void {
  it('the parent stops `waiting` for its child (exit 3), not failed; ls and show say which child and which event', () => {
    const e = env();
    const r = cli(e, ['run', INQUIRER, '--run-id', 'p', '--json']);
    assert.equal(r.status, 3, r.stdout + r.stderr);
    const o = JSON.parse(r.stdout) as { status: string };
    assert.equal(o.status, 'waiting');
    assert.equal(runRow(e, 'p')?.status, 'waiting');
    assert.equal(runRow(e, 'p.child-2')?.status, 'waiting');
    const ls = cli(e, ['ls']);
    assert.match(ls.stdout, /p +inquirer +waiting .*child run p\.child-2.*"reply"/);
    const text = cli(e, ['resume', 'p']);
    assert.equal(text.status, 3, text.stdout + text.stderr);
    assert.match(text.stdout, /logbook send p\.child-2 reply/);
    // plan says where the event goes, never the parent's internal marker.
    const plan = cli(e, ['plan', 'p']);
    assert.match(plan.stdout, /waiting +for event "reply" \(its child run p\.child-2 waits for it\).*`logbook send p\.child-2 reply --data JSON`/);
    assert.doesNotMatch(plan.stdout, /logbook:child/);
    assert.equal(childrenOf(e, 'p').length, 1);
  });

  it('`logbook send` to the child continues the child and its waiting parent: both complete, the event taken once', () => {
    const e = env();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'p']).status, 3);
    const s = cli(e, ['send', 'p.child-2', 'reply', '--data', REPLY]);
    assert.equal(s.status, 0, s.stdout + s.stderr);
    assert.equal(runRow(e, 'p.child-2')?.status, 'completed');
    assert.equal(runRow(e, 'p')?.status, 'completed');
    assert.deepEqual(JSON.parse(runRow(e, 'p')?.output ?? 'null'), { got: 'yes' });
    assert.deepEqual(inbox(e, 'p.child-2'), [{ name: 'reply', status: 'delivered' }]);
    assertNotes(e, 'p');
  });

  it('`logbook send` to the parent by mistake is refused, names the child, and writes nothing', () => {
    const e = env();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'p']).status, 3);
    const s = cli(e, ['send', 'p', 'reply', '--data', REPLY]);
    assert.equal(s.status, 2, s.stdout + s.stderr);
    assert.match(s.stderr, /LB_EVENT_REFUSED/);
    assert.match(s.stderr, /logbook send p\.child-2 reply/);
    assert.deepEqual(inbox(e, 'p'), []);
    assert.equal(runRow(e, 'p')?.status, 'waiting');
    // The right send still completes both.
    assert.equal(cli(e, ['send', 'p.child-2', 'reply', '--data', REPLY]).status, 0);
    assert.equal(runRow(e, 'p')?.status, 'completed');
    assertNotes(e, 'p');
  });

  it('--no-resume to the child, then `logbook resume` of the parent completes both, the event taken once', () => {
    const e = env();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'p']).status, 3);
    assert.equal(cli(e, ['send', 'p.child-2', 'reply', '--data', REPLY, '--no-resume']).status, 0);
    const r = cli(e, ['resume', 'p']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(runRow(e, 'p.child-2')?.status, 'completed');
    assert.deepEqual(inbox(e, 'p.child-2'), [{ name: 'reply', status: 'delivered' }]);
    assertNotes(e, 'p');
  });

  it('killed at every point of the child+wait path (run, then send), resumed: every effect once, the event taken once, one child', () => {
    const e = env();
    const points = [
      ['run', 'listener#1@child:after-start'],
      ['run', 'reply#1@step:before'],
      ['send', 'reply#1@event:after-deliver'],
      ['send', 'listener#1@child:after-end'],
      ['send', 'hold#1@step:before'],
      ['send', 'heard#1@step:after-checkpoint'],
      ['send', 'note.send#1@after-execute'],
      ['send', 'close#1@step:before'],
    ] as const;
    for (const [i, [when, spec]] of points.entries()) {
      const id = `k${i}`;
      const crash = ['--crash-at', spec];
      const r = cli(e, ['run', INQUIRER, '--run-id', id, ...(when === 'run' ? crash : [])]);
      if (when === 'run') {
        assert.equal(r.status, null, `${spec}: killed in the run: ${r.stdout}${r.stderr}`);
        assert.equal(cli(e, ['resume', id]).status, 3, `${spec}: resumed, it waits`);
      } else assert.equal(r.status, 3);
      const s = cli(e, ['send', `${id}.child-2`, 'reply', '--data', REPLY, ...(when === 'send' ? crash : [])]);
      assert.equal(s.status, when === 'send' ? null : 0, `${spec}: ${s.stdout}${s.stderr}`);
      if (when === 'send') {
        const again = cli(e, ['resume', id]);
        assert.equal(again.status, 0, `${spec}: ${again.stdout}${again.stderr}`);
      }
      assert.equal(runRow(e, id)?.status, 'completed', spec);
      assert.equal(childrenOf(e, id).length, 1, spec);
      assert.deepEqual(inbox(e, `${id}.child-2`), [{ name: 'reply', status: 'delivered' }], spec);
      assert.deepEqual(
        ledger(e)
          .filter((l) => l.includes(`:${id}:`) || l.includes(`:${id}.`))
          .sort(),
        [`note.send note:${id}.child-2:heard`, `note.send note:${id}.child-2:ready`, `note.send note:${id}:close`, `note.send note:${id}:open`].sort(),
        spec,
      );
    }
    assertOnce(e);
  });

  it('a planted secret in a child’s input and in an event’s data: masked in run, send, show, ls and plan output (a preview that cuts it too)', () => {
    const e = env();
    const withSecret = (args: string[]): { status: number | null; out: string } => {
      const r = spawnSync(process.execPath, [CLI, ...args, '--journal', e.db], { cwd: e.dir, encoding: 'utf8', env: baseEnv(e, { GITHUB_TOKEN }) });
      return { status: r.status, out: r.stdout + r.stderr };
    };
    const run = withSecret(['run', INQUIRER, '--run-id', 's', '--input', JSON.stringify({ secret: GITHUB_TOKEN })]);
    assert.equal(run.status, 3, run.out);
    const sent = withSecret(['send', 's.child-2', 'reply', '--data', JSON.stringify({ text: GITHUB_TOKEN })]);
    assert.equal(sent.status, 0, sent.out);
    for (const args of [['show', 's'], ['show', 's.child-2'], ['show', 's.child-2', '--json'], ['ls'], ['plan', 's']]) {
      const r = withSecret(args);
      assertNoSecret(r.out, `logbook ${args.join(' ')}`);
    }
    assertNoSecret(run.out + sent.out, 'run and send');
  });

  it('under a worker: the event sent to the child continues both', async () => {
    const e = env();
    assert.equal(cli(e, ['run', '--detach', INQUIRER, '--run-id', 'w']).status, 0);
    const a = startWorker(e, 'wa', [], CHILD_FOLDER);
    try {
      await a.waitLine(/w\b.*waiting/);
      assert.equal(runRow(e, 'w')?.status, 'waiting');
      assert.equal(runRow(e, 'w.child-2')?.status, 'waiting');
      assert.equal(cli(e, ['send', 'w.child-2', 'reply', '--data', REPLY, '--no-resume']).status, 0);
      await a.waitLine(/\bw completed/);
    } finally {
      await stopWorker(a);
    }
    assert.equal(runRow(e, 'w.child-2')?.status, 'completed');
    assert.deepEqual(inbox(e, 'w.child-2'), [{ name: 'reply', status: 'delivered' }]);
    assertNotes(e, 'w');
  });

  it('a child that sleeps under a worker, then waits: both released, woken and continued by the worker, every effect once', async () => {
    const e = env();
    assert.equal(cli(e, ['run', '--detach', INQUIRER, '--run-id', 'z', '--input', JSON.stringify({ childSleep: '2s' })]).status, 0);
    const a = startWorker(e, 'wz', [], CHILD_FOLDER, { LOGBOOK_SLEEP_RELEASE_MS: '300' });
    try {
      await a.waitLine(/\bz sleeping until/);
      await a.waitLine(/\bz waiting for event "reply" of child run z\.child-2/);
      assert.equal(runRow(e, 'z.child-2')?.status, 'waiting');
      assert.equal(cli(e, ['send', 'z.child-2', 'reply', '--data', REPLY, '--no-resume']).status, 0);
      await a.waitLine(/\bz completed/);
    } finally {
      await stopWorker(a);
    }
    assert.equal(childrenOf(e, 'z').length, 1);
    assertNotes(e, 'z');
  });

  it('cancel --compensate of a parent whose child waits: both stop at once, compensated newest first; a late send is refused', () => {
    const e = env();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'c']).status, 3);
    const c = cli(e, ['cancel', 'c', '--compensate', '--reason', 'enough']);
    assert.equal(c.status, 0, c.stdout + c.stderr);
    assert.equal(runRow(e, 'c')?.status, 'compensated');
    assert.equal(runRow(e, 'c.child-2')?.status, 'compensated');
    assert.deepEqual(ledger(e), [
      'note.send note:c:open',
      'note.send note:c.child-2:ready',
      'note.retract compensate:note:c.child-2:ready',
      'note.retract compensate:note:c:open',
    ]);
    const late = cli(e, ['send', 'c.child-2', 'reply', '--data', REPLY]);
    assert.equal(late.status, 2, late.stdout + late.stderr);
    assert.match(late.stderr, /LB_EVENT_REFUSED/);
    assert.deepEqual(inbox(e, 'c.child-2'), []);
  });

  it('cancel of the waiting child itself: the parent, resumed, fails with LB_CHILD_FAILED naming it; nothing runs twice', () => {
    const e = env();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'd']).status, 3);
    assert.equal(cli(e, ['cancel', 'd.child-2']).status, 0);
    assert.equal(runRow(e, 'd.child-2')?.status, 'cancelled');
    const r = cli(e, ['resume', 'd']);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /LB_CHILD_FAILED[\s\S]*d\.child-2/);
    assert.equal(childrenOf(e, 'd').length, 1);
    assertOnce(e);
  });

  it('cancel racing a send that continues the parent (two processes): the run ends cancelled or completed, the event taken at most once, every effect at most once', async () => {
    const e = env();
    for (const [i, delay] of [0, 300, 900, 1500].entries()) {
      const id = `r${i}`;
      assert.equal(cli(e, ['run', INQUIRER, '--run-id', id, '--input', JSON.stringify({ holdMs: 1000 })]).status, 3);
      const send = start(e, ['send', `${id}.child-2`, 'reply', '--data', REPLY]);
      await new Promise((r) => setTimeout(r, delay));
      const cancel = start(e, ['cancel', id, ...(i % 2 ? ['--compensate'] : [])]);
      const [sr, cr] = await Promise.all([send.exited, cancel.exited]);
      const p = runRow(e, id)?.status;
      const k = runRow(e, `${id}.child-2`)?.status;
      const why = `delay ${delay}: send ${sr.code} ${sr.out}${sr.err}\ncancel ${cr.code} ${cr.out}${cr.err}`;
      if (p === 'completed') {
        assert.equal(k, 'completed', why);
        assert.equal(cr.code, 2, why);
      } else {
        assert.ok(p === 'cancelled' || p === 'compensated', why);
        assert.equal(k, p, why);
      }
      const taken = inbox(e, `${id}.child-2`).filter((x) => x.status === 'delivered').length;
      assert.ok(taken <= 1, why);
      assert.ok(
        withStore(e, (st) => !st.reader.view(st.reader.run(id)!).leaseLive),
        why,
      );
    }
    assertOnce(e);
  });
}
