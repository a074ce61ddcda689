// `npm run bench:vscode`: activation time and the runs tree on a 10,000-run journal, measured in a real VS Code.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSuite, harness, prepareWorkspace } from './test-vscode.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const tests = await buildSuite('test/vscode-bench', path.join(root, 'out', 'test', 'vscode-bench'));
const ws = prepareWorkspace('bench-ws');
const made = spawnSync(
  process.execPath,
  [path.join(root, 'scripts', 'bench', 'make-journal.mjs'), path.join(ws, '.logbook', 'journal.db'), path.join(ws, 'agent.ts')],
  { stdio: 'inherit' },
);
if (made.status !== 0) process.exit(1);
const env = { LOGBOOK_TEST_NODE: process.execPath, LOGBOOK_STATE_DIR: path.join(ws, '.logbook') };
process.exit(await harness(['--ext', root, '--tests', tests, '--workspace', ws, '--env', JSON.stringify(env), '--timeout', '300']));
