// `logbook rehearse --points all` over the support agent: every model-call and tool-call phase killed, every invariant kept.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EXAMPLES, tmpDir } from '../helpers';
import { brokenSummary, rehearse } from '../rehearse/util';

describe('rehearse --points all over the AI SDK support agent', function () {
  this.timeout(900_000);

  it('kills every model call, stream and tool phase: same reply, no tool effect or model call twice, every doubt settled', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [path.join(EXAMPLES, 'support-agent.ts'), '--points', 'all', '--jobs', '2']);
    const s = r.report.summary;
    assert.equal(r.status, 0, brokenSummary(r.report));
    // 2 steps × 2 step points; 4 generate + 1 stream calls, refund, email, ticket × 4 phases; list, lookup, faq × 3;
    // and the non-idempotent refund and email each made to throw after their effect (@after-execute-throw): the tool
    // wrapper holds such an in-doubt error instead of telling the model the tool failed, and the resume reconciles it.
    assert.equal(s.points, 47);
    assert.equal(s.finished, 47);
    assert.equal(s.sameOutput, 47);
    assert.equal(s.withDuplicates, 0, 'no refund, email, ticket or billed model call twice');
    assert.deepEqual(s.sameEffects, { matched: 47, compared: 47 });
    assert.equal(s.broken, 0);
    const targets = new Set(r.report.campaigns.map((c: any) => c.point.target));
    for (const t of [
      'model.generate',
      'model.stream',
      'tool.refund',
      'tool.sendEmail',
      'tool.lookupOrder',
      'mcp.helpdesk.open_ticket',
      'mcp.helpdesk.search_faq',
      'mcp.tools/list',
    ]) {
      assert.ok(targets.has(t), `${t} was killed in`);
    }
    assert.equal(r.report.baseline.probe['model.calls'].length, 5);
    assert.ok(s.saved['model.generate'] > 45, `model calls saved: ${JSON.stringify(s.saved)}`);
  });
});
