// @vscode/test-cli configuration: the extension-host suite (test/vscode) in a desktop VS Code that
// @vscode/test-electron downloads. `npm run test:electron` builds the suite and the workspace, then runs this.
// CI here has no route to VS Code's download server, so `npm test` runs the same suite in code-server instead
// (scripts/test-vscode.mjs); test/unit/vscode-test-config.test.ts checks this file resolves, without running it.
import { defineConfig } from '@vscode/test-cli';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const workspace = path.join(root, '.tmp', 'vscode-ws');
// In name order, as test/vscode/index.ts loads them for code-server: the suite's files build on each other's state.
const files = fs
  .readdirSync(path.join(root, 'test', 'vscode'))
  .filter((f) => f.endsWith('.test.ts'))
  .sort()
  .map((f) => `out/test/vscode/${f.replace(/\.ts$/, '.js')}`);

export default defineConfig([
  {
    label: 'extension-host',
    // Bundled by scripts/test-vscode.mjs (buildSuite) from test/vscode/*.test.ts; vscode and mocha come from the host.
    files,
    extensionDevelopmentPath: root,
    workspaceFolder: workspace,
    version: 'stable',
    mocha: { ui: 'bdd', timeout: 90_000, color: true },
    // The journal is opened by a reader on this Node (the workspace's logbook.runtimeExecutable), never by Electron.
    env: { LOGBOOK_REPO_ROOT: root, LOGBOOK_TEST_NODE: process.execPath, LOGBOOK_STATE_DIR: path.join(workspace, '.logbook'), NO_COLOR: '1' },
    launchArgs: ['--disable-extensions', '--disable-workspace-trust'],
  },
]);
