// docs/contract.md's tables are the policy's and the error table's own: regenerating them changes nothing.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { CONTRACT_DOC, effectTable, renderContract } from '../../scripts/contractTables';
import { ErrorCodes } from '../../src/runtime/errors';

describe('docs/contract.md', () => {
  it('holds the tables generated from policy.ts and errors.ts (run `npm run docs:contract` after changing them)', () => {
    const doc = fs.readFileSync(CONTRACT_DOC, 'utf8');
    assert.ok(doc.includes('<!-- generated: effect-table -->') && doc.includes('<!-- generated: error-table -->'));
    assert.equal(renderContract(doc), doc);
  });

  it('lists every error code once, and each effect class (negative control: a planted cell is found)', () => {
    const doc = fs.readFileSync(CONTRACT_DOC, 'utf8');
    const table = doc.slice(doc.indexOf('<!-- generated: error-table -->'));
    const codes = [...table.slice(0, table.indexOf('<!-- /generated -->')).matchAll(/`(LB_[A-Z_]+)`/g)].map((m) => m[1]);
    assert.equal(new Set(codes).size, codes.length, 'no code is listed twice');
    assert.equal(codes.length, Object.keys(ErrorCodes).length, 'every code is in one group');
    for (const e of ['`read-only`', '`idempotent`, with', '`idempotent`, no', '`non-idempotent`, with', '`non-idempotent`, no'])
      assert.ok(effectTable().includes(e), e);
    const planted = doc.replace('executed again with the same key |', 'run again |');
    assert.notEqual(planted, doc);
    assert.notEqual(renderContract(planted), planted, 'a hand edit of a generated cell is caught');
    assert.throws(() => renderContract('<!-- generated: nope -->\nx\n<!-- /generated -->'), /no generator for block "nope"/);
  });
});
