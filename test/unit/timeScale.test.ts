// The timeline's axis: a long quiet stretch (a debugger pause) is compressed to a gap, work keeps its proportions.

import { strict as assert } from 'node:assert';
import { QUIET_MS, quietGaps, scaleOf, xAt } from '../../src/reader/timeScale';

describe('timeline axis', () => {
  it("finds a pause far longer than the attempt's usual spacing, and nothing in a steady run", () => {
    const steady = Array.from({ length: 20 }, (_, i) => 1000 + i * 150);
    assert.deepEqual(quietGaps(steady), []);
    const paused = [0, 40, 90, 130, 130 + 95_000, 130 + 95_040, 130 + 95_100];
    assert.deepEqual(quietGaps(paused), [{ start: 130, end: 95_130 }]);
    assert.deepEqual(quietGaps([0, QUIET_MS - 1]), []);
  });

  it('gives a gap a small fixed width, so the steps around a 95 s pause fill the axis, not a sliver of it', () => {
    const s = scaleOf(0, 95_230, [{ start: 130, end: 95_130 }]);
    assert.deepEqual(
      s.segments.map((g) => g.gap),
      [false, true, false],
    );
    const gap = s.segments[1]!;
    assert.ok(gap.x1 - gap.x0 <= 5, 'the gap stays narrow');
    // 130 ms before and 100 ms after share the remaining width in proportion.
    const before = s.segments[0]!.x1 - s.segments[0]!.x0;
    const after = s.segments[2]!.x1 - s.segments[2]!.x0;
    assert.ok(Math.abs(before / after - 1.3) < 0.01);
    assert.equal(xAt(s.segments, 95_230), 100);
    assert.equal(xAt(s.segments, 0), 0);
    // Wall-clock scale would have put the end of the first step at 0.14% of the width.
    assert.ok(xAt(s.segments, 130) > 50);
  });

  it('ticks round elapsed times, outside gaps, increasing left to right', () => {
    const s = scaleOf(1_000, 11_000, []);
    assert.deepEqual(
      s.ticks.map((t) => t.label),
      ['0', '+2 s', '+4 s', '+6 s', '+8 s', '+10 s'],
    );
    assert.deepEqual(
      s.ticks.map((t) => Math.round(t.x)),
      [0, 20, 40, 60, 80, 100],
    );
    const p = scaleOf(0, 95_230, [{ start: 130, end: 95_130 }]);
    const xs = p.ticks.map((t) => t.x);
    assert.deepEqual(
      xs,
      [...xs].sort((a, b) => a - b),
    );
    const gap = p.segments[1]!;
    assert.ok(
      p.ticks.every((t) => t.x <= gap.x0 || t.x >= gap.x1),
      'no tick inside the gap',
    );
    const after = p.ticks.filter((t) => t.x >= gap.x1).map((t) => t.label);
    assert.ok(after.length >= 2 && after.every((l) => /^\+1 min 35\.\d+ s$/.test(l)), `wall time after the gap: ${after.join(', ')}`);
    assert.equal(new Set(p.ticks.map((t) => t.label)).size, p.ticks.length, 'every tick says something different');
  });
});
