// Scripts are code: loading one runs its top-level code, and a worker loads every script in its folder.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, ROOT, tmpDir } from '../helpers';

describe('secrets: scripts are code', function () {
  this.timeout(60_000);

  it('a worker imports every script in its --scripts folder, one its --agents leaves out included, before it claims anything', () => {
    const dir = tmpDir('logbook-secrets-code-');
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const ran = path.join(dir, 'ran.txt');
    const agent = (name: string): string =>
      `import * as fs from 'node:fs';\nimport { z } from 'zod';\nimport { defineAgent } from 'agent-logbook';\n` +
      `fs.appendFileSync(${JSON.stringify(ran)}, '${name} ran at load\\n');\n` +
      `export default defineAgent({ name: '${name}', input: z.object({}), async run() { return {}; } });\n`;
    fs.writeFileSync(path.join(dir, 'wanted.ts'), agent('wanted'));
    fs.writeFileSync(path.join(dir, 'stranger.ts'), agent('stranger'));
    // --agents names an agent the folder lacks: the worker refuses before it claims a run, after loading the folder.
    const r = spawnSync(process.execPath, [CLI, 'worker', '--scripts', dir, '--agents', 'wanted,missing', '--journal', path.join(dir, 'journal.db')], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--agents names missing/);
    assert.deepEqual(fs.readFileSync(ran, 'utf8').split('\n').filter(Boolean).sort(), ['stranger ran at load', 'wanted ran at load']);
  });
});
