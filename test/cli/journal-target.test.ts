// Issue 19 case 5: a journal target that is not what it looks like (`postgress://…`, a PostgreSQL URL that does not
// parse) is refused with LB_USAGE through the real CLI, from --journal and from $LOGBOOK_JOURNAL, with nothing written and the
// password never shown.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, tmpDir } from '../helpers';

const knobs = path.join(FIXTURES, 'knobs.ts');

function logbook(dir: string, args: string[], env: Record<string, string> = {}): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, LOGBOOK_STATE_DIR: path.join(dir, 'state'), NO_COLOR: '1', LOGBOOK_JOURNAL: '', ...env },
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, out: r.stdout + r.stderr };
}

/** Every path under `dir`, so a test can say nothing at all was created there. */
function tree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('cli: journal targets that are not what they look like (issue 19 case 5)', function () {
  this.timeout(120_000);

  it('--journal postgress://… (a typo in the scheme): LB_USAGE, exit 2, no file or folder made of the URL, no password shown', () => {
    const dir = tmpDir();
    for (const args of [
      ['run', '--detach', knobs, '--journal', 'postgress://ann:hunter2@db.example/logbook'],
      ['run', knobs, '--journal', 'postgress://ann:hunter2@db.example/logbook'],
      ['ls', '--journal', 'mysql://ann:hunter2@db.example/logbook'],
      ['worker', '--scripts', FIXTURES, '--journal', 'pg://ann:hunter2@db.example/logbook'],
    ]) {
      const r = logbook(dir, args);
      assert.equal(r.status, 2, `${args.join(' ')}\n${r.out}`);
      assert.match(r.out, /\[LB_USAGE\] The journal \S+:\/\/ann:\*\*\*@db\.example\/logbook looks like a URL, but \S+:\/\/ is not a PostgreSQL scheme/);
      assert.match(r.out, /postgres:\/\/user@host:port\/database/, 'the remedy shows the right form');
      assert.doesNotMatch(r.out, /hunter2/, 'the password is never printed');
      assert.doesNotMatch(r.out, /internal error|\n\s+at /, 'no stack');
    }
    assert.match(logbook(dir, ['ls', '--journal', 'postgress://h/db']).out, /Did you mean postgres:\/\/\?/);
    assert.deepEqual(tree(dir), [], 'nothing was written: no folder named after the scheme, none named after the password');
  });

  it('$LOGBOOK_JOURNAL with such a URL is refused the same way', () => {
    const dir = tmpDir();
    const r = logbook(dir, ['run', '--detach', knobs], { LOGBOOK_JOURNAL: 'postgress://ann:hunter2@db.example/logbook' });
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /\[LB_USAGE\].*looks like a URL/);
    assert.doesNotMatch(r.out, /hunter2/);
    assert.deepEqual(tree(dir), []);
  });

  it('a PostgreSQL URL with a raw / or # in its password: LB_USAGE saying to percent-encode, not `internal error PgError: Invalid URL`', () => {
    const dir = tmpDir();
    for (const url of [
      'postgres://ann:hun/ter2@127.0.0.1:1/logbook',
      'postgresql://ann:hun#ter2@127.0.0.1:1/logbook',
      'postgres://ann:9876/hunter2@127.0.0.1/logbook',
    ]) {
      for (const args of [
        ['ls', '--journal', url],
        ['run', '--detach', knobs, '--journal', url],
      ]) {
        const r = logbook(dir, args);
        assert.equal(r.status, 2, `${args.join(' ')}\n${r.out}`);
        assert.match(r.out, /\[LB_USAGE\] The PostgreSQL URL postgres(ql)?:\/\/ann:\*\*\*@127\.0\.0\.1(:1)?\/logbook cannot be used/);
        assert.match(r.out, /must be percent-encoded/);
        assert.match(r.out, /%2F/);
        assert.doesNotMatch(r.out, /hun|ter2|9876/, 'no part of the password is printed');
        assert.doesNotMatch(r.out, /internal error|PgError|Invalid URL|\n\s+at /);
      }
    }
    assert.deepEqual(tree(dir), []);
  });

  it('a path with :// further in, and a Windows-style drive, are still file paths', () => {
    const dir = tmpDir();
    const r = logbook(dir, ['run', knobs, '--journal', 'sub/a://b/journal.db']);
    assert.equal(r.status, 0, r.out);
    assert.ok(fs.existsSync(path.join(dir, 'sub', 'a:', 'b', 'journal.db')));
  });
});
