// callSite() costs a stack capture: it answers only in a process where a driver shows locations (the debugger's runner).

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tmpDir } from '../helpers';

const PROBE = `
const { callSite } = require(${JSON.stringify(path.join(ROOT, 'src', 'runtime', 'public.ts'))});
const { wantLocations } = require(${JSON.stringify(path.join(ROOT, 'src', 'runtime', 'location.ts'))});
const before = callSite();
wantLocations();
const after = callSite();
process.stdout.write(JSON.stringify({ before: before ?? null, after: after ? after.line : null }));
`;

describe('callSite()', () => {
  it('is undefined where no driver shows locations, and the line of its caller once one does', () => {
    // A fresh process: whether a location-showing session ever existed is process-wide.
    const probe = path.join(tmpDir('call-site'), 'probe.cjs');
    fs.writeFileSync(probe, PROBE);
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', probe], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { before: unknown; after: number | null };
    assert.equal(out.before, null);
    assert.ok(typeof out.after === 'number' && out.after > 0, r.stdout);
  });
});
