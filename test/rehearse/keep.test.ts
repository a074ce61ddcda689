// `rehearse --keep` leaves the scratch journals for inspection and says where; without it nothing is left behind.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { rehearse } from './util';

const KNOBS = path.join(FIXTURES, 'knobs.ts');

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

describe('rehearse --keep', function () {
  this.timeout(300_000);

  it('keeps the scratch directory with a journal per campaign and names it; without --keep none is left', () => {
    const cwd = tmpDir();
    const keptTmp = tmpDir('logbook-keep-tmp-');
    const kept = rehearse(cwd, [KNOBS, '--random', '2', '--seed', 'keep', '--jobs', '1', '--keep'], { TMPDIR: keptTmp }, true);
    assert.equal(kept.status, 0, kept.stdout + kept.stderr);
    const named = /scratch kept\s+(\S+)/.exec(kept.stdout)?.[1];
    assert.ok(named, `the output names the kept directory:\n${kept.stdout}`);
    assert.equal(path.dirname(named), keptTmp);
    const journals = filesUnder(named).filter((f) => f.endsWith('.db'));
    assert.ok(journals.length >= 2, `a journal per campaign and the baseline's: ${filesUnder(named).join(', ')}`);

    const cleanTmp = tmpDir('logbook-keep-tmp-');
    const clean = rehearse(cwd, [KNOBS, '--random', '2', '--seed', 'keep', '--jobs', '1'], { TMPDIR: cleanTmp }, true);
    assert.equal(clean.status, 0, clean.stdout + clean.stderr);
    assert.doesNotMatch(clean.stdout, /scratch kept/);
    assert.deepEqual(
      fs.readdirSync(cleanTmp).filter((f) => f.startsWith('logbook-rehearse-')),
      [],
      'no scratch directory left behind',
    );
  });
});
