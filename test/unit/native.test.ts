// A packaged install picks its SQLite build by Node ABI; with none for this Node it names the Node and the fix.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

describe('shipped native builds', () => {
  // Under the repo, so the copied bundle still resolves better-sqlite3's JavaScript from node_modules.
  const dir = path.join(ROOT, '.tmp', `native-test-${process.pid}`);
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function packagedCli(abiDirs: Record<string, string | null>): string {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'dist', 'cli.js'), path.join(dir, 'dist', 'cli.js'));
    for (const [name, from] of Object.entries(abiDirs)) {
      fs.mkdirSync(path.join(dir, 'dist', 'native', name), { recursive: true });
      if (from) fs.copyFileSync(from, path.join(dir, 'dist', 'native', name, 'better_sqlite3.node'));
    }
    return path.join(dir, 'dist', 'cli.js');
  }

  it('refuses a Node it has no build for, naming that Node and what to set', () => {
    const cli = packagedCli({ 'node-v1-linux-x64': null });
    const r = spawnSync(process.execPath, [cli, 'delete', 'x', '--journal', path.join(dir, 'j.db')], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /LB_NATIVE_UNSUPPORTED/);
    assert.ok(r.stderr.includes(`Node ${process.version} (ABI ${process.versions.modules}`), r.stderr);
    assert.match(r.stderr, /logbook\.runtimeExecutable/);
  });

  it("loads the build in node-v<ABI>-<platform>-<arch> through better-sqlite3's nativeBinding", () => {
    const own = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    const cli = packagedCli({ [`node-v${process.versions.modules}-${process.platform}-${process.arch}`]: own, 'node-v1-linux-x64': null });
    const db = path.join(dir, 'j.db');
    const r = spawnSync(process.execPath, [cli, 'delete', 'nope', '--journal', db], { encoding: 'utf8' });
    // The journal opened (and was created): the failure is the missing run, not SQLite.
    assert.equal(r.status, 2);
    assert.match(r.stderr, /LB_RUN_NOT_FOUND/);
    assert.ok(fs.existsSync(db));
    // And it is that file that loads: a damaged one in its place fails, though node_modules has a good build.
    fs.writeFileSync(
      path.join(dir, 'dist', 'native', `node-v${process.versions.modules}-${process.platform}-${process.arch}`, 'better_sqlite3.node'),
      'not a shared object',
    );
    const bad = spawnSync(process.execPath, [cli, 'delete', 'nope', '--journal', db], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /LB_NATIVE_UNSUPPORTED.*(invalid ELF|too short|ERR_DLOPEN)/s);
  });
});
