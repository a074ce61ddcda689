// run.sleep's durations: milliseconds or '90s' / '15m' / '2h' / '3d'; anything else is the script's mistake, named.

import { strict as assert } from 'node:assert';
import { parseDuration } from '../../src/runtime/sleep';

describe('run.sleep durations', () => {
  it('reads ms and unit strings, and refuses the rest with LB_STEP_MISUSE', () => {
    assert.equal(parseDuration(1500), 1500);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('15m'), 900_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('3d'), 259_200_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1.5s'), 1500);
    for (const bad of [-1, Number.NaN, '10', '5 weeks', 'soon', null, undefined, {}])
      assert.throws(
        () => parseDuration(bad),
        (e: { code?: string; message: string }) => e.code === 'LB_STEP_MISUSE' && /is not a duration/.test(e.message),
      );
  });
});
