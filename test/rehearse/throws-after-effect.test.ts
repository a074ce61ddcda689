// Rehearsal of an agent whose non-idempotent actions (with and without verify) throw after their effect: no duplicates anywhere.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { rehearse } from './util';

const SCRIPT = path.join(FIXTURES, 'throws-after-effect.ts');

describe('rehearse: errors after the effect (in doubt, not failed)', function () {
  this.timeout(900_000);

  // The script retries on error, as real agents do; one that gives up takes another path under an injected error, so its
  // output differs by design (its no-duplicate and settle-at-the-end behaviour is covered by test/crash).
  for (const retry of [true]) {
    it("every fault point, including an injected throw after every action's effect: no effect twice, same output", () => {
      const r = rehearse(tmpDir(), [SCRIPT, '--input', JSON.stringify({ retry }), '--points', 'all', '--jobs', '2']);
      const s = r.report.summary;
      assert.equal(r.status, 0, JSON.stringify(s));
      assert.equal(r.report.ok, true);
      assert.equal(r.report.baseline.status, 'completed');
      assert.equal(s.withDuplicates, 0);
      assert.deepEqual(s.duplicatesByType, {});
      assert.equal(s.broken, 0);
      assert.equal(s.unsettled, 0);
      assert.equal(s.finished, s.points);
      assert.equal(s.sameOutput, s.points);
      assert.equal(s.sameEffects.matched, s.sameEffects.compared);
      const specs: string[] = r.report.campaigns.map((c: any) => c.point.spec);
      // The throw phase is a campaign point for both kinds of action, and each of them took effect (kills counts it).
      for (const type of ['notify.send', 'sms.send'])
        assert.ok(
          specs.some((x) => x.startsWith(`${type}#`) && x.endsWith('@after-execute-throw')),
          `${type} throw point in ${specs.join(', ')}`,
        );
      for (const c of r.report.campaigns.filter((x: any) => x.point.spec.endsWith('@after-execute-throw'))) assert.deepEqual(c.kills, [c.point.spec]);
      // Doubts after errors were settled both ways: verify (notify.send) and the provider's record (sms.send, no verify).
      assert.ok((s.settled['verify found it'] ?? 0) > 0, JSON.stringify(s.settled));
      assert.ok((s.settled["provider's record: happened"] ?? 0) > 0, JSON.stringify(s.settled));
      assert.equal(s.settled['undecidable, assumed not happened'], undefined);
    });
  }
});
