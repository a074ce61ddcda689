// Loaded before the mocha suites: the CLI, crash and debugger tests run dist/'s bundles, so a dist/ built before the
// last change to src/ would test old code while the unit tests (which import src/) test the new. Refused, with how.

import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');

function newest(dir: string): { file: string; ms: number } {
  let best = { file: '', ms: 0 };
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const n = e.isDirectory() ? newest(p) : { file: p, ms: fs.statSync(p).mtimeMs };
    if (n.ms > best.ms) best = n;
  }
  return best;
}

/** Undefined when every bundle is newer than every source file; else what is stale, and what to run. */
export function staleBuild(root = ROOT): string | undefined {
  const dist = path.join(root, 'dist');
  const bundles = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => f.endsWith('.js')) : [];
  if (!bundles.length) return 'dist/ has no bundles: run `npm run build`, then the tests.';
  const oldest = Math.min(...bundles.map((f) => fs.statSync(path.join(dist, f)).mtimeMs));
  const src = newest(path.join(root, 'src'));
  if (src.ms <= oldest) return undefined;
  return `dist/ was built before your last change to ${path.relative(root, src.file)}, and the CLI, crash and debugger tests run dist/'s bundles: run \`npm run build\` (or \`node scripts/build.mjs --no-types\`), then the tests.`;
}

const stale = process.env.LOGBOOK_ALLOW_STALE_DIST ? undefined : staleBuild();
if (stale) {
  process.stderr.write(`${stale}\n`);
  process.exit(2);
}
