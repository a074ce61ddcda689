// The rehearsal's pure parts: seeded sampling, trace reading, and the invariant checks on journal summaries.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tmpDir } from '../helpers';
import { readTrace, rng, sample } from '../../src/rehearse/points';
import { canonical, checkInvariants } from '../../src/rehearse/invariants';
import type { Baseline, Point } from '../../src/rehearse/reportSchema';

const points: Point[] = Array.from({ length: 20 }, (_, i) => ({ process: 1, spec: `s#${i + 1}@before`, point: 'step:before', target: 's', occurrence: i + 1 }));

describe('rehearsal parts', () => {
  it('sample: same seed, same points; another seed, others; distinct and in run order', () => {
    const a = sample(points, 5, 'seed-a');
    assert.deepEqual(sample(points, 5, 'seed-a'), a);
    assert.notDeepEqual(sample(points, 5, 'seed-b'), a);
    assert.equal(new Set(a.map((p) => p.spec)).size, 5);
    assert.deepEqual(
      [...a].sort((x, y) => x.occurrence - y.occurrence),
      a,
    );
    assert.deepEqual(sample(points, 50, 'x'), points);
    const r = rng('z');
    const xs = Array.from({ length: 1000 }, () => r());
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    assert.ok(new Set(xs).size > 990);
  });

  it('readTrace turns traced hits into --crash-at specs, and skips unknown points', () => {
    const f = path.join(tmpDir(), 'trace.jsonl');
    fs.writeFileSync(
      f,
      [
        { point: 'step:before', target: 'email user1@example.com', occurrence: 1 },
        { point: 'action:after-execute', target: 'email.send', occurrence: 3 },
        { point: 'compensate:after-start', target: 'stock.reserve', occurrence: 2 },
        { point: 'action:nonsense', target: 'x', occurrence: 1 },
      ]
        .map((h) => JSON.stringify(h))
        .join('\n') + '\n',
    );
    assert.deepEqual(
      readTrace(f, 2).map((p) => [p.process, p.spec]),
      [
        [2, 'email user1@example.com#1@before'],
        [2, 'email.send#3@after-execute'],
        [2, 'stock.reserve#2@compensate:after-start'],
      ],
    );
    assert.deepEqual(readTrace(path.join(tmpDir(), 'missing.jsonl'), 1), []);
  });

  it('checkInvariants: provider duplicates, missing and extra effects, journal re-executions, in-doubt leftovers', () => {
    const baseline: Baseline = {
      status: 'completed',
      output: { a: 1, b: [1, 2] },
      probe: { 'email.send': ['k1', 'k2'] },
      processes: 1,
      steps: 2,
      actions: 2,
      approvals: [],
      ms: 1,
    };
    const action = (id: string, over: Record<string, unknown>) =>
      ({
        run_id: 'r',
        id,
        seq: 1,
        step_idx: 0,
        type: 'email.send',
        version: 1,
        effect: 'non-idempotent',
        args: '{}',
        status: 'committed',
        result: null,
        error: null,
        executions: 1,
        reconciliation: null,
        decision: null,
        approval: null,
        approval_note: null,
        compensation: null,
        compensation_result: null,
        compensation_executions: 0,
        attempt: 1,
        started_at: 0,
        ended_at: 0,
        commit_seq: 1,
        ...over,
      }) as any;
    const summary = {
      status: 'completed' as const,
      output: { b: [1, 2], a: 1 },
      steps: 2,
      actions: [action('k1', { executions: 2, reconciliation: 'decided-not-happened' }), action('k3', { status: 'started' })],
      restartsByAttempt: new Map([
        [1, 0],
        [2, 3],
        [3, 1],
      ]),
    };
    const c = checkInvariants(baseline, summary, { 'email.send': ['k1', 'k1', 'k3'] });
    assert.equal(c.finished, true);
    assert.equal(c.sameOutput, true, 'key order does not matter');
    assert.deepEqual(c.duplicates, [
      { type: 'email.send', key: 'k1', count: 2, source: 'journal' },
      { type: 'email.send', key: 'k1', count: 2, source: 'provider' },
    ]);
    assert.equal(c.sameEffects, false);
    assert.deepEqual(c.effectsDiff, ['email.send: k2 is missing', 'email.send: k3 was not in the uncrashed run']);
    assert.deepEqual(c.unsettled, [{ type: 'email.send', id: 'k3' }]);
    assert.deepEqual(c.settled, [{ type: 'email.send', id: 'k1', how: 'decided-not-happened' }]);
    assert.equal(c.stepsRedoneMax, 3);
    // A call a kill cut off from its count (the kill's last words) is added to the journal's: k3 was called twice.
    assert.deepEqual(checkInvariants(baseline, summary, undefined, ['k3', 'k2']).duplicates, [
      { type: 'email.send', key: 'k1', count: 2, source: 'journal' },
      { type: 'email.send', key: 'k3', count: 2, source: 'journal' },
    ]);
    // One a verify found has counted that call already: k1 verified after a kill cut one call off is one call.
    const verified = { ...summary, actions: [action('k1', { reconciliation: 'verified' })] };
    assert.deepEqual(checkInvariants(baseline, verified, undefined, ['k1']).duplicates, []);
    assert.deepEqual(checkInvariants(baseline, verified, undefined, ['k1', 'k1']).duplicates, [{ type: 'email.send', key: 'k1', count: 2, source: 'journal' }]);
    assert.equal(checkInvariants(baseline, undefined, undefined).finished, false);
    assert.equal(checkInvariants(baseline, summary, undefined).sameEffects, null);
    assert.equal(canonical({ x: [1, { b: 2, a: 1 }] }), '{"x":[1,{"a":1,"b":2}]}');
  });
});
