// .vscode-test.mjs (the @vscode/test-cli route, `npm run test:electron`) resolves to the suite, the extension and the
// workspace that the code-server route runs. It needs VS Code's download server, so here it is resolved, not run.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { ROOT } from '../helpers';

interface Prepared {
  path: string;
  config: { label: string; version: string; launchArgs: string[]; mocha: { ui: string } };
  extensionTestsPath: string;
  extensionDevelopmentPath: string[];
  env: Record<string, string> & { VSCODE_TEST_OPTIONS: string };
}

function run(args: string[]): string {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

describe('the @vscode/test-cli configuration (.vscode-test.mjs)', () => {
  it('resolves to the built extension-host suite, this extension and a prepared workspace, without downloading VS Code', () => {
    const downloads = path.join(ROOT, '.vscode-test');
    const hadDownloads = fs.existsSync(downloads);
    run([path.join(ROOT, 'scripts', 'test-vscode.mjs'), '--prepare-only']);
    // --list-configuration: test-cli loads the config, gathers the files and resolves every path, then stops.
    const listed = JSON.parse(run([path.join(ROOT, 'node_modules', '@vscode', 'test-cli', 'out', 'bin.mjs'), '--list-configuration'])) as Prepared[];
    assert.equal(listed.length, 1);
    const [c] = listed as [Prepared];
    assert.equal(c.path, path.join(ROOT, '.vscode-test.mjs'));
    assert.equal(c.config.label, 'extension-host');
    assert.equal(c.config.mocha.ui, 'bdd', 'the suite is written with describe/it');

    const options = JSON.parse(c.env.VSCODE_TEST_OPTIONS) as { files: string[] };
    const sources = fs
      .readdirSync(path.join(ROOT, 'test', 'vscode'))
      .filter((f) => f.endsWith('.test.ts'))
      .sort();
    assert.ok(sources.length >= 4);
    assert.deepEqual(
      options.files,
      sources.map((f) => path.join(ROOT, 'out', 'test', 'vscode', f.replace(/\.ts$/, '.js'))),
      'every suite file, in name order',
    );
    for (const f of options.files) assert.ok(fs.statSync(f).size > 0, `${f} is built`);

    assert.deepEqual(c.extensionDevelopmentPath, [ROOT]);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string> };
    assert.ok(fs.existsSync(path.join(ROOT, manifest.main)), 'the extension entry is built');
    assert.ok(fs.existsSync(c.extensionTestsPath), 'test-cli ships its runner');
    assert.match(manifest.scripts['test:electron'] ?? '', /test-vscode\.mjs --prepare-only && vscode-test$/);

    const ws = c.config.launchArgs.at(-1) ?? '';
    assert.equal(ws, path.join(ROOT, '.tmp', 'vscode-ws'));
    const settings = JSON.parse(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8')) as Record<string, string>;
    assert.equal(settings['logbook.runtimeExecutable'], process.execPath, 'the journal opens on a Node, never in Electron');
    assert.ok(fs.existsSync(path.join(ws, 'agent.ts')));
    assert.equal(c.env.LOGBOOK_REPO_ROOT, ROOT, 'test/vscode/index.ts and helpers find the repository by it');
    assert.equal(c.env.LOGBOOK_STATE_DIR, path.join(ws, '.logbook'));

    // The runner it hands over to: @vscode/test-electron, installed and exporting runTests.
    const electron = createRequire(path.join(ROOT, 'package.json'))('@vscode/test-electron') as { runTests?: unknown };
    assert.equal(typeof electron.runTests, 'function');
    assert.equal(fs.existsSync(downloads), hadDownloads, 'nothing was downloaded');
  });
});
