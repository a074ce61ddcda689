// The sources import each other without cycles, and the checker that `npm run verify` runs does find one when there is.

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tmpDir } from '../helpers';

const CHECKER = path.join(ROOT, 'scripts', 'import-cycles.mjs');

function check(dir?: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CHECKER, ...(dir ? [dir] : [])], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('import cycles', () => {
  it('src/ has none', () => {
    const r = check();
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /no import cycles/);
  });

  it('the checker names a cycle, through type-only and lazy imports too, and fails', () => {
    const dir = tmpDir('logbook-cycles-');
    fs.mkdirSync(path.join(dir, 'cli'));
    fs.mkdirSync(path.join(dir, 'rehearse'));
    fs.writeFileSync(path.join(dir, 'cli', 'main.ts'), "import { x } from '../rehearse/command';\nexport const y = x;\n");
    fs.writeFileSync(path.join(dir, 'rehearse', 'command.ts'), "import type { Io } from '../cli/io';\nexport const x = 1 as unknown as Io;\n");
    fs.writeFileSync(path.join(dir, 'cli', 'io.ts'), "export interface Io { out(l: string): void }\nexport const lazy = () => import('./main.js');\n");
    fs.writeFileSync(path.join(dir, 'cli', 'leaf.ts'), "// import { y } from './main';\nexport const leaf = 1;\n");
    const r = check(dir);
    assert.equal(r.status, 1, r.out);
    const line = r.out.split('\n').find((l) => l.startsWith('import cycle: ')) ?? '';
    const files = line.slice('import cycle: '.length).split(' → ');
    assert.equal(files.length, 4, line);
    assert.equal(files[0], files[3], 'a cycle ends where it starts');
    assert.deepEqual(files.slice(0, 3).sort(), ['cli/io.ts', 'cli/main.ts', 'rehearse/command.ts']);
    assert.doesNotMatch(r.out, /leaf\.ts/, 'a commented-out import is not an import');
    assert.match(r.out, /1 import cycle\(s\)/);
  });
});
