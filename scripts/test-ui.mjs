// Runs the UI suites (test/vscode-ui, then test/vscode-trust with workspace trust on): the extension host asks, and this
// script drives the real workbench with Playwright — keyboard, mouse, menus — through request files in a shared folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openWorkbench } from './vscode-e2e/harness.mjs';
import { buildSuite, prepareWorkspace } from './test-vscode.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A Playwright locator from a request: a CSS selector, or an ARIA role with a name (a regex source). */
function locate(page, q) {
  let loc = q.role ? page.getByRole(q.role, q.name ? { name: new RegExp(q.name, q.flags ?? '') } : {}) : page.locator(q.selector);
  if (q.hasText) loc = loc.filter({ hasText: new RegExp(q.hasText) });
  return loc;
}

/** One UI request from the host: what it asks for, done on the page; the answer goes back as JSON. */
async function perform(page, q) {
  switch (q.op) {
    case 'press':
      for (const key of q.keys) await page.keyboard.press(key);
      return null;
    case 'type':
      await page.keyboard.type(q.text, { delay: 20 });
      return null;
    case 'click': {
      const loc = locate(page, q).first();
      await loc.waitFor({ state: 'visible', timeout: q.timeout ?? 20_000 });
      await loc.click({ button: q.button ?? 'left' });
      return null;
    }
    case 'hover': {
      const loc = locate(page, q).first();
      await loc.waitFor({ state: 'visible', timeout: q.timeout ?? 20_000 });
      await loc.hover();
      return null;
    }
    case 'texts': {
      // Every match's visible text and aria-label, without waiting: the host polls for what it expects.
      return locate(page, q).evaluateAll((els) =>
        els
          .filter((e) => e.offsetParent !== null || e.getClientRects().length > 0)
          .map((e) => ({ text: e.textContent ?? '', label: e.getAttribute('aria-label') ?? '' })),
      );
    }
    case 'screenshot':
      await page.screenshot({ path: q.path });
      return null;
    default:
      throw new Error(`unknown UI request ${q.op}`);
  }
}

/** Serves the host's requests until the suite ends. */
async function serve(session, dir) {
  let finished;
  session.exitCode.then((c) => (finished = c));
  while (finished === undefined) {
    const reqs = fs.readdirSync(dir).filter((f) => f.startsWith('req-') && f.endsWith('.json'));
    for (const f of reqs) {
      const file = path.join(dir, f);
      const q = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.rmSync(file);
      let answer;
      try {
        answer = { ok: true, value: await perform(session.page, q) };
      } catch (e) {
        answer = { ok: false, error: e.message.split('\n').slice(0, 6).join('\n') };
      }
      const out = path.join(dir, f.replace('req-', 'res-'));
      fs.writeFileSync(`${out}.tmp`, JSON.stringify(answer));
      fs.renameSync(`${out}.tmp`, out);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return finished;
}

async function suite(dir, { trust }) {
  const tests = await buildSuite(dir, path.join(root, 'out', dir));
  const ws = prepareWorkspace(`${path.basename(dir)}-ws`, trust ? { 'security.workspace.trust.enabled': true } : {});
  const signals = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-ui-'));
  const env = {
    LOGBOOK_REPO_ROOT: root,
    LOGBOOK_TEST_NODE: process.execPath,
    LOGBOOK_STATE_DIR: path.join(ws, '.logbook'),
    LOGBOOK_UI_DIR: signals,
    ...(process.env.LOGBOOK_VSCODE_TESTS ? { LOGBOOK_VSCODE_TESTS: process.env.LOGBOOK_VSCODE_TESTS } : {}),
    ...(process.env.LOGBOOK_UI_SHOTS ? { LOGBOOK_UI_SHOTS: process.env.LOGBOOK_UI_SHOTS } : {}),
  };
  // The suite's own lines are kept, so that a failure's mocha report can be printed again after the diagnostics: CI
  // shows only the end of its output, and the logs printed on failure pushed the failing test out of it.
  const lines = [];
  const onLog = (line) => {
    console.log(line);
    lines.push(String(line));
  };
  const session = await openWorkbench({ ext: root, tests, workspace: ws, env, trust, onLog });
  try {
    const code = await Promise.race([serve(session, signals), new Promise((r) => setTimeout(() => r('timeout'), 900_000))]);
    if (code !== 0) {
      console.error(`[ui] ${dir} ended with ${code}`);
      await session.page.screenshot({ path: path.join(root, '.tmp', `${path.basename(dir)}-failure.png`) }).catch(() => {});
      console.error(session.diagnostics());
      const from = lines.findIndex((l) => /^\s*\d+ failing/.test(l));
      failures.push(`[ui] ${dir} ended with ${code}${from >= 0 ? `; mocha's failures:\n${lines.slice(from, from + 80).join('\n')}` : ''}`);
    }
    return code === 0 ? 0 : 1;
  } finally {
    await session.close();
    fs.rmSync(signals, { recursive: true, force: true });
  }
}

if (!fs.existsSync(path.join(root, 'dist', 'extension.js'))) {
  console.error('[ui] dist/ is not built: run `npm run build` first.');
  process.exit(2);
}
const only = process.argv[2];
/** Each failed suite's mocha report, printed again at the very end, below every log. */
const failures = [];
let code = 0;
// Both suites run even when the first fails: each says something the other does not.
if (!only || only === 'ui') code = Math.max(code, await suite('test/vscode-ui', { trust: false }));
if (!only || only === 'trust') code = Math.max(code, await suite('test/vscode-trust', { trust: true }));
for (const f of failures) console.error(f);
process.exit(code);
