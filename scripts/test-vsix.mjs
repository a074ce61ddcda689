// Packs the linux-x64 VSIX, checks what it holds (test/package/vsix.contents.ts), installs it with code-server's own
// installer, and runs test/vscode-vsix inside that installed copy.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setup } from './vscode-e2e/setup.mjs';
import { NODES, nodePackage } from './package/native.mjs';
import { DEFAULT_TARGET, packageTarget } from './package/vsix.mjs';
import { buildSuite, harness, prepareWorkspace } from './test-vscode.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

const step = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

const { file: vsix, dir: staged } = await packageTarget(DEFAULT_TARGET);
step(
  process.execPath,
  [
    path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'),
    '--no-config',
    '-r',
    'tsx/cjs',
    '--timeout',
    '120000',
    path.join(root, 'test', 'package', 'vsix.contents.ts'),
  ],
  {
    env: { ...process.env, LOGBOOK_VSIX: vsix, LOGBOOK_VSIX_STAGE: staged, LOGBOOK_VSIX_TARGET: DEFAULT_TARGET },
  },
);
const tools = setup({ quiet: true });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-vsix-'));
try {
  const exts = path.join(dir, 'exts');
  step(tools.nodeBin, [tools.codeServerEntry, '--user-data-dir', path.join(dir, 'user'), '--extensions-dir', exts, '--install-extension', vsix], {
    env: { ...process.env, HOME: dir },
  });
  // A platform-specific extension installs to <publisher>.<name>-<version>[-<target>].
  const prefix = `${pkg.publisher}.${pkg.name}-${pkg.version}`;
  const folder = fs.existsSync(exts) ? fs.readdirSync(exts).find((f) => f === prefix || f === `${prefix}-${DEFAULT_TARGET}`) : undefined;
  const installed = path.join(exts, folder ?? prefix);
  if (!fs.existsSync(path.join(installed, 'package.json'))) throw new Error(`the VSIX did not install to ${installed}`);
  const nodes = Object.fromEntries(Object.entries(NODES).map(([major, version]) => [major, path.join(nodePackage(version), 'bin', 'node')]));
  const tests = await buildSuite('test/vscode-vsix', path.join(root, 'out', 'test', 'vscode-vsix'));
  // The reader and the debugger run on Node 24 here: the shipped ABI 137 build, not the checkout's Node 20 one.
  const ws = prepareWorkspace('vsix-ws', { 'logbook.runtimeExecutable': nodes['24'] });
  const env = {
    LOGBOOK_TEST_NODE: nodes['24'],
    LOGBOOK_STATE_DIR: path.join(ws, '.logbook'),
    LOGBOOK_VSIX_DIR: installed,
    LOGBOOK_VSIX_NODES: JSON.stringify(nodes),
  };
  const code = await harness(['--ext', installed, '--tests', tests, '--workspace', ws, '--env', JSON.stringify(env), '--timeout', '300']);
  process.exitCode = code;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
