// Type tests of agent-logbook/langgraph's built declarations: an ES-module and a CommonJS project compile a graph with
// `checkpointer: new LogbookSaver()` as written (no cast), and, as the negative control, the same ES module against the
// CommonJS declarations alone fails with TS2322 (two copies of BaseCheckpointSaver), which the ESM twins (.d.mts) end.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

const dir = path.join(ROOT, 'test', 'fixtures', 'langgraph-types');
const tsc = require.resolve('typescript/bin/tsc');

function check(config: string): { status: number | null; errors: string[] } {
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, config), '--pretty', 'false'], { encoding: 'utf8' });
  return { status: r.status, errors: r.stdout.split('\n').filter((l) => /error TS\d+/.test(l)) };
}

describe('langgraph: the built declarations in ES-module and CommonJS projects', function () {
  this.timeout(300_000);

  before(() => {
    for (const f of ['index.d.ts', 'index.d.mts'])
      assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'types', 'langgraph', f)), `dist/types/langgraph/${f} is built (npm run build)`);
  });

  it('compiles a graph on LogbookSaver, and runGraph on it, from an .mts and a .cts file (nodenext, skipLibCheck: false)', () => {
    const r = check('tsconfig.json');
    assert.deepEqual(r.errors, []);
    assert.equal(r.status, 0);
  });

  it('negative control: the ES module against the CommonJS declarations sees a second BaseCheckpointSaver (TS2322)', () => {
    const r = check('tsconfig.cjs-types.json');
    assert.equal(r.status, 2);
    assert.ok(
      r.errors.some((e) => /esm\.mts\(\d+,\d+\): error TS2322/.test(e)),
      r.errors.join('\n'),
    );
  });
});
