// `logbook rehearse --points all` over the OpenAI Agents SDK support agent: every phase killed, every invariant kept.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EXAMPLES, tmpDir } from '../helpers';
import { brokenSummary, rehearse } from '../rehearse/util';

describe('rehearse --points all over the OpenAI Agents SDK support agent', function () {
  this.timeout(900_000);

  it('kills every model call, stream and tool phase: same output, no refund or email twice, every doubt settled', () => {
    const r = rehearse(tmpDir(), [path.join(EXAMPLES, 'openai-agents-support.ts'), '--points', 'all', '--jobs', '2'], { OPENAI_API_KEY: '' });
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.ok(s.points >= 30, `points: ${s.points}`);
    assert.equal(s.finished, s.points);
    assert.equal(s.sameOutput, s.points);
    assert.equal(s.withDuplicates, 0, 'no refund or email twice');
    assert.deepEqual(s.sameEffects, { matched: s.points, compared: s.points });
    assert.equal(s.unsettled, 0);
    assert.equal(s.broken, 0);
    const targets = new Set(r.report.campaigns.map((c: { point: { target: string } }) => c.point.target));
    for (const t of ['model.generate', 'model.stream', 'tool.refund', 'tool.sendEmail', 'tool.lookupOrder']) assert.ok(targets.has(t), `${t} was killed in`);
  });

  it('with a refund over 100, kills the paused run where its state is written, at its gate, and in the segment resumed from it', () => {
    const points = [
      'model.generate#2@after-commit',
      'resolve#1@after-checkpoint',
      'resolve: approval#1@before',
      'agents.approval#1@after-commit',
      'resolve: resume 1#1@before',
      'tool.refund#1@after-start',
      'tool.refund#1@after-execute',
      'resolve: resume 1#1@after-checkpoint',
    ];
    const r = rehearse(
      tmpDir(),
      [path.join(EXAMPLES, 'openai-agents-support.ts'), '--input', '{"orderId":"A-1002"}', ...points.flatMap((p) => ['--point', p]), '--jobs', '2'],
      { OPENAI_API_KEY: '' },
    );
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    assert.ok(s.points >= points.length, `points: ${s.points}`);
    assert.equal(s.finished, s.points);
    assert.equal(s.sameOutput, s.points);
    assert.equal(s.withDuplicates, 0, 'no refund or email twice');
    assert.deepEqual(s.sameEffects, { matched: s.points, compared: s.points });
    assert.equal(s.unsettled, 0);
    assert.equal(s.broken, 0);
    // The rehearsal approved the gate of each campaign, as a person would.
    assert.ok(
      r.report.campaigns.every((c: { approvals?: Array<{ id: string }> }) => (c.approvals ?? []).some((a) => a.id === 'approval:refund:rehearsal:A-1002')),
      JSON.stringify(r.report.campaigns[0]),
    );
  });
});
