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
});
