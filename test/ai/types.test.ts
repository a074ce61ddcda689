// Type tests of agent-logbook/ai's tool entries: tsc on a strict fixture that must compile, and on one that must not.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = path.join(__dirname, '..', 'fixtures', 'ai-types');
const tsc = require.resolve('typescript/bin/tsc');

function check(name: 'good' | 'bad'): { status: number | null; errors: string[] } {
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, `tsconfig.${name}.json`), '--pretty', 'false'], { encoding: 'utf8' });
  return { status: r.status, errors: r.stdout.split('\n').filter((l) => /error TS\d+/.test(l)) };
}

describe('ai: tool entry types under strict', function () {
  this.timeout(120_000);

  it('compiles entries whose key, verify, execute, compensate and approval parameters are left to inference', () => {
    const r = check('good');
    assert.deepEqual(r.errors, [], 'no error: in particular no TS7006 (implicit any) on (a, ctx) => … or { idempotencyKey }');
    assert.equal(r.status, 0);
  });

  it('refuses each mistake of the bad fixture with the error code its line expects, and nothing else', () => {
    const lines = fs.readFileSync(path.join(dir, 'bad.ts'), 'utf8').split('\n');
    const expected = lines.flatMap((l, i) => {
      const m = /\/\/ expect (TS\d+)/.exec(l);
      return m ? [`bad.ts:${i + 1} ${m[1]}`] : [];
    });
    assert.ok(expected.length >= 7, 'the fixture marks its mistakes');
    const r = check('bad');
    assert.equal(r.status, 2, 'tsc fails');
    const got = r.errors.map((e) => {
      const m = /^(?:.*[\\/])?([\w.-]+)\((\d+),\d+\): error (TS\d+)/.exec(e);
      return m ? `${m[1]}:${m[2]} ${m[3]}` : e;
    });
    assert.deepEqual(got, expected);
  });
});
