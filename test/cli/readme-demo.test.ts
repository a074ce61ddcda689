// The README's demo transcript is what `npm run demo` really prints (the CLI's own output under each command).

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

/** The reader's checkout path differs from the README's `/…/`: compare the script line by its file name. */
const norm = (line: string): string => line.replace(/^( +script {2}).*\/(examples\/\S+)$/, '$1…/$2');

describe('README: the demo', () => {
  it('shows exactly what scripts/demo.mjs prints, line for line', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'demo.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 120_000,
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const printed = r.stdout.split('\n').map(norm);
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### The demo'));
    const block = /```\n(\$ logbook run [\s\S]*?)\n```/.exec(section)?.[1];
    assert.ok(block, 'the README has the demo transcript');
    const shown = block.split('\n').map(norm);
    const at = printed.indexOf(shown[0] ?? '');
    assert.ok(at >= 0, `the demo prints ${shown[0]}`);
    assert.deepEqual(printed.slice(at, at + shown.length), shown);
    assert.match(r.stdout, /Every email went out exactly once\./);
  });
});
