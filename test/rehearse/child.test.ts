// `logbook rehearse` of an agent with a child run (run.child): kills at run.child's own fault points and inside the
// child, a child that stops for a decision (decided on the child from the provider's record), every invariant held.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { rehearse } from './util';

const CAMPAIGN = path.join(FIXTURES, 'child', 'campaign.ts');

describe('logbook rehearse with a child run', function () {
  this.timeout(600_000);

  it('kills at child:after-start, child:after-end and in the child’s effect without verify; resumes decide on the child; every invariant holds', () => {
    const dir = tmpDir('logbook-rehearse-child-');
    const points = ['drafter#1@child:after-start', 'drafter#1@child:after-end', 'draft.keep#1@after-execute', 'draft.keep#1@after-execute-throw'];
    const r = rehearse(dir, [CAMPAIGN, '--input', '{"verify":false}', ...points.flatMap((p) => ['--point', p])]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const report = r.report as {
      campaigns: Array<{
        point: { spec: string };
        kills: string[];
        finished: boolean;
        error: string | null;
        decisions: Array<{ id: string; decision: string }>;
      }>;
      summary: {
        points: number;
        finished: number;
        sameOutput: number;
        withDuplicates: number;
        sameEffects: { matched: number; compared: number };
        broken: number;
      };
    };
    assert.deepEqual(report.campaigns.map((c) => [c.point.spec, c.kills.length, c.finished, c.error]).sort(), points.map((p) => [p, 1, true, null]).sort());
    // Killed after the child's effect, the child is in doubt with no verify: decided "happened" from the provider's record, on the child.
    const decided = report.campaigns.find((c) => c.point.spec === 'draft.keep#1@after-execute');
    assert.deepEqual(
      decided?.decisions.map((d) => [d.id, d.decision]),
      [['keep:rehearsal.child-2:spring', 'happened']],
    );
    // The provider's record (the probe covers the child's effects) matches the uncrashed run's in every campaign.
    const n = points.length;
    assert.deepEqual(
      { ...report.summary, sameEffects: report.summary.sameEffects },
      { ...report.summary, points: n, finished: n, sameOutput: n, withDuplicates: 0, sameEffects: { matched: n, compared: n }, broken: 0 },
    );
  });
  it('a child that waits for an event: --event is sent to the child (not its parent), kills at event:after-deliver and in the child, every invariant holds', () => {
    const dir = tmpDir('logbook-rehearse-child-');
    const inquirer = path.join(FIXTURES, 'child', 'inquirer.ts');
    const points = ['reply#1@event:after-deliver', 'listener#1@child:after-end'];
    const r = rehearse(dir, [inquirer, '--event', 'reply={"text":"yes"}', ...points.flatMap((p) => ['--point', p])]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const report = r.report as { campaigns: Array<{ point: { spec: string }; kills: string[]; finished: boolean; error: string | null }> };
    // child:after-end is passed twice: where the child stops waiting (the first process), and where it ends (the second).
    const expected = [points[1], ...points].map((p) => [p, 1, true, null]).sort();
    assert.deepEqual(report.campaigns.map((c) => [c.point.spec, c.kills.length, c.finished, c.error]).sort(), expected);
  });
});
