// run.sleep in the debugger: a breakpointable unit (its line, its name, the sleep filter) whose stop shows the journaled
// wake time; pause and terminate reach a waiting sleep; cancel from the debug toolbar stops the run at its next boundary.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { cliAsync, foldRows, show } from '../helpers';
import { NAPPER, Session, StopShapes, lineOf, sessionsPerTest, showShapes } from './harness';

const lines = (): Record<number, string> => ({
  [lineOf(NAPPER, 'async run(run, input)')]: 'run',
  [lineOf(NAPPER, "run.step('book'")]: 'book',
  [lineOf(NAPPER, "run.sleep('nap'")]: 'nap',
  [lineOf(NAPPER, "run.step('remind'")]: 'remind',
});

/** The nap's wake time as the journal holds it (the checkpoint of its step), in ms. */
function journaledWake(db: string, runId: string): number {
  foldRows(db);
  const r = new Database(db, { readonly: true });
  try {
    const row = r.prepare("SELECT result FROM steps WHERE run_id = ? AND name = 'nap'").get(runId) as { result: string } | undefined;
    assert.ok(row, `run ${runId} journaled no nap`);
    return (JSON.parse(row.result) as { wakeAt: number }).wakeAt;
  } finally {
    r.close();
  }
}

function ledger(dir: string): { booked: string[]; released: string[]; reminders: string[] } {
  return JSON.parse(fs.readFileSync(path.join(dir, 'napper-ledger.json'), 'utf8')) as { booked: string[]; released: string[]; reminders: string[] };
}

/** The Sleep scope of the top frame, as name → shown value (strings unquoted). */
async function sleepScope(s: Session): Promise<Record<string, string>> {
  const v = await s.scope('Sleep');
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x.value.replace(/^'(.*)'$/, '$1')]));
}

describe('dap: run.sleep and cancel', function () {
  const session = sessionsPerTest();

  it('a line breakpoint on run.sleep stops once, where the sleep waits, and Variables show the journaled wake time', async () => {
    const s = await session();
    const napLine = lineOf(NAPPER, "run.sleep('nap'");
    await s.launch({ program: NAPPER, input: { sleep: '1500ms' }, runId: 'nap-line' }, { lines: [{ file: NAPPER, line: napLine }] });
    assert.equal(s.setBreakpointResults[0]?.verified, true, JSON.stringify(s.setBreakpointResults));
    const shapes = new StopShapes(s, lines());
    const stop = await s.stopped();
    await shapes.add('launch', stop);
    assert.equal(stop.reason, 'breakpoint');
    assert.match(stop.frames[0]?.name ?? '', /^sleep "nap" until \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ m?s left\)$/);
    const v = await sleepScope(s);
    const wake = journaledWake(s.db, 'nap-line');
    assert.equal(v.wakeAt, new Date(wake).toISOString(), 'the wake time shown is the one journaled');
    assert.equal(v.durationMs, '1500');
    assert.ok(Number(v.leftMs) > 0 && Number(v.leftMs) <= 1500, v.leftMs);
    assert.equal(await s.evaluate('sleep.wakeAtMs'), String(wake));
    await shapes.follow(['next', 'next']);
    assert.deepEqual(showShapes(shapes.shapes).split('\n'), [
      'launch → breakpoint [sleep@nap < run@run] run running #1 sleep nap +[run.started, step.started, action.started, action.executing, action.committed, step.completed, step.started, step.completed]',
      // A sleep is one unit for stepping too: next goes from it to the step after it (its own step's boundaries are not stops).
      'next → step [step@remind < run@run] run running #1 step #3 +[]',
      'next → step [step@remind < run@run] run running #1 step #3 +[step.started, action.started, action.executing, action.committed, step.completed]',
    ]);
    assert.equal(await s.runToEnd(), 0);
    assert.deepEqual(ledger(s.dir).reminders, ['remind:nap-line:blue']);
  });

  it('a function breakpoint by the sleep name and the sleep filter stop at the sleep; a resumed run stops at what is left of it', async () => {
    const first = await session();
    await first.launch({ program: NAPPER, input: { sleep: '1h' }, runId: 'nap-fn' }, { functions: [{ name: 'nap' }] });
    let stop = await first.stopped();
    assert.equal(stop.reason, 'function breakpoint');
    assert.match(stop.description, /^function breakpoint: sleep "nap" started: the run waits until .*Z \(60 min left\); its wake time is journaled$/);
    const wake = journaledWake(first.db, 'nap-fn');
    // Killed mid-sleep: a resume waits only what is left, and shows it.
    const exited = first.exitCode();
    await first.dc.customRequest('kill');
    assert.equal(await exited, 137);
    await first.disconnect();

    const second = await session(first.dir);
    await second.launch({ program: NAPPER, resume: 'nap-fn' }, { filters: ['sleep'] });
    const shapes = new StopShapes(second, lines());
    stop = await second.stopped();
    await shapes.add('resume', stop);
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Durable sleep (run.sleep)');
    assert.match(stop.description, /^sleep "nap" started in an earlier attempt: the run waits only what is left, until .*Z \(60 min left\)$/);
    const v = await sleepScope(second);
    assert.equal(v.wakeAt, new Date(wake).toISOString(), 'the resume waits for the first attempt’s wake time, not a new hour');
    assert.equal(v.replayed, 'true');
    assert.equal(journaledWake(second.db, 'nap-fn'), wake);
    assert.deepEqual(showShapes(shapes.shapes).split('\n'), [
      'resume → exception [sleep@nap < run@run] run running #2 sleep nap replayed +[run.started, step.started, action.started, action.executing, action.committed, step.completed, step.started, step.completed, run.lease-acquired]',
    ]);
    // Terminate reaches a sleep that waits an hour: the run stops at once, resumable (no SIGKILL after a grace period).
    const ended = second.exitCode();
    await second.dc.terminateRequest({});
    assert.equal(await ended, 1);
    assert.doesNotMatch(second.text('important'), /SIGKILL/);
    assert.equal(show(second.dir, 'nap-fn').run.status, 'interrupted');
    assert.deepEqual(ledger(second.dir).reminders, []);
  });

  it('pause reaches a sleep that waits: it stops there, showing what is left, and continue waits the rest', async () => {
    const s = await session();
    await s.launch({ program: NAPPER, input: { sleep: '3s' }, runId: 'nap-pause' });
    // Once the sleep waits (its wake time journaled), pause.
    const deadline = Date.now() + 30_000;
    while (!fs.existsSync(s.db) || !napStarted(s.db, 'nap-pause')) {
      assert.ok(Date.now() < deadline, 'the sleep never started');
      await new Promise((r) => setTimeout(r, 25));
    }
    const stopped = s.stopped();
    await s.dc.pauseRequest({ threadId: 1 });
    const stop = await stopped;
    assert.equal(stop.reason, 'pause');
    assert.match(stop.frames[0]?.name ?? '', /^sleep "nap" until /);
    const v = await sleepScope(s);
    assert.equal(v.replayed, 'false');
    assert.ok(Number(v.leftMs) > 0 && Number(v.leftMs) < 3000, v.leftMs);
    assert.equal(await s.runToEnd(), 0);
    assert.deepEqual(ledger(s.dir).reminders, ['remind:nap-pause:blue']);
  });

  it('cancel from the debug toolbar at a stop in the sleep: the run stops cancelled at its next boundary, compensated, and the session says so', async () => {
    const s = await session();
    await s.launch({ program: NAPPER, input: { sleep: '1h' }, runId: 'nap-cancel' }, { filters: ['sleep'] });
    await s.stopped();
    const ended = s.exitCode();
    const continued = s.next('continued');
    const r = await s.dc.customRequest('cancelRun', { reason: 'the guest left', compensate: true });
    assert.match(String(r.body.message), /stops at its next boundary, cancelled, then it is compensated/);
    await continued;
    assert.equal(await ended, 0, 'compensated: the session ends as a compensation that completed does');
    assert.match(s.text('important'), /run nap-cancel was cancelled from the debugger \(the guest left\): it stops at its next boundary/);
    assert.match(s.text(), /run nap-cancel .*cancelled \(the guest left\), then compensation compensated/);
    const run = show(s.dir, 'nap-cancel');
    assert.equal(run.run.status, 'compensated');
    assert.equal(run.run.cancel.reason, 'the guest left');
    assert.deepEqual(ledger(s.dir), { booked: ['book:nap-cancel:blue'], released: ['compensate:book:nap-cancel:blue'], reminders: [] });
  });

  it('cancel while the run waits in its sleep (no stop): the sleep ends, the run stops cancelled, the step after it never runs', async () => {
    const s = await session();
    await s.launch({ program: NAPPER, input: { sleep: '1h' }, runId: 'nap-cancel-live' });
    const deadline = Date.now() + 30_000;
    while (!fs.existsSync(s.db) || !napStarted(s.db, 'nap-cancel-live')) {
      assert.ok(Date.now() < deadline, 'the sleep never started');
      await new Promise((r) => setTimeout(r, 25));
    }
    const ended = s.exitCode();
    await s.dc.customRequest('cancelRun', { reason: 'not needed' });
    assert.equal(await ended, 1);
    assert.match(
      s.text('important'),
      /run nap-cancel-live was cancelled \(not needed\) \(attempt 1\): it stopped at a boundary without starting a new effect, and it cannot be resumed/,
    );
    assert.equal(show(s.dir, 'nap-cancel-live').run.status, 'cancelled');
    assert.deepEqual(ledger(s.dir).reminders, []);
  });

  it('`logbook cancel` from another process while the session holds the run at a stop: the session lets it go, and it ends cancelled', async () => {
    const s = await session();
    // A short lease: the runner's heartbeat (a third of it) reads the cancel another process asked for.
    await s.launch({ program: NAPPER, input: { sleep: '1h' }, runId: 'nap-cli-cancel', env: { LOGBOOK_LEASE_TTL_MS: '1500' } }, { filters: ['sleep'] });
    await s.stopped();
    const ended = s.exitCode();
    const c = cliAsync(s.dir, ['cancel', 'nap-cli-cancel', '--reason', 'from a terminal'], { LOGBOOK_LEASE_TTL_MS: '1500' });
    let out = '';
    c.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const cancelled = new Promise<number | null>((r) => c.on('exit', (code) => r(code)));
    assert.equal(await ended, 1);
    assert.equal(await cancelled, 0, out);
    assert.match(out, /cancelled run nap-cli-cancel \(from a terminal\): it stopped at its next boundary/);
    assert.match(s.text('important'), /run nap-cli-cancel was cancelled elsewhere \(logbook cancel\) \(from a terminal\): it stops at its next boundary/);
    assert.equal(show(s.dir, 'nap-cli-cancel').run.status, 'cancelled');
    assert.deepEqual(ledger(s.dir).reminders, []);
  });

  it('cancel is refused before a run started and when its arguments are wrong, changing nothing', async () => {
    const s = await session();
    await s.launch({ program: NAPPER, input: { sleep: '10ms' }, runId: 'nap-refuse', stopOnEntry: true });
    await s.stopped();
    await assert.rejects(s.dc.customRequest('cancelRun', { compensate: 'yes' }), /Bad arguments for cancelRun: compensate/);
    assert.equal(show(s.dir, 'nap-refuse').run.status, 'running');
    assert.equal(await s.runToEnd(), 0);
  });
});

function napStarted(db: string, runId: string): boolean {
  try {
    journaledWake(db, runId);
    return true;
  } catch {
    return false;
  }
}
