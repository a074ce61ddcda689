// The support agent under the debug adapter: `model:*` stops before each journaled model call, shown as a model call.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, show } from '../helpers';
import { sessionsPerTest } from '../dap/harness';

const SUPPORT = path.join(EXAMPLES, 'support-agent.ts');
const CHARGE = path.join(FIXTURES, 'ai-charge.ts');

describe('ai: model calls in the debugger', function () {
  this.timeout(120_000);
  const session = sessionsPerTest();

  it('a function breakpoint model:* stops before each model call; the Action scope leads with the model call', async () => {
    const s = await session();
    await s.launch({ program: SUPPORT, input: {}, runId: 'dbg-ai' }, { functions: [{ name: 'model:*' }] });
    let stop = await s.stopped();
    assert.equal(stop.reason, 'function breakpoint');
    assert.match(stop.description, /model\.generate model:1\.1/);
    const action = await s.scope('Action');
    assert.ok(action['model call'], `Action scope: ${Object.keys(action).join(', ')}`);
    const view = await s.vars(action['model call'].ref);
    assert.match(view.model?.value ?? '', /scripted\/support-scripted-1/);
    const last = await s.vars(view.lastMessages!.ref);
    assert.match(
      Object.values(last)
        .map((v) => v.value)
        .join(' '),
      /user: My kettle from order A-1001 arrived broken/,
    );
    assert.equal(action.type?.value, "'model.generate'");
    stop = await s.step('continue');
    assert.match(stop.description, /model\.generate model:1\.2/);
    const second = await s.vars((await s.scope('Action'))['model call']!.ref);
    const lastOfSecond = Object.values(await s.vars(second.lastMessages!.ref))
      .map((v) => v.value)
      .join(' ');
    assert.match(lastOfSecond, /tool: lookupOrder/, "the second call sees the first call's tool results");
    await s.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    assert.equal(await s.runToEnd(), 0);
  });

  it('decides an in-doubt tool call with its result from the debugger: the model is handed that result', async () => {
    const first = await session();
    await first.launch({ program: CHARGE, input: {}, runId: 'dbg-charge', crashAt: 'tool.charge#1@after-execute' });
    assert.equal(await first.exitCode(), 137);
    const second = await session(first.dir);
    await second.launch({ program: CHARGE, resume: 'dbg-charge' });
    const stop = await second.stopped();
    assert.match(stop.description, /tool\.charge charge:dbg-charge .*has no verify, so a person must decide/);
    await assert.rejects(second.dc.customRequest('decide', { decision: 'not-happened', result: { chargeId: 'ch_1' } }), /"not-happened" with a result/);
    const exited = second.exitCode();
    const decided = await second.dc.customRequest('decide', {
      decision: 'happened',
      actionId: 'charge:dbg-charge',
      result: { chargeId: 'ch_1', amount: 1250 },
    });
    assert.match(String((decided.body as { message?: unknown } | undefined)?.message), /happened, with its result/);
    assert.equal(await exited, 0, 'the decision continues the run to its end');
    assert.equal(show(first.dir, 'dbg-charge').run.output, 'Your card was charged (ch_1).');
  });
});
