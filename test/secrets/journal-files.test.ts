// The journal on disk: a folder Logbook creates is private (0700) with a .gitignore of `*`, its files 0600.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime/store';
import { CLI, tmpDir } from '../helpers';
import { VAULT } from './plant';

const mode = (p: string): string => (fs.statSync(p).mode & 0o777).toString(8);

function logbook(cwd: string, args: string[]): void {
  // The usual umask, so a file created without a mode of its own would be world-readable (0644).
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', LOGBOOK_STATE_DIR: cwd };
  delete env.LOGBOOK_JOURNAL;
  const r = spawnSync('/bin/sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, CLI, ...args], { cwd, encoding: 'utf8', env });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
}

describe('secrets: the journal on disk', function () {
  this.timeout(60_000);

  it('creates .logbook private (0700, journal 0600) with a .gitignore of *, so `git add .` publishes nothing of it', () => {
    const project = tmpDir('logbook-secrets-files-');
    const git = (...args: string[]): string => spawnSync('git', args, { cwd: project, encoding: 'utf8' }).stdout;
    git('init', '-q');
    fs.writeFileSync(path.join(project, 'agent.md'), 'the project\n');
    logbook(project, ['run', VAULT, '--run-id', 'on-disk']);
    const folder = path.join(project, '.logbook');
    assert.equal(mode(folder), '700');
    assert.equal(mode(path.join(folder, 'journal.db')), '600');
    assert.match(fs.readFileSync(path.join(folder, '.gitignore'), 'utf8'), /^\*$/m);
    git('add', '.');
    assert.deepEqual(git('diff', '--cached', '--name-only').trim().split('\n'), ['agent.md']);
  });

  it('gives the -wal and -shm files SQLite writes beside a new journal 0600 too', () => {
    const dir = path.join(tmpDir('logbook-secrets-files-'), 'nested', 'journal');
    const saved = process.umask(0o022);
    try {
      const store = openStore(path.join(dir, 'journal.db'));
      try {
        const files = fs.readdirSync(dir).sort();
        assert.deepEqual(files, ['.gitignore', 'journal.db', 'journal.db-shm', 'journal.db-wal']);
        for (const f of files) assert.equal(mode(path.join(dir, f)), '600', f);
        assert.equal(mode(dir), '700');
      } finally {
        store.close();
      }
    } finally {
      process.umask(saved);
    }
  });

  it('leaves a folder that already exists as its owner made it: their .gitignore, their modes', () => {
    const dir = path.join(tmpDir('logbook-secrets-files-'), 'shared');
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, '.gitignore'), 'journal.db-*\n');
    openStore(path.join(dir, 'journal.db')).close();
    assert.equal(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8'), 'journal.db-*\n');
    assert.equal(mode(dir), '755');
    // A new journal in it is still the owner's alone.
    assert.equal(mode(path.join(dir, 'journal.db')), '600');
  });
});
