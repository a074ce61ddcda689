// Kill mid-action, then resume through reconciliation; decisions, graceful terminate, disconnect after a kill.

import * as assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { fileHash, foldRows, show } from '../helpers';
import { COUNTER, EMAIL, ORDER, emailOutbox, orderLedger, sessionsPerTest, alive, StopShapes, emailLines, lineOf, showShapes } from './harness';

describe('dap: crash, resume, reconcile', function () {
  const session = sessionsPerTest();

  it('kill between started and committed, then a resume session stops at reconciliation, verifies, and completes without a duplicate', async () => {
    const first = await session();
    await first.launch({ program: EMAIL, input: { recipients: 4 }, runId: 'crash-1' }, { functions: [{ name: 'email.send', hitCondition: '3' }] });
    let stop = await first.stopped();
    assert.match(stop.description, /email\.send email:crash-1:user3@example\.com is about to start/);
    stop = await first.step('stepIn');
    assert.match(stop.description, /started is durable; execute runs next/);
    stop = await first.step('stepIn');
    assert.match(stop.description, /executed; committed is written next/);
    const pid = first.runnerPids[0]!;
    const exited = first.exitCode();
    const killed = await first.dc.customRequest('kill');
    assert.equal(killed.body.signal, 'SIGKILL');
    assert.equal(await exited, 137);
    const report = first.text('important');
    assert.match(report, /Killed the run: the runner \(pid \d+\) got SIGKILL/);
    assert.match(report, /It was paused at: email\.send email:crash-1:user3@example\.com executed; committed is written next\./);
    assert.match(report, /Run crash-1 died in step 4 "email user3@example\.com" \(started, not checkpointed\)\./);
    assert.match(
      report,
      /In doubt: email\.send email:crash-1:user3@example\.com was started but not committed \(the journal counts 1 call\(s\) of its execute, and a call the crash cut short is not counted\)/,
    );
    assert.match(report, /Resume it: "Agent Logbook: Resume Run" in the Command Palette, .* or launch with "resume": "crash-1"/);
    assert.equal(alive(pid), false);
    assert.equal(show(first.dir, 'crash-1').run.status, 'interrupted');
    await first.disconnect();

    const second = await session(first.dir);
    await second.launch({ program: EMAIL, resume: 'crash-1', stopOnEntry: true }, { filters: ['inDoubt'] });
    stop = await second.stopped();
    assert.equal(stop.reason, 'entry');
    assert.equal(
      stop.description,
      'attempt 2: the script runs again from the top, replaying the journal. 3 completed step(s) replay their checkpoints without running, and the debugger does not stop in them (stopOnReplay is off); 1 action(s) in doubt will be reconciled when the script reaches them: email.send email:crash-1:user3@example.com',
    );
    stop = await second.step('continue');
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'In-doubt action being reconciled');
    assert.equal(
      stop.description,
      'in doubt: email.send email:crash-1:user3@example.com was started but not committed; verify asks the outside system whether it happened',
    );
    assert.equal(stop.frames[0]?.line, lineOf(EMAIL, 'run.do(sendEmail'));
    assert.equal(stop.frames[1]?.name, 'step 4 "email user3@example.com" (redone)');
    assert.equal((await second.scope('Action')).phase?.value, "'in-doubt'");
    await assert.rejects(second.dc.customRequest('decide', { decision: 'happened' }), /needs no decision: verify asks the outside system/);
    stop = await second.step('stepIn');
    assert.equal(stop.description, 'email.send email:crash-1:user3@example.com: verify found it; marked committed without executing');
    assert.equal((await second.scope('Action')).reconciliation?.value, "'verified'");
    assert.equal(await second.runToEnd(), 0);
    assert.match(
      second.text(),
      /run crash-1 completed \(attempt 2\); output \{"sent":4\}; steps: 3 replayed, 1 redone, 1 run; actions: 0 skipped, 1 reconciled, 1 executed/,
    );
    const box = emailOutbox(first.dir);
    assert.equal(box.sent.length, 4);
    assert.equal(new Set(box.sent.map((x) => x.key)).size, 4, 'no key was sent twice');
  });

  it('steps through a resume: replay is silent, the in-doubt action is reconciled phase by phase', async () => {
    const first = await session();
    await first.launch({ program: EMAIL, input: { recipients: 3 }, runId: 'resume-golden', crashAt: 'email.send#2@after-start' });
    assert.equal(await first.exitCode(), 137);
    const s = await session(first.dir);
    await s.launch({ program: EMAIL, resume: 'resume-golden', stopOnEntry: true }, { filters: ['inDoubt'] });
    const shapes = new StopShapes(s, emailLines());
    await shapes.add('entry', await s.stopped());
    await shapes.follow(['next', 'stepIn', 'stepIn', 'stepIn', 'stepOut', 'next', 'stepIn', 'stepOut', 'next']);
    // Structure, not sentences: frames, scope fields and the journal's new entries at each stop (was golden/email-resume.txt).
    assert.deepEqual(showShapes(shapes.shapes).split('\n'), [
      'entry → entry [run@run] run running #2 +[run.started, step.started, step.completed, step.started, action.started, action.executing, action.committed, step.completed, step.started, action.started, run.lease-acquired]',
      'next → step [step@email < run@run] run running #2 step #3 redone +[]',
      'stepIn → exception [action@email < step@email < run@run] run running #2 step #3 redone email.send email:<run>:user2@example.com in-doubt/started +[step.restarted]',
      'stepIn → step [action@email < step@email < run@run] run running #2 step #3 redone email.send email:<run>:user2@example.com before-start/started +[]',
      'stepIn → step [action@email < step@email < run@run] run running #2 step #3 redone email.send email:<run>:user2@example.com started/started +[action.started]',
      'stepOut → step [step@email < run@run] run running #2 step #3 redone +[action.executing, action.verified-absent, step.completed]',
      'next → step [step@email < run@run] run running #2 step #4 +[]',
      'stepIn → step [action@email < step@email < run@run] run running #2 step #4 email.send email:<run>:user3@example.com before-start/new +[step.started]',
      'stepOut → step [step@email < run@run] run running #2 step #4 +[action.started, action.executing, action.committed, step.completed]',
      'next → step [run@run] run completed #2 +[run.completed]',
    ]);
    assert.equal(await s.runToEnd(), 0);
    assert.equal(emailOutbox(first.dir).sent.length, 3);
  });

  it('a decision on an action without verify: stop at the in-doubt charge, decide it happened, finish without charging again', async () => {
    const first = await session();
    await first.launch({ program: ORDER, input: {}, runId: 'decide-1', crashAt: 'card.charge#1@after-execute' });
    assert.equal(await first.exitCode(), 137);
    assert.match(first.text('important'), /The runner \(pid \d+\) died with SIGKILL \(a crashAt fault point fired/);
    assert.match(first.text('important'), /In doubt: card\.charge charge:decide-1 was started but not committed/);
    assert.deepEqual(orderLedger(first.dir).charges, ['charge:decide-1']);

    const second = await session(first.dir);
    await second.launch({ program: ORDER, resume: 'latest' });
    let stop = await second.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.description, 'in doubt: card.charge charge:decide-1 was started but not committed; it has no verify, so a person must decide');
    await assert.rejects(second.dc.customRequest('decide', { decision: 'maybe' }), /Bad arguments for decide: decision/);
    await second.dc.customRequest('decide', { decision: 'happened', actionId: 'charge:decide-1', then: 'stepIn' });
    stop = await second.stopped();
    assert.equal(stop.description, 'card.charge charge:decide-1: decided it happened; marked committed without executing');
    assert.equal(await second.runToEnd(), 0);
    assert.deepEqual(orderLedger(first.dir).charges, ['charge:decide-1'], 'the card was charged once');
    const run = show(first.dir, 'decide-1');
    assert.equal(run.run.status, 'completed');
  });

  it('a damaged row is refused before anything is written: the resume launch fails with LB_JOURNAL_INVALID, never compensating', async () => {
    const first = await session();
    await first.launch({ program: ORDER, input: {}, runId: 'damaged-1', crashAt: 'card.charge#1@after-commit' });
    assert.equal(await first.exitCode(), 137);
    foldRows(first.db);
    const db = new Database(first.db);
    assert.equal(db.prepare("UPDATE actions SET result = '{\"id\": ' WHERE run_id = 'damaged-1' AND id = 'charge:damaged-1'").run().changes, 1);
    db.close();
    const before = fileHash(first.db);
    const second = await session(first.dir);
    const msg = await second.launchFails({ program: ORDER, resume: 'damaged-1' });
    assert.match(msg, /^\[LB_JOURNAL_INVALID\] /);
    assert.match(msg, /charge:damaged-1/);
    assert.equal(fileHash(first.db), before, 'the refused resume wrote nothing');
    assert.deepEqual(orderLedger(first.dir).charges, ['charge:damaged-1'], 'charged once');
    assert.deepEqual(orderLedger(first.dir).refunds, [], 'and never refunded: the damage is not the script failing');
    assert.equal(show(first.dir, 'damaged-1').run.status, 'interrupted');
  });

  it('continuing past a needed decision leaves the run in needs-decision, with the way forward', async () => {
    const first = await session();
    await first.launch({ program: ORDER, input: {}, runId: 'decide-2', crashAt: 'card.charge#1@after-start' });
    assert.equal(await first.exitCode(), 137);
    const second = await session(first.dir);
    await second.launch({ program: ORDER, resume: 'decide-2' }, { filters: [] });
    const stop = await second.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Needs a decision');
    assert.match(stop.description, /^needs a decision: card\.charge charge:decide-2 was started but not committed and has no verify/);
    assert.equal(await second.runToEnd(), 3);
    assert.match(
      second.text('important'),
      /run decide-2 waits for a decision: .* Launch with "resume": "decide-2" and "decide": \{"charge:decide-2": "happened" \| "not-happened"\}/,
    );
    // A pre-set decision in the launch configuration settles it without stopping.
    const third = await session(first.dir);
    await third.launch({ program: ORDER, resume: 'decide-2', decide: { 'charge:decide-2': 'not-happened' } }, { filters: [] });
    assert.equal(await third.exitCode(), 0);
    assert.deepEqual(orderLedger(first.dir).charges, ['charge:decide-2'], 'the crash came before the charge; not-happened executes it once');
  });

  it('terminate stops gracefully at the next boundary and releases the lease; the run resumes later', async () => {
    const s = await session();
    await s.launch(
      { program: EMAIL, input: { recipients: 3 }, runId: 'term-1' },
      { lines: [{ file: EMAIL, line: lineOf(EMAIL, 'run.do(sendEmail'), hitCondition: '2' }] },
    );
    await s.stopped();
    const exited = s.exitCode();
    await s.dc.terminateRequest({});
    // Stopped before its end: resumable, but not done (exit 1, as from the CLI).
    assert.equal(await exited, 1);
    assert.match(s.text(), /run term-1 stopped at a boundary on request \(attempt 1\); it is resumable/);
    const row = show(s.dir, 'term-1').run;
    assert.equal(row.status, 'interrupted');
    assert.equal(row.owner, null, 'the lease was released');
    const again = await session(s.dir);
    await again.launch({ program: EMAIL, resume: 'term-1' });
    assert.equal(await again.exitCode(), 0);
    assert.equal(emailOutbox(s.dir).sent.length, 3);
  });

  it('kill while the run is running (not paused) reports the step it died in from the journal', async () => {
    const s = await session();
    await s.launch({ program: COUNTER, input: { steps: 100000 }, runId: 'busy-1' });
    await new Promise((r) => setTimeout(r, 500));
    const exited = s.exitCode();
    await s.dc.customRequest('kill');
    assert.equal(await exited, 137);
    const report = s.text('important');
    assert.match(report, /Run busy-1 died in step \d+ "count \d+"/);
    assert.match(report, /No action is in doubt: the crash fell between actions\./);
    assert.doesNotMatch(report, /It was paused at/);
  });

  it('disconnect after a kill leaves nothing running; disconnect while paused stops the runner too', async () => {
    const s = await session();
    await s.launch({ program: EMAIL, input: { recipients: 2 }, stopOnEntry: true });
    await s.stopped();
    const pid = s.runnerPids[0]!;
    assert.equal(alive(pid), true);
    await s.dc.customRequest('kill');
    await s.disconnect();
    assert.equal(alive(pid), false);

    const t = await session();
    await t.launch({ program: EMAIL, input: { recipients: 2 }, stopOnEntry: true });
    await t.stopped();
    const pid2 = t.runnerPids[0]!;
    await t.disconnect();
    assert.equal(alive(pid2), false);
  });
});
