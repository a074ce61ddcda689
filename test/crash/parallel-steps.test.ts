// Parallel steps (Promise.all) killed by a real SIGKILL at every fault point inside them: same output, no effect twice.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { cliJson, FIXTURES, show, tmpDir } from '../helpers';
import { killAndResume, pointsOf, readJson } from './crash';

const SCRIPT = path.join(FIXTURES, 'parallel-steps.ts');

describe('crash: parallel steps under Promise.all', function () {
  this.timeout(600_000);

  it('run uncrashed: the three parallel steps and their actions interleave in the journal', () => {
    const dir = tmpDir();
    const clean = cliJson(dir, ['run', SCRIPT, '--run-id', 'r']);
    assert.equal(clean.status, 0, clean.stderr);
    const journal = show(dir, 'r');
    assert.deepEqual(
      journal.steps
        .map((s: { name: string }) => s.name)
        .slice(0, 3)
        .sort(),
      ['label', 'notify', 'pack'],
    );
    // Interleaved: the actions in start order do not come step by step.
    const stepsInOrder: number[] = journal.actions.map((a: { step: number }) => a.step);
    assert.notDeepEqual(
      stepsInOrder,
      [...stepsInOrder].sort((x, y) => x - y),
      `actions did not interleave: ${stepsInOrder.join(',')}`,
    );
  });

  it('a kill at each point inside the parallel steps, then resume: same output, every call once, nothing left in doubt', () => {
    const base = tmpDir();
    const clean = cliJson(base, ['run', SCRIPT, '--run-id', 'r']);
    assert.equal(clean.status, 0, clean.stderr);
    const inside = pointsOf(show(base, 'r')).filter((p) => p.type !== 'box.ship' && p.target !== 'ship');
    assert.ok(inside.length >= 20, `points inside the parallel steps: ${inside.length}`);
    for (const p of inside) {
      const dir = tmpDir();
      const calls = (): Record<string, string[]> => readJson(dir, 'parallel-world.json').calls;
      const res = killAndResume(dir, SCRIPT, '{}', p.spec, (key) => Object.values(calls()).some((keys) => keys.includes(key)));
      assert.deepEqual(res.output, clean.json.output, `same output after a crash at ${p.spec}`);
      for (const [type, keys] of Object.entries(calls()))
        assert.equal(new Set(keys).size, keys.length, `${type} called twice after a crash at ${p.spec}: ${keys.join(', ')}`);
      assert.deepEqual(
        Object.fromEntries(Object.entries(calls()).map(([t, k]) => [t, k.length])),
        { 'box.pack': 2, 'box.label': 2, 'box.notify': 1, 'box.ship': 1 },
        p.spec,
      );
      for (const a of res.journal.actions) assert.equal(a.status, 'committed', `${a.id} after ${p.spec}`);
      assert.deepEqual(res.decisions, [], `verify settles every doubt (${p.spec})`);
    }
  });
});
