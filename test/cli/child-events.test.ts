// Attacks on run.child together with run.waitFor, run.sleep and cancel, with real processes on a SQLite journal: a child
// that waits for an event (what its parent's status is, `logbook send` to the child and to the parent by mistake, under
// a worker), a child that sleeps under a worker, cancels of a parent whose child waits, and kills at every fault point.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { CLI } from '../helpers';
import { baseEnv } from '../pg/workers';
import { GITHUB_TOKEN, assertNoSecret } from '../secrets/plant';
import { tmpDir } from '../helpers';
import { startWorker, stopWorker, withStore, type Env } from '../pg/workers';
import { CHILD_FOLDER, assertOnce, childrenOf, cli, runRow } from '../child/harness';
import { ledger } from '../pg/workers';

const INQUIRER = path.join(CHILD_FOLDER, 'inquirer.ts');

function sqlite(): Env {
  const dir = tmpDir('logbook-child-ev-');
  return { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
}

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

describe('run.child whose child waits for an event (SQLite, real processes)', function () {
  this.timeout(180_000);

  it('the parent stops `waiting` for its child (exit 3), not failed; ls and show say which child and which event', () => {
    const e = sqlite();
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
    assert.equal(childrenOf(e, 'p').length, 1);
  });

  it('`logbook send` to the child continues the child and its waiting parent: both complete, the event taken once', () => {
    const e = sqlite();
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
    const e = sqlite();
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
    const e = sqlite();
    assert.equal(cli(e, ['run', INQUIRER, '--run-id', 'p']).status, 3);
    assert.equal(cli(e, ['send', 'p.child-2', 'reply', '--data', REPLY, '--no-resume']).status, 0);
    const r = cli(e, ['resume', 'p']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(runRow(e, 'p.child-2')?.status, 'completed');
    assert.deepEqual(inbox(e, 'p.child-2'), [{ name: 'reply', status: 'delivered' }]);
    assertNotes(e, 'p');
  });

  it('killed at every point of the child+wait path (run, then send), resumed: every effect once, the event taken once, one child', () => {
    const e = sqlite();
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
    const e = sqlite();
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
    const e = sqlite();
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
});
