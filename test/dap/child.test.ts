// The debugger and run.child: the child runs in the same session (its frames stacked on its parent's call), `stepIn`
// at the call follows it, `next` steps over it, `stepOut` of its last step returns to the parent, and a breakpoint
// in the child's own file stops there with the parent's frames beneath.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { FIXTURES } from '../helpers';
import { Session, lineOf, sessionsPerTest, type Stop } from './harness';

const CAMPAIGN = path.join(FIXTURES, 'child', 'campaign.ts');
const DRAFTER = path.join(FIXTURES, 'child', 'drafter.ts');

/** Frames as [name with the run ids kept, file, line]: structure, not sentences. */
const frames = (stop: Stop): Array<[string, string, number]> => stop.frames.map((f) => [f.name, path.basename(f.source?.path ?? ''), f.line]);

describe('dap: run.child in the same debug session', function () {
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
  });

  it('stepIn at the run.child step follows the child; its frames stack on the parent’s call; stepOut returns to the parent', async () => {
    await s.launch({ program: CAMPAIGN, input: {}, runId: 'dp', stopOnEntry: true });
    await s.stopped();
    await s.step('next'); // step 1 before
    await s.step('next'); // step 1 after
    const atCall = await s.step('next');
    const callLine = lineOf(CAMPAIGN, 'run.child(drafter');
    assert.deepEqual(frames(atCall), [
      ['step 2 "child drafter"', 'campaign.ts', callLine],
      ['run dp (campaign, attempt 1)', 'campaign.ts', lineOf(CAMPAIGN, 'async run(run, input)')],
    ]);
    const start = await s.step('stepIn');
    assert.match(start.description, /child run dp\.child-2 \(drafter\) is journaled/);
    const inChild = await s.step('stepIn');
    const writeLine = lineOf(DRAFTER, "run.step('write'");
    assert.deepEqual(frames(inChild), [
      ['step 1 "write"', 'drafter.ts', writeLine],
      ['child run dp.child-2 (drafter, attempt 1)', 'drafter.ts', writeLine],
      ['step 2 "child drafter" → child run dp.child-2', 'campaign.ts', callLine],
      ['run dp (campaign, attempt 1)', 'campaign.ts', lineOf(CAMPAIGN, 'async run(run, input)')],
    ]);
    // The scopes of each frame are its own run's: the child's at the top, the parent's under its call.
    assert.equal((await s.scope('Run', 0)).id?.value, "'dp.child-2'");
    assert.equal((await s.scope('Run', 3)).id?.value, "'dp'");
    assert.equal((await s.scope('Step', 2)).name?.value, "'child drafter'");
    assert.equal(await s.evaluate('run.id'), "'dp.child-2'");
    // The Journal scope is the child's own journal: its first entry is the child's start, naming its parent.
    const journal = await s.scope('Journal', 0);
    const entry = Object.values(journal)[0];
    assert.ok(entry, 'the child’s journal has entries');
    const fields = await s.vars(entry.ref);
    assert.equal(fields.kind?.value, "'run.started'");
    const data = await s.vars(fields.data?.ref ?? 0);
    assert.match(data.parent?.value ?? '', /dp/);
    // next stays in the child: its next step boundary.
    const after = await s.step('next');
    assert.equal(after.frames[0]?.name, 'step 1 "write"');
    assert.equal(after.frames.length, 4);
    const save = await s.step('next');
    assert.equal(save.frames[0]?.name, 'step 2 "save"');
    // stepOut of the child's last step; next reaches the child's end; stepOut there returns to the parent, whose step
    // is checkpointed with the child's output; next goes on in the parent.
    const seq: string[] = [];
    for (const how of ['stepOut', 'next', 'stepOut', 'next'] as const) {
      const st = await s.step(how);
      seq.push(`${how} → ${st.frames[0]?.name ?? ''} / ${st.frames.length}`);
    }
    assert.deepEqual(seq, [
      'stepOut → step 2 "save" / 4',
      'next → child run dp.child-2 (drafter, attempt 1) / 3',
      'stepOut → step 2 "child drafter" / 2',
      'next → step 3 "pause" / 2',
    ]);
    assert.equal(await s.runToEnd(), 0);
  });

  it('next at the run.child step steps over the whole child run', async () => {
    await s.launch({ program: CAMPAIGN, input: {}, runId: 'dn', stopOnEntry: true });
    await s.stopped();
    await s.step('next');
    await s.step('next');
    const atCall = await s.step('next');
    assert.equal(atCall.frames[0]?.name, 'step 2 "child drafter"');
    const over = await s.step('next');
    assert.deepEqual(
      over.frames.map((f) => f.name),
      ['step 2 "child drafter"', 'run dn (campaign, attempt 1)'],
    );
    assert.match(over.description, /checkpointed/);
    assert.equal((await s.scope('Step')).result?.value, "{text: 'a draft about spring'}");
    assert.equal(await s.runToEnd(), 0);
  });

  it('a line breakpoint in the child agent’s file stops in the child, with the parent’s frames beneath', async () => {
    const saveLine = lineOf(DRAFTER, "run.step('save'");
    await s.launch({ program: CAMPAIGN, input: {}, runId: 'db' }, { lines: [{ file: DRAFTER, line: saveLine }] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    assert.deepEqual(
      frames(stop).map(([n, f]) => [n, f]),
      [
        ['step 2 "save"', 'drafter.ts'],
        ['child run db.child-2 (drafter, attempt 1)', 'drafter.ts'],
        ['step 2 "child drafter" → child run db.child-2', 'campaign.ts'],
        ['run db (campaign, attempt 1)', 'campaign.ts'],
      ],
    );
    assert.equal(stop.frames[0]?.line, saveLine);
    assert.equal(stop.frames[0]?.canRestart, false, 'restarting forks the session’s run, not its child');
    assert.equal(await s.runToEnd(), 0);
  });
});
