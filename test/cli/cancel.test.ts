// `logbook cancel`: a live run stops at its next boundary (its in-flight action settled), a queued one at once, a finished one is refused.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { cli, cliAsync, FIXTURES, show, tmpDir } from '../helpers';

const SCRIPT = path.join(FIXTURES, 'cancel-target.ts');
// Heartbeats every 500 ms: a live run hears of the cancel within one, while its action is still in flight.
const ENV = { LOGBOOK_LEASE_TTL_MS: '1500' };

interface Exit {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function start(dir: string, args: string[], env: Record<string, string> = ENV): { done: Promise<Exit>; pid: number } {
  const child = cliAsync(dir, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Exit>((resolve) => child.on('exit', (status, signal) => resolve({ status, signal, stdout, stderr })));
  return { done, pid: child.pid ?? assert.fail('no pid') };
}

async function waitForFile(file: string, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (fs.existsSync(file)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`never saw ${what}`);
}

const ledger = (dir: string): string[] => {
  const f = path.join(dir, 'cancel-ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

function journalEvents(dir: string, runId: string): Array<{ kind: string; data: string | null }> {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return db.prepare('SELECT kind, data FROM events WHERE run_id = ? ORDER BY seq').all(runId) as Array<{ kind: string; data: string | null }>;
  } finally {
    db.close();
  }
}

const kinds = (dir: string, runId: string): string[] => journalEvents(dir, runId).map((e) => e.kind);

describe('cli: cancel', function () {
  this.timeout(120_000);

  it('a run with an action in flight: the action returns and commits, the run stops before its next effect, cancelled with the reason; compensate later, never resume', async () => {
    const dir = tmpDir('logbook-cancel-');
    const run = start(dir, ['run', SCRIPT, '--run-id', 'r', '--input', '{"onAbort":"return"}']);
    await waitForFile(path.join(dir, 'booking'), 'the booking in flight');
    const cancel = await start(dir, ['cancel', 'r', '--reason', 'the user stopped it']).done;
    assert.equal(cancel.status, 0, cancel.stdout + cancel.stderr);
    assert.match(cancel.stdout, /cancelled run r \(the user stopped it\): it stopped at its next boundary/);
    const ran = await run.done;
    assert.equal(ran.status, 1, `a cancelled run did not reach its end: ${ran.stdout}${ran.stderr}`);
    const s = show(dir, 'r');
    assert.equal(s.run.status, 'cancelled');
    const actions = s.actions as Array<{ type: string; status: string }>;
    assert.deepEqual(
      actions.map((a) => [a.type, a.status]),
      [['hotel.book', 'committed']],
      'the booking in flight committed; the charge never started',
    );
    assert.deepEqual(ledger(dir), ['book book:r:h1']);
    const ev = kinds(dir, 'r');
    assert.ok(ev.indexOf('run.cancel-requested') < ev.indexOf('run.cancelled'), ev.join(' '));
    assert.ok(ev.includes('run.cancelled'));
    assert.equal(s.run.cancel.reason, 'the user stopped it');
    assert.match(journalEvents(dir, 'r').find((e) => e.kind === 'run.cancelled')?.data ?? '', /the user stopped it/);
    assert.match(cli(dir, ['show', 'r'], ENV).stdout, /cancel\s+cancelled: the user stopped it/);

    const resume = cli(dir, ['resume', 'r'], ENV);
    assert.equal(resume.status, 2, resume.stdout + resume.stderr);
    assert.match(resume.stderr, /LB_RUN_NOT_RESUMABLE.*cancelled/);
    const comp = cli(dir, ['compensate', 'r'], ENV);
    assert.equal(comp.status, 0, comp.stdout + comp.stderr);
    assert.deepEqual(ledger(dir), ['book book:r:h1', 'unbook compensate:book:r:h1']);
  });

  it('--compensate: an execute that throws on the abort leaves its action in doubt, verify settles it, and its inverse runs after the stop', async () => {
    const dir = tmpDir('logbook-cancel-');
    const run = start(dir, ['run', SCRIPT, '--run-id', 'r', '--input', '{"onAbort":"throw"}']);
    await waitForFile(path.join(dir, 'booking'), 'the booking in flight');
    const cancel = await start(dir, ['cancel', 'r', '--compensate']).done;
    assert.equal(cancel.status, 0, cancel.stdout + cancel.stderr);
    assert.match(cancel.stdout, /compensated/);
    await run.done;
    assert.equal(show(dir, 'r').run.status, 'compensated');
    assert.deepEqual(ledger(dir), ['book book:r:h1', 'unbook compensate:book:r:h1'], 'booked once, undone once, never charged');
  });

  it('a queued run is cancelled at once; a finished run is refused with its status and nothing changes', () => {
    const dir = tmpDir('logbook-cancel-');
    const q = cli(dir, ['run', '--detach', SCRIPT, '--run-id', 'q'], ENV);
    assert.equal(q.status, 0, q.stdout + q.stderr);
    const c = cli(dir, ['cancel', 'q', '--reason', 'not needed'], ENV);
    assert.equal(c.status, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /^cancelled run q \(not needed\)$/m);
    assert.equal(show(dir, 'q').run.status, 'cancelled');
    assert.deepEqual(ledger(dir), []);

    const done = cli(dir, ['run', SCRIPT, '--run-id', 'd', '--input', '{"hold":false}'], ENV);
    assert.equal(done.status, 0, done.stdout + done.stderr);
    const before = show(dir, 'd');
    const refused = cli(dir, ['cancel', 'd'], ENV);
    assert.equal(refused.status, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /LB_RUN_NOT_CANCELLABLE.*already completed/);
    assert.deepEqual(show(dir, 'd'), before, 'a refused cancel writes nothing');
    const again = cli(dir, ['cancel', 'q'], ENV);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /already cancelled/);
  });

  it('a cancel racing a resume: whichever takes the run first, it ends cancelled and no effect happens twice or after the cancel', async () => {
    for (let i = 0; i < 3; i++) {
      const dir = tmpDir('logbook-cancel-');
      // Killed with the booking committed, before the charge starts: the resume goes straight to the charge, held in flight.
      const crashed = cli(
        dir,
        ['run', SCRIPT, '--run-id', 'r', '--input', '{"hold":false,"holdCharge":true}', '--crash-at', 'card.charge#1@before-start'],
        ENV,
      );
      assert.equal(crashed.signal, 'SIGKILL', crashed.stdout + crashed.stderr);
      const resume = start(dir, ['resume', 'r']);
      const cancel = await start(dir, ['cancel', 'r', '--reason', 'race']).done;
      const resumed = await resume.done;
      assert.equal(cancel.status, 0, cancel.stdout + cancel.stderr);
      assert.ok(resumed.status === 1 || resumed.status === 2, `resume: exit ${resumed.status} ${resumed.stdout}${resumed.stderr}`);
      if (resumed.status === 2) assert.match(resumed.stderr, /LB_RUN_NOT_RESUMABLE.*cancelled/);
      assert.equal(show(dir, 'r').run.status, 'cancelled');
      const lines = ledger(dir);
      assert.equal(lines.filter((l) => l.startsWith('book ')).length, 1);
      assert.ok(lines.filter((l) => l.startsWith('charge ')).length <= 1, lines.join(', '));
      assert.ok(!lines.some((l) => l.startsWith('receipt ')), `nothing starts after the cancel: ${lines.join(', ')}`);
    }
  });

  it('fault point cancel:after-stop: killed once cancelled, before its compensation, the waiting cancel --compensate finishes it', async () => {
    const dir = tmpDir('logbook-cancel-');
    const run = start(dir, ['run', SCRIPT, '--run-id', 'r', '--crash-at', 'cancel-target@cancel:after-stop']);
    await waitForFile(path.join(dir, 'booking'), 'the booking in flight');
    const cancel = await start(dir, ['cancel', 'r', '--compensate']).done;
    assert.equal((await run.done).signal, 'SIGKILL');
    assert.equal(cancel.status, 0, cancel.stdout + cancel.stderr);
    assert.match(cancel.stdout, /compensation\s+compensated: 1 inverse\(s\) applied/);
    assert.equal(show(dir, 'r').run.status, 'compensated');
    assert.deepEqual(ledger(dir), ['book book:r:h1', 'unbook compensate:book:r:h1']);
  });

  it('a cancel asked of a live run whose process then dies is carried out at once by the waiting command', async () => {
    const dir = tmpDir('logbook-cancel-');
    // A long lease: the run would hear of the cancel only after this test has killed it.
    const run = start(dir, ['run', SCRIPT, '--run-id', 'r'], { LOGBOOK_LEASE_TTL_MS: '60000' });
    await waitForFile(path.join(dir, 'booking'), 'the booking in flight');
    const cancel = start(dir, ['cancel', 'r'], { LOGBOOK_LEASE_TTL_MS: '60000' });
    for (let i = 0; i < 400 && !kinds(dir, 'r').includes('run.cancel-requested'); i++) await new Promise((r) => setTimeout(r, 25));
    process.kill(run.pid, 'SIGKILL');
    const c = await cancel.done;
    assert.equal(c.status, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /^cancelled run r$/m);
    assert.equal(show(dir, 'r').run.status, 'cancelled');
  });
});
