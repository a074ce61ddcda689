// Breakpoints: verified only on run.step/run.do lines, conditions, hit counts, function breakpoints, exception filters.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EMAIL, NEWSLETTER, ORDER, Session, lineOf, orderLedger, sessionsPerTest } from './harness';

describe('dap: breakpoints and stops', function () {
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
  });

  it('verifies line breakpoints only on run.step / run.do lines and stops before that step', async () => {
    const loadLine = lineOf(EMAIL, "run.step('load recipients'");
    const plainLine = lineOf(EMAIL, 'return { sent: list.length }');
    await s.launch(
      { program: EMAIL, input: { recipients: 2 }, runId: 'bp-line' },
      {
        lines: [
          { file: EMAIL, line: loadLine },
          { file: EMAIL, line: plainLine },
        ],
      },
    );
    const [onStep, onPlain] = s.setBreakpointResults;
    assert.equal(onStep?.verified, true);
    assert.equal(onPlain?.verified, false);
    assert.match(onPlain?.message ?? '', /No run\.step\(\.\.\.\), run\.do\(\.\.\.\) or run\.sleep\(\.\.\.\) call on this line/);
    const stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    assert.deepEqual(stop.hitBreakpointIds, [onStep?.id]);
    assert.equal(stop.description, 'breakpoint: step "load recipients" is about to run');
    assert.equal(stop.frames[0]?.line, loadLine);
    const locations = await s.dc.customRequest('breakpointLocations', { source: { path: EMAIL }, line: 1, endLine: 40 });
    assert.deepEqual(
      locations.body.breakpoints.map((b: { line: number }) => b.line),
      [loadLine, lineOf(EMAIL, 'run.do(sendEmail')],
    );
    assert.equal(await s.runToEnd(), 0);
  });

  it('hit count 31 on an action line stops before the 31st email, and a condition selects by args', async () => {
    const sendLine = lineOf(NEWSLETTER, 'run.do(sendEmail');
    await s.launch({ program: NEWSLETTER, input: { recipients: 40 }, runId: 'bp-hits' }, { lines: [{ file: NEWSLETTER, line: sendLine, hitCondition: '31' }] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    assert.match(stop.description, /^breakpoint: non-idempotent email\.send email:bp-hits:reader31@example\.com is about to start$/);
    assert.equal(stop.frames[0]?.line, sendLine);
    assert.equal(await s.evaluate('args.to'), "'reader31@example.com'");
    // Replace it with a condition over the paused context.
    await s.dc.setBreakpointsRequest({ source: { path: NEWSLETTER }, breakpoints: [{ line: sendLine, condition: "args.to.startsWith('reader35@')" }] });
    stop = await s.step('continue');
    assert.match(stop.description, /reader35@example\.com is about to start/);
    await s.dc.setBreakpointsRequest({ source: { path: NEWSLETTER }, breakpoints: [] });
    assert.equal(await s.runToEnd(), 0);
  });

  it('refuses conditions that do not compile and hit conditions it cannot read', async () => {
    const sendLine = lineOf(NEWSLETTER, 'run.do(sendEmail');
    await s.launch(
      { program: NEWSLETTER, input: { recipients: 1 }, stopOnEntry: true },
      {
        lines: [
          { file: NEWSLETTER, line: sendLine, condition: 'args.to ==== 1' },
          { file: NEWSLETTER, line: sendLine, hitCondition: 'often' },
        ],
      },
    );
    const [badCondition, badHits] = s.setBreakpointResults;
    assert.equal(badCondition?.verified, false);
    assert.match(badCondition?.message ?? '', /condition does not compile/);
    assert.equal(badHits?.verified, false);
    assert.match(badHits?.message ?? '', /hit condition "often" is not understood/);
    await s.stopped();
    assert.equal(await s.runToEnd(), 0);
  });

  it('function breakpoints stop at a step by name and at an action by type', async () => {
    await s.launch({ program: ORDER, input: {}, runId: 'bp-fn' }, { functions: [{ name: 'card.charge' }, { name: 'reserve l*' }] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'function breakpoint');
    assert.equal(stop.description, 'function breakpoint: step "reserve lamp" is about to run');
    stop = await s.step('continue');
    assert.equal(stop.reason, 'function breakpoint');
    assert.equal(stop.description, 'function breakpoint: non-idempotent card.charge charge:bp-fn is about to start');
    assert.equal(stop.frames[0]?.line, lineOf(ORDER, 'run.do(charge'));
    assert.equal(await s.runToEnd(), 0);
  });

  it('the non-idempotent filter stops before every non-idempotent action, and only those', async () => {
    await s.launch({ program: ORDER, input: {}, runId: 'f-nonidem' }, { filters: ['nonIdempotent'] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Non-idempotent action about to execute');
    assert.equal(stop.description, 'non-idempotent card.charge charge:f-nonidem is about to start');
    stop = await s.step('continue');
    assert.equal(stop.description, 'non-idempotent email.confirm confirm:f-nonidem:buyer@example.com is about to start');
    assert.equal(await s.runToEnd(), 0);
  });

  it('the action-failed filter stops where execute threw, and the exception info says why', async () => {
    await s.launch({ program: NEWSLETTER, input: { recipients: 3, failOn: 2 }, runId: 'f-failed' }, { filters: ['actionFailed'] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.description, 'email.send email:f-failed:reader2@example.com failed: mailbox reader2@example.com is full');
    const info = await s.dc.exceptionInfoRequest({ threadId: s.threadId() });
    assert.equal(info.body.exceptionId, 'actionFailed');
    assert.equal(info.body.breakMode, 'always');
    assert.match(await s.evaluate('action.error.message'), /mailbox reader2@example.com is full/);
    assert.equal(await s.runToEnd(), 1);
    assert.match(s.text('important'), /run f-failed failed: mailbox reader2@example\.com is full/);
  });

  it('an error after the effect leaves the action in doubt: the failed stop says so, and the resume reconciles it with verify (no second send)', async () => {
    await s.launch({ program: NEWSLETTER, input: { recipients: 3, timeoutOn: 2 }, runId: 'f-doubt' }, { filters: ['actionFailed'] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(
      stop.description,
      'email.send email:f-doubt:reader2@example.com is in doubt after an error: execute threw "read ETIMEDOUT", which does not prove nothing happened; it is reconciled like a crash in flight: verify asks the outside system whether it happened',
    );
    const action = await s.scope('Action');
    assert.equal(action.status?.value, "'in doubt after an error'");
    assert.match(await s.evaluate('action.error.message'), /read ETIMEDOUT/);
    assert.equal(await s.runToEnd(), 1);
    assert.match(s.text('important'), /run f-doubt failed: read ETIMEDOUT/);
    const sentAfterError = JSON.parse(fs.readFileSync(path.join(s.dir, 'newsletter-sent.json'), 'utf8')) as unknown[];
    assert.equal(sentAfterError.length, 2, 'the second email did go out behind the error');

    const r = await session(s.dir);
    await r.launch({ program: NEWSLETTER, resume: 'f-doubt' }, { filters: ['inDoubt'] });
    const reconcile = await r.stopped();
    assert.equal(
      reconcile.description,
      'in doubt: email.send email:f-doubt:reader2@example.com is in doubt after an error: execute threw "read ETIMEDOUT", which does not prove nothing happened; it is reconciled like a crash in flight: verify asks the outside system whether it happened',
    );
    assert.equal(await r.runToEnd(), 0);
    const sent = JSON.parse(fs.readFileSync(path.join(s.dir, 'newsletter-sent.json'), 'utf8')) as Array<{ to: string }>;
    assert.deepEqual(
      sent.map((x) => x.to),
      ['reader1@example.com', 'reader2@example.com', 'reader3@example.com'],
    );
  });

  it('the approval filter stops at the gate; approve lets the action run', async () => {
    await s.launch({ program: ORDER, input: { ship: true }, runId: 'f-approval' }, { filters: ['approval'] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Approval gate');
    assert.equal(stop.description, 'approval gate: order.ship ship:f-approval waits for a person to approve or reject');
    assert.equal(stop.frames[0]?.line, lineOf(ORDER, 'run.do(ship'));
    const exited = s.exitCode();
    const r = await s.dc.customRequest('approve', { note: 'looks right' });
    assert.match(r.body.message, /approved: order\.ship ship:f-approval/);
    assert.equal(await exited, 0);
    assert.match(s.text(), /run f-approval completed .*"tracking":"trk-ship:f-approval"/);
  });

  it('reject at the approval gate fails the run with the note, and nothing ships', async () => {
    await s.launch({ program: ORDER, input: { ship: true }, runId: 'f-reject' }, { filters: ['approval'] });
    await s.stopped();
    const exited = s.exitCode();
    const r = await s.dc.customRequest('reject', { note: 'address looks wrong' });
    assert.match(r.body.message, /rejected: order\.ship ship:f-reject/);
    assert.equal(await exited, 1);
    assert.match(s.text('important'), /run f-reject failed: Approval for order\.ship ship:f-reject was rejected: address looks wrong/);
    const ledger = orderLedger(s.dir);
    assert.deepEqual(ledger.shipments, []);
    await assert.rejects(s.dc.customRequest('approve'), /No run is active in this session/);
  });

  it('with the approval filter off, the run waits in awaiting-approval and says how to go on', async () => {
    await s.launch({ program: ORDER, input: { ship: true }, runId: 'f-noapproval' }, { filters: [] });
    assert.equal(await s.exitCode(), 3);
    assert.match(s.text('important'), /run f-noapproval waits for approval: order\.ship ship:f-noapproval waits for approval\. Approve it/);
  });
});
