// CLI: run a compiled mocha suite inside a real VS Code extension host (code-server + headless Chromium); exits with its code.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openWorkbench, REPO_ROOT } from './harness.mjs';

const USAGE =
  'usage: node scripts/vscode-e2e/run.mjs --ext <extensionRoot> --tests <compiled mocha index.js> --workspace <folder> [--env JSON] [--screenshot file.png] [--timeout secs] [--verbose]';

function fail(msg) {
  console.error(`[e2e] ${msg}\n${USAGE}`);
  process.exit(2);
}

let opts;
try {
  opts = parseArgs({
    options: {
      ext: { type: 'string' },
      tests: { type: 'string' },
      workspace: { type: 'string' },
      env: { type: 'string' },
      screenshot: { type: 'string' },
      timeout: { type: 'string', default: '600' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
} catch (e) {
  fail(e.message);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
for (const k of ['ext', 'tests', 'workspace']) {
  if (!opts[k]) fail(`--${k} is required`);
  if (!fs.existsSync(opts[k])) fail(`--${k} ${opts[k]} does not exist`);
}
const timeoutSec = Number(opts.timeout);
if (!(timeoutSec > 0)) fail('--timeout must be a positive number of seconds');
let env = {};
try {
  env = opts.env ? JSON.parse(opts.env) : {};
  if (typeof env !== 'object' || env === null || Array.isArray(env)) throw new Error('not an object');
} catch (e) {
  fail(`--env must be a JSON object of strings (${e.message})`);
}
env = { LOGBOOK_REPO_ROOT: REPO_ROOT, ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) };

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
// Last resort if closing itself hangs: exiting runs the harness's exit handler, which kills everything.
setTimeout(
  () => {
    console.error(`[e2e] hard timeout after ${elapsed()}`);
    process.exit(124);
  },
  (timeoutSec + 120) * 1000,
).unref();

let session;
let code;
try {
  session = await openWorkbench({ ext: opts.ext, tests: path.resolve(opts.tests), workspace: opts.workspace, env, verbose: opts.verbose });
  console.log(`[e2e] workbench opened in ${elapsed()}; running ${opts.tests}`);
  let timer;
  code = await Promise.race([
    session.exitCode,
    new Promise((r) => {
      timer = setTimeout(() => r('timeout'), timeoutSec * 1000);
    }),
  ]);
  clearTimeout(timer);
  if (code === 'timeout') {
    console.error(`[e2e] TIMEOUT: the suite did not finish within ${timeoutSec}s`);
    code = 124;
  }
  if (opts.screenshot) {
    await session.page.screenshot({ path: path.resolve(opts.screenshot) }).then(
      () => console.log(`[e2e] screenshot ${opts.screenshot}`),
      (e) => console.error(`[e2e] screenshot failed: ${e.message}`),
    );
  }
  if (session.hiddenLogLines) console.log(`[e2e] ${session.hiddenLogLines} workbench log lines hidden (--verbose shows them)`);
  if (code !== 0) console.error(session.diagnostics());
} catch (e) {
  console.error(`[e2e] harness error: ${e.stack || e.message}`);
  code = 2;
} finally {
  await session?.close();
}
console.log(`[e2e] exit ${code} after ${elapsed()}`);
process.exit(code);
