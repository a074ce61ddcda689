// Example reuse of the harness: open the workbench with an extension and a folder, take one screenshot, close.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { withWorkbench } from './harness.mjs';

const { values: o } = parseArgs({
  options: {
    ext: { type: 'string' },
    workspace: { type: 'string' },
    out: { type: 'string', default: 'workbench.png' },
    settle: { type: 'string', default: '5' }, // seconds to let extensions activate and views render
  },
});
if (!o.ext || !o.workspace) {
  console.error('usage: node scripts/vscode-e2e/screenshot.mjs --ext <extensionRoot> --workspace <folder> [--out file.png] [--settle secs]');
  process.exit(2);
}

try {
  await withWorkbench({ ext: o.ext, workspace: o.workspace }, async (page) => {
    await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 120_000 });
    await page.waitForTimeout(Number(o.settle) * 1000);
    await page.screenshot({ path: path.resolve(o.out) });
  });
  console.log(`[e2e] screenshot ${o.out}`);
} catch (e) {
  console.error(`[e2e] screenshot failed: ${e.message}`);
  process.exit(1);
}
