// Negative controls: unsafe declarations must make a rehearsal report undecidable points and duplicates (exit 1).

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { rehearse } from './util';

describe('rehearse negative controls', function () {
  this.timeout(600_000);
  const ignoreKeys = { OUTBOX_IGNORE_KEYS: '1' };

  it('non-idempotent with no verify and no probe: undecidable points and duplicate sends, exit 1', () => {
    const r = rehearse(
      tmpDir(),
      [path.join(FIXTURES, 'control-no-verify.ts'), '--input', '{"recipients":1}', '--points', 'all', '--jobs', '2'],
      ignoreKeys,
      true,
    );
    const s = r.report.summary;
    assert.equal(r.status, 1);
    assert.match(r.stdout, /BROKEN +no side effect executed twice/);
    assert.match(r.stdout, /BROKEN +every in-doubt action settled/);
    assert.match(r.stdout, /settled by: .*undecidable, assumed not happened 3/);
    assert.match(r.stdout, /Broken campaigns \(3\)/);
    // Killed right after the send, that call is in no count of the journal (it is counted with its settling write):
    // the killed process's last words name it, and the rehearsal adds it.
    assert.match(r.stdout, /email\.send#1@after-execute: email\.send email:rehearsal:user1@example\.com ×2 \(journal\)/);
    assert.match(r.stdout, /email\.send#1@after-execute-throw: email\.send email:rehearsal:user1@example\.com ×2 \(journal\)/);
    assert.match(r.stdout, /3 of 7 campaign\(s\) broke an invariant/);
    assert.equal(r.report.ok, false);
    const d = s.decisions.find((x: any) => x.type === 'email.send');
    assert.equal(d.assumed, 3, 'after-start, after-execute and an error after the send cannot be decided');
    assert.equal(s.withDuplicates, 2, 'assuming "not happened" after the send (crash or error) sends the email twice');
    for (const spec of ['email.send#1@after-execute', 'email.send#1@after-execute-throw']) {
      const dup = r.report.campaigns.find((c: any) => c.point.spec === spec);
      assert.deepEqual(dup.duplicates, [{ type: 'email.send', key: 'email:rehearsal:user1@example.com', count: 2, source: 'journal' }], spec);
    }
    assert.equal(s.broken, 3);
  });

  it('declared idempotent but the provider ignores keys: the probe shows the duplicates, exit 1', () => {
    const r = rehearse(
      tmpDir(),
      [path.join(FIXTURES, 'control-false-idempotent.ts'), '--input', '{"recipients":1}', '--points', 'all', '--jobs', '2'],
      ignoreKeys,
    );
    const s = r.report.summary;
    assert.equal(r.status, 1);
    assert.equal(s.withDuplicates, 1);
    assert.deepEqual(Object.keys(s.duplicatesByType), ['email.send (provider)']);
    assert.equal(s.sameOutput, s.points, 'the output alone would not have shown it');
  });
});
