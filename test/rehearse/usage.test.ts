// Bad usage of `logbook rehearse` and `logbook plan`: each gets its error code and a message with the remedy.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, EXAMPLES, cli, fileHash, tmpDir } from '../helpers';
import { ORDER, RUN } from './order';

function logbook(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: tmpDir(), encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

describe('rehearse and plan: bad usage', function () {
  this.timeout(120_000);

  it('rehearse: bad flags, a missing script, and a run that cannot finish uncrashed', () => {
    for (const args of [
      ['rehearse'],
      ['rehearse', ORDER, '--points', 'some'],
      ['rehearse', ORDER, '--points', 'all', '--random', '3'],
      ['rehearse', ORDER, '--random', '0'],
      ['rehearse', ORDER, '--jobs', 'many'],
      ['rehearse', ORDER, '--bogus'],
    ]) {
      const r = logbook(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /\[LB_USAGE\].*Usage: logbook rehearse/, args.join(' '));
    }
    const missing = logbook(['rehearse', path.join(EXAMPLES, 'nope.ts')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /\[LB_SCRIPT_NOT_FOUND\]/);
    const badInput = logbook(['rehearse', ORDER, '--input', '{"lines": []}']);
    assert.equal(badInput.status, 2);
    assert.match(badInput.stderr, /\[LB_REHEARSAL_BASELINE\] The uncrashed run of .* did not finish.*LB_INVALID_INPUT.*Make `logbook run/s);
  });

  it('plan: unknown run, bad flags; and it writes nothing to the journal', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', ORDER, '--run-id', RUN]).status, 3);
    const db = path.join(dir, 'journal.db');
    const before = fileHash(db);
    const wal = fs.existsSync(`${db}-wal`) ? fileHash(`${db}-wal`) : '';
    const ok = cli(dir, ['plan', RUN]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /dry run: nothing is executed/);
    assert.match(ok.stdout, /stops +at the approval gate of ship\.create/);
    assert.equal(fileHash(db), before);
    // A read-only open may leave an empty WAL file behind; nothing is written into it.
    if (fs.existsSync(`${db}-wal`)) assert.ok(fs.statSync(`${db}-wal`).size === 0 || fileHash(`${db}-wal`) === wal);
    const unknown = cli(dir, ['plan', 'no-such-run']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /\[LB_RUN_NOT_FOUND\]/);
    const bad = cli(dir, ['plan', RUN, '--frobnicate']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /\[LB_USAGE\].*Usage: logbook plan/);
  });
});
