// Regenerates the README screenshots: stages scenes inside a real VS Code (test/vscode-scenes) and photographs each.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openWorkbench } from './vscode-e2e/harness.mjs';
import { buildSuite, prepareWorkspace } from './test-vscode.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'media', 'screenshots');
const SCENES = ['sidebar', 'reconciliation', 'timeline'];

const tests = await buildSuite('test/vscode-scenes', path.join(root, 'out', 'test', 'vscode-scenes'));
const ws = prepareWorkspace('screenshots-ws', { 'workbench.colorTheme': 'Default Dark Modern', 'editor.minimap.enabled': false });
const signals = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-scenes-'));
fs.mkdirSync(outDir, { recursive: true });
const env = { LOGBOOK_REPO_ROOT: root, LOGBOOK_TEST_NODE: process.execPath, LOGBOOK_STATE_DIR: path.join(ws, '.logbook'), LOGBOOK_SCENES_DIR: signals };
const session = await openWorkbench({ ext: root, tests, workspace: ws, env, viewport: { width: 1440, height: 900 } });
/** Drags the sash right of the side bar, so run descriptions (status, attempts, run id) are readable. */
async function widenSidebar(page) {
  const box = await page.locator('.part.sidebar').boundingBox();
  if (!box) return;
  const x = box.x + box.width + 1;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + 300, y, { steps: 10 });
  await page.mouse.up();
  await page.mouse.move(2, box.y + box.height - 2);
  await new Promise((r) => setTimeout(r, 800));
}

let code = 1;
let finished;
session.exitCode.then((c) => (finished = c));
try {
  for (const name of SCENES) {
    const ready = path.join(signals, `${name}.ready`);
    const deadline = Date.now() + 180_000;
    while (!fs.existsSync(ready)) {
      if (Date.now() > deadline || finished !== undefined)
        throw new Error(`scene ${name} was never staged${finished !== undefined ? ` (the scenes ended with ${finished})` : ''}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    if (name === SCENES[0]) await widenSidebar(session.page);
    const file = path.join(outDir, `${name}.png`);
    await session.page.screenshot({ path: file });
    console.log(`[screenshots] ${path.relative(root, file)}`);
    fs.writeFileSync(path.join(signals, `${name}.done`), '');
  }
  code = await session.exitCode;
} catch (e) {
  console.error(`[screenshots] ${e.message}\n${session.diagnostics()}`);
} finally {
  await session.close();
  fs.rmSync(signals, { recursive: true, force: true });
}
process.exit(code);
