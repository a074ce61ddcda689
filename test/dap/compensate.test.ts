// Compensation stepping on the order fixture, the compensate request mid-run, and forking with restartFrame.

import * as assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { show } from '../helpers';
import { EMAIL, ORDER, emailOutbox, orderLedger, sessionsPerTest, StopShapes, orderLines, lineOf, showShapes } from './harness';

describe('dap: compensation and forks', function () {
  const session = sessionsPerTest();

  it('steps through the inverses of a completed order newest-first, at the compensate lines', async () => {
    const first = await session();
    await first.launch({ program: ORDER, input: {}, runId: 'comp-1' });
    assert.equal(await first.exitCode(), 0);

    const s = await session(first.dir);
    await s.launch({ program: ORDER, compensate: 'comp-1', stopOnEntry: true }, { filters: ['compensation'] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'entry');
    assert.equal(
      stop.description,
      'compensation of run comp-1: 3 inverse(s) will run newest-first, 1 action(s) have no inverse and will be reported irreversible; in-doubt actions are settled first',
    );
    stop = await s.step('continue');
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Compensation step');
    assert.equal(stop.description, 'compensate: card.charge charge:comp-1');
    assert.equal(stop.frames[0]?.line, lineOf(ORDER, "record('refunds'"));
    assert.equal(stop.frames[1]?.name, 'run comp-1 (order, attempt 2, compensating)');
    const shapes = new StopShapes(s, orderLines());
    await shapes.add('continue', stop);
    await shapes.follow(['stepIn', 'stepIn', 'stepIn', 'next', 'stepOut', 'next']);
    // Structure, not sentences: frames, scope fields and the journal's new entries at each stop (was golden/order-compensation.txt).
    assert.deepEqual(showShapes(shapes.shapes).split('\n'), [
      'continue → exception [action@refund < run@run] run compensating #2 step #3 card.charge charge:<run> compensating/committed +[run.started, step.started, action.started, action.executing, action.committed, step.completed, step.started, action.started, action.executing, action.committed, step.completed, step.started, action.started, action.executing, action.committed, step.completed, step.started, action.started, action.executing, action.committed, step.completed, run.completed, run.lease-acquired, compensation.begin, compensation.irreversible]',
      'stepIn → step [action@refund < run@run] run compensating #2 step #3 card.charge charge:<run> compensating/committed +[compensation.started]',
      'stepIn → step [action@refund < run@run] run compensating #2 step #3 card.charge charge:<run> compensating/committed +[compensation.executing]',
      'stepIn → step [action@refund < run@run] run compensating #2 step #3 card.charge charge:<run> compensating/committed +[compensation.committed]',
      'next → exception [action@release < run@run] run compensating #2 step #2 stock.reserve reserve:<run>:lamp compensating/committed +[]',
      'stepOut → step [action@release < run@run] run compensating #2 step #2 stock.reserve reserve:<run>:lamp compensating/committed +[compensation.started, compensation.executing, compensation.committed]',
      'next → exception [action@release < run@run] run compensating #2 step #1 stock.reserve reserve:<run>:book compensating/committed +[]',
    ]);
    assert.equal((await s.scope('Action')).result?.value, "{sku: 'book', qty: 1}");
    assert.equal(await s.runToEnd(), 0);
    assert.match(s.text(), /run comp-1 compensated: 3 inverse\(s\) applied; irreversible: email\.confirm confirm:comp-1:buyer@example\.com/);
    const l = orderLedger(first.dir);
    assert.deepEqual(l.refunds, ['compensate:charge:comp-1']);
    assert.deepEqual(l.released, ['compensate:reserve:comp-1:lamp', 'compensate:reserve:comp-1:book']);
    assert.equal(show(first.dir, 'comp-1').run.status, 'compensated');
  });

  it('terminate stops a compensation between inverses; compensating again finishes it without repeating any', async () => {
    const first = await session();
    await first.launch({ program: ORDER, input: {}, runId: 'comp-3' });
    assert.equal(await first.exitCode(), 0);
    const s = await session(first.dir);
    await s.launch({ program: ORDER, compensate: 'comp-3' }, { filters: ['compensation'] });
    await s.stopped();
    await s.step('continue');
    const exited = s.exitCode();
    await s.dc.terminateRequest({});
    // Stopped before its end: resumable, but not done (exit 1, as from the CLI).
    assert.equal(await exited, 1);
    assert.match(s.text(), /run comp-3 compensation interrupted: 1 inverse\(s\) applied; .*launch with "compensate": "comp-3" to finish/);
    assert.equal(show(first.dir, 'comp-3').run.status, 'interrupted');
    const again = await session(first.dir);
    await again.launch({ program: ORDER, compensate: 'comp-3' }, { filters: [] });
    assert.equal(await again.exitCode(), 0);
    const l = orderLedger(first.dir);
    assert.deepEqual(l.refunds, ['compensate:charge:comp-3']);
    assert.deepEqual(l.released, ['compensate:reserve:comp-3:lamp', 'compensate:reserve:comp-3:book']);
  });

  it('the compensate request stops the run at its next boundary and steps into its compensation', async () => {
    const s = await session();
    await s.launch({ program: ORDER, input: {}, runId: 'comp-2' }, { functions: [{ name: 'email.confirm' }], filters: [] });
    let stop = await s.stopped();
    assert.match(stop.description, /email\.confirm .* is about to start/);
    const r = await s.dc.customRequest('compensate');
    assert.match(r.body.message, /run comp-2 stops at its next boundary, then its compensation starts/);
    stop = await s.stopped();
    assert.equal(stop.description, 'compensate: card.charge charge:comp-2');
    assert.equal(await s.runToEnd(), 0);
    const l = orderLedger(s.dir);
    assert.deepEqual(l.emails, [], 'the confirmation it was paused before never ran');
    assert.deepEqual(l.refunds, ['compensate:charge:comp-2']);
    assert.equal(l.released?.length, 2);
    assert.match(s.text(), /run comp-2 stopped at a boundary on request/);
  });

  it('restartFrame on a step frame forks: a new run replays up to that step and stops there', async () => {
    const s = await session();
    await s.launch({ program: EMAIL, input: { recipients: 4 }, runId: 'origin-1' }, { functions: [{ name: 'email user3@example.com' }] });
    let stop = await s.stopped();
    assert.equal(stop.frames[0]?.name, 'step 4 "email user3@example.com"');
    assert.equal(stop.frames[0]?.canRestart, true);
    await s.dc.restartFrameRequest({ frameId: stop.frames[0]?.id ?? -1 });
    stop = await s.stopped();
    assert.equal(stop.reason, 'restart');
    assert.equal(stop.frames[0]?.name, 'step 4 "email user3@example.com"');
    const threads = s.events.filter((e) => e.event === 'thread') as DebugProtocol.ThreadEvent[];
    assert.deepEqual(
      threads.map((t) => `${t.body.reason} ${t.body.threadId}`),
      ['started 1', 'exited 1', 'started 2'],
    );
    assert.equal(s.threadId(), 2);
    const run = await s.scope('Run', 1);
    const forkId = JSON.parse(run.id!.value.replace(/'/g, '"')) as string;
    assert.notEqual(forkId, 'origin-1');
    assert.equal(run.forkedFrom?.value, "{runId: 'origin-1', stepIdx: 3}");
    await s.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    assert.equal(await s.runToEnd(), 0);
    const fork = show(s.dir, forkId);
    assert.deepEqual(fork.run.forkedFrom, { runId: 'origin-1', step: 3 });
    assert.deepEqual(
      fork.steps.map((x: { attempt: number }) => x.attempt),
      [0, 0, 0, 1, 1],
      'three inherited checkpoints, two new steps',
    );
    const origin = show(s.dir, 'origin-1');
    assert.equal(origin.run.status, 'interrupted');
    assert.equal(origin.steps.length, 3, 'the origin stopped before its step 4 was written');
    const sent = emailOutbox(s.dir).sent.map((x) => x.key);
    assert.deepEqual(sent, [
      'email:origin-1:user1@example.com',
      'email:origin-1:user2@example.com',
      `email:${forkId}:user3@example.com`,
      `email:${forkId}:user4@example.com`,
    ]);
  });

  it('stopOnReplay stops in replayed steps, shown as subtle frames', async () => {
    const first = await session();
    await first.launch({ program: EMAIL, input: { recipients: 2 }, runId: 'replay-1', crashAt: 'email.send#2@after-commit' });
    assert.equal(await first.exitCode(), 137);
    const s = await session(first.dir);
    await s.launch({ program: EMAIL, resume: 'replay-1', stopOnReplay: true }, { lines: [{ file: EMAIL, line: lineOf(EMAIL, "run.step('load recipients'") }] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    assert.match(stop.description, /replay: step "load recipients" completed in an earlier attempt/);
    assert.equal(stop.frames[0]?.name, 'step 1 "load recipients" (replayed)');
    assert.equal(stop.frames[0]?.presentationHint, 'subtle');
    assert.match((await s.scope('Step')).result?.value ?? '', /^\(2\) \[\{…\}, \{…\}\]$/);
    stop = await s.step('next');
    assert.equal(stop.frames[0]?.name, 'step 2 "email user1@example.com" (replayed)');
    stop = await s.step('next');
    assert.equal(stop.frames[0]?.name, 'step 3 "email user2@example.com" (redone)');
    stop = await s.step('stepIn');
    assert.equal(stop.description, 'skip: email.send email:replay-1:user2@example.com is committed in the journal; its result is returned without running');
    assert.equal(stop.frames[0]?.presentationHint, 'subtle');
    assert.equal(await s.runToEnd(), 0);
  });
});
