// Stepping through a run: entry, next/stepIn/stepOut as sequences of stop shapes, frames at the TS lines, variables, evaluate.

import * as assert from 'node:assert/strict';
import { EMAIL, NEWSLETTER, Session, StopShapes, emailLines, lineOf, sessionsPerTest, showShapes } from './harness';

describe('dap: stepping and inspecting', function () {
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
  });

  it('stops on entry before the first step, at the run function of the TS source', async () => {
    await s.launch({ program: EMAIL, input: { recipients: 2 }, runId: 'entry-1', stopOnEntry: true });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'entry');
    assert.match(stop.description, /before the first step/);
    assert.equal(stop.frames.length, 1);
    assert.equal(stop.frames[0]?.name, 'run entry-1 (email-campaign, attempt 1)');
    assert.equal(stop.frames[0]?.source?.path, EMAIL);
    assert.equal(stop.frames[0]?.line, lineOf(EMAIL, 'async run(run, input)'));
    assert.equal(await s.runToEnd(), 0);
    assert.match(s.text(), /run entry-1 completed \(attempt 1\); output \{"sent":2\}/);
  });

  it('next, stepIn and stepOut follow step boundaries and action phases', async () => {
    await s.launch({ program: EMAIL, input: { recipients: 2 }, stopOnEntry: true });
    const shapes = new StopShapes(s, emailLines());
    await shapes.add('entry', await s.stopped());
    const plan = ['next', 'next', 'next', 'stepIn', 'stepIn', 'stepIn', 'stepIn', 'stepIn', 'next', 'stepIn', 'stepOut', 'next'] as const;
    await shapes.follow(plan);
    // Structure, not sentences: frames, scope fields and the journal's new entries at each stop (was golden/email-stepping.txt).
    assert.deepEqual(showShapes(shapes.shapes).split('\n'), [
      'entry → entry [run@run] run running #1 +[run.started]',
      'next → step [step@load < run@run] run running #1 step #1 +[]',
      'next → step [step@load < run@run] run running #1 step #1 +[step.started, step.completed]',
      'next → step [step@email < run@run] run running #1 step #2 +[]',
      'stepIn → step [action@email < step@email < run@run] run running #1 step #2 email.send email:<run>:user1@example.com before-start/new +[step.started]',
      'stepIn → step [action@email < step@email < run@run] run running #1 step #2 email.send email:<run>:user1@example.com started/started +[action.started]',
      'stepIn → step [action@email < step@email < run@run] run running #1 step #2 email.send email:<run>:user1@example.com executed/started +[action.executing]',
      'stepIn → step [action@email < step@email < run@run] run running #1 step #2 email.send email:<run>:user1@example.com committed/committed +[action.committed]',
      'stepIn → step [step@email < run@run] run running #1 step #2 +[step.completed]',
      'next → step [step@email < run@run] run running #1 step #3 +[]',
      'stepIn → step [action@email < step@email < run@run] run running #1 step #3 email.send email:<run>:user2@example.com before-start/new +[step.started]',
      'stepOut → step [step@email < run@run] run running #1 step #3 +[action.started, action.executing, action.committed, step.completed]',
      'next → step [run@run] run completed #1 +[run.completed]',
    ]);
    assert.equal(await s.runToEnd(), 0);
  });

  it('puts step and action frames at the lines of run.step and run.do in the TS source', async () => {
    const sendLine = lineOf(NEWSLETTER, 'run.do(sendEmail');
    const stepLine = lineOf(NEWSLETTER, 'run.step(`send ${to}`');
    await s.launch({ program: NEWSLETTER, input: { recipients: 2 }, stopOnEntry: true }, { filters: ['nonIdempotent'] });
    await s.stopped();
    const stop = await s.step('continue');
    assert.equal(stop.reason, 'exception');
    assert.deepEqual(
      stop.frames.map((f) => [f.name.replace(/run-[\w-]+/g, '<run>'), f.line]),
      [
        ['email.send email:<run>:reader1@example.com (before-start)', sendLine],
        ['step 2 "send reader1@example.com"', stepLine],
        ['run <run> (newsletter, attempt 1)', lineOf(NEWSLETTER, 'async run(run, input)')],
      ],
    );
    assert.equal(stop.frames[1]?.canRestart, true);
    assert.equal(stop.frames[0]?.canRestart, false);
    for (const f of stop.frames) assert.equal(f.source?.path, NEWSLETTER);
  });

  it('shows Run, Step, Action, Checkpoint and Journal scopes and evaluates over the paused context', async () => {
    await s.launch({ program: EMAIL, input: { recipients: 3 }, runId: 'vars-1' }, { functions: [{ name: 'email.send' }] });
    await s.stopped();
    await s.step('continue');
    const stop = await s.step('stepIn');
    assert.match(stop.description, /started is durable/);
    const action = await s.scope('Action');
    assert.equal(action.type?.value, "'email.send'");
    assert.equal(action.effect?.value, "'non-idempotent'");
    assert.equal(action.id?.value, "'email:vars-1:user2@example.com'");
    assert.equal(action.phase?.value, "'started'");
    assert.equal(action.status?.value, "'started'");
    assert.equal(action.executions?.value, '0');
    assert.equal(action.args?.value, "{to: 'user2@example.com', body: 'Hello user 2, our spring issue is out.'}");
    const args = await s.vars(action.args?.ref ?? 0);
    assert.equal(args.to?.value, "'user2@example.com'");
    const step = await s.scope('Step');
    assert.deepEqual([step.name?.value, step.index?.value, step.replayed?.value], ["'email user2@example.com'", '2', 'false']);
    const run = await s.scope('Run');
    assert.deepEqual([run.id?.value, run.attempt?.value, run.status?.value, run.input?.value], ["'vars-1'", '1', "'running'", '{recipients: 3}']);
    const cp = await s.scope('Checkpoint');
    assert.equal(cp.stepsJournaled?.value, '3');
    assert.match(cp.lastCheckpoint?.value ?? '', /name: 'email user1@example.com'/);
    const journal = await s.scope('Journal');
    assert.equal(journal['0']?.value, '#1 run.started');
    assert.ok(
      Object.values(journal).some((v) => / action\.started step 3 email:vars-1:user2@example\.com$/.test(v.value)),
      JSON.stringify(journal),
    );
    const entry = await s.vars(journal['0']?.ref ?? 0);
    assert.equal(entry.kind?.value, "'run.started'");

    assert.equal(await s.evaluate("args.to.endsWith('@example.com')"), 'true');
    assert.equal(await s.evaluate('action.key'), "'email:vars-1:user2@example.com'");
    assert.equal(await s.evaluate('step.name.toUpperCase()', 'watch'), "'EMAIL USER2@EXAMPLE.COM'");
    assert.equal(await s.evaluate('input.recipients * 2', 'hover'), '6');
    assert.equal(await s.evaluate('({ a: [1, 2], b: undefined })'), '{a: Array(2), b: undefined}');
    await assert.rejects(s.evaluate('nosuch.thing'), /nosuch is not defined/);
    // The sandbox gets copies: changing args in the console cannot change what the effect receives.
    await s.evaluate("args.to = 'attacker@example.com'");
    assert.equal(await s.evaluate('args.to'), "'user2@example.com'");
    await s.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    assert.equal(await s.runToEnd(), 0);
  });

  it('pages the journal lazily', async () => {
    await s.launch(
      { program: EMAIL, input: { recipients: 30 }, runId: 'paged' },
      { lines: [{ file: EMAIL, line: lineOf(EMAIL, 'run.do(sendEmail'), hitCondition: '30' }] },
    );
    await s.stopped();
    const st = await s.dc.stackTraceRequest({ threadId: s.threadId() });
    const scopes = await s.dc.scopesRequest({ frameId: st.body.stackFrames[0]!.id });
    const journal = scopes.body.scopes.find((x) => x.name.startsWith('Journal'))!;
    assert.ok((journal.indexedVariables ?? 0) > 100, `journal has ${journal.indexedVariables} entries`);
    const page = await s.vars(journal.variablesReference, 100, 3);
    assert.deepEqual(Object.keys(page), ['100', '101', '102']);
    assert.match(page['100']?.value ?? '', /^#101 /);
    assert.equal(await s.runToEnd(), 0);
  });
});
