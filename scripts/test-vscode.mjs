// Runs the extension-host suite (test/vscode) inside a real VS Code: code-server + headless Chromium via the e2e harness.
// On first use the harness installs what it needs into .e2e-tools/ (see scripts/vscode-e2e/setup.mjs).
import * as esbuild from 'esbuild';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'out', 'test', 'vscode');

/** Bundles each test file (and the mocha entry) for the extension host; vscode and mocha come from the host. */
export async function buildSuite(dir = 'test/vscode', outDir = out) {
  fs.rmSync(outDir, { recursive: true, force: true });
  const files = fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.test.ts') || f.endsWith('.scene.ts'));
  await esbuild.build({
    // Flat output: the mocha entry loads every *.test.js / *.scene.js beside it.
    entryPoints: Object.fromEntries([
      ['index', path.join(root, 'test', 'vscode', 'index.ts')],
      ...files.map((f) => [f.replace(/\.ts$/, ''), path.join(root, dir, f)]),
    ]),
    outdir: outDir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  return path.join(outDir, 'index.js');
}

/** A fresh workspace under .tmp/ (so agent scripts resolve zod from the repo), set to run things on this Node. */
export function prepareWorkspace(name = 'vscode-ws', settings = {}) {
  const ws = path.join(root, '.tmp', name);
  fs.rmSync(ws, { recursive: true, force: true });
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.copyFileSync(path.join(root, 'test', 'fixtures', 'ext', 'desk-agent.ts'), path.join(ws, 'agent.ts'));
  fs.writeFileSync(
    path.join(ws, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        'logbook.runtimeExecutable': process.execPath,
        'logbook.journal': '.logbook/journal.db',
        'workbench.startupEditor': 'none',
        'security.workspace.trust.enabled': false,
        ...settings,
      },
      null,
      2,
    ),
  );
  return ws;
}

export function harness(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'vscode-e2e', 'run.mjs'), ...args], { stdio: 'inherit', cwd: root });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!fs.existsSync(path.join(root, 'dist', 'extension.js'))) {
    console.error('[test:vscode] dist/ is not built: run `npm run build` first.');
    process.exit(2);
  }
  const tests = await buildSuite();
  const ws = prepareWorkspace();
  // --prepare-only: the suite and the workspace for another runner (`npm run test:electron`, .vscode-test.mjs).
  if (process.argv.includes('--prepare-only')) process.exit(0);
  const env = {
    LOGBOOK_TEST_NODE: process.execPath,
    LOGBOOK_STATE_DIR: path.join(ws, '.logbook'),
    ...(process.env.LOGBOOK_VSCODE_TESTS ? { LOGBOOK_VSCODE_TESTS: process.env.LOGBOOK_VSCODE_TESTS } : {}),
  };
  const code = await harness(['--ext', root, '--tests', tests, '--workspace', ws, '--env', JSON.stringify(env), '--timeout', '600', ...process.argv.slice(2)]);
  process.exit(code);
}
