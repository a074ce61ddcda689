// Issue 19 case 2 in the debugger: restartFrame forks with the origin's input as journaled, not parsed by the schema again.

import * as assert from 'node:assert/strict';
import { show } from '../helpers';
import { OUTPUT, PARSED, PRICED, RAW, charges, inputsSeen } from '../priced';
import { sessionsPerTest } from './harness';

describe('dap: a fork from a step frame gets the parsed input', function () {
  const session = sessionsPerTest();

  it('launch with raw input, stop at the charge step, restartFrame: the fork charges the cents the origin quoted', async () => {
    const s = await session();
    await s.launch({ program: PRICED, input: RAW, runId: 'origin' }, { functions: [{ name: 'charge' }] });
    let stop = await s.stopped();
    assert.equal(stop.frames[0]?.name, 'step 2 "charge"');
    await s.dc.restartFrameRequest({ frameId: stop.frames[0]?.id ?? -1 });
    stop = await s.stopped();
    assert.equal(stop.reason, 'restart');
    const forkId = JSON.parse((await s.scope('Run', 1)).id!.value.replace(/'/g, '"')) as string;
    assert.notEqual(forkId, 'origin');
    await s.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    assert.equal(await s.runToEnd(), 0);
    const fork = show(s.dir, forkId);
    assert.equal(fork.run.status, 'completed');
    // Its replayed quote (1250) and its own charge agree: parsed again, the input would have charged 125000.
    assert.deepEqual(fork.run.output, OUTPUT);
    assert.deepEqual(fork.run.input, PARSED);
    assert.deepEqual(charges(s.dir, forkId), [1250]);
    assert.deepEqual(charges(s.dir, 'origin'), [], 'the origin stopped before its charge');
    assert.deepEqual(inputsSeen(s.dir, 'origin'), [{ attempt: 1, input: PARSED }]);
    assert.deepEqual(inputsSeen(s.dir, forkId), [{ attempt: 1, input: PARSED }]);
  });
});
