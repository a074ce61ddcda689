// Writes package.json's activationEvents, capabilities and contributes from src/manifest/contributions.ts (--check: fail on drift).
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = await esbuild.build({
  entryPoints: [join(root, 'src/manifest/contributions.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  write: false,
  logLevel: 'warning',
});
const mod = { exports: {} };
new Function('module', 'exports', 'require', out.outputFiles[0].text)(mod, mod.exports, createRequire(join(root, 'package.json')));
const generated = mod.exports.contributions();
const file = join(root, 'package.json');
const pkg = JSON.parse(readFileSync(file, 'utf8'));
const next = { ...pkg, ...generated };
const text = `${JSON.stringify(next, null, 2)}\n`;
if (process.argv.includes('--check')) {
  if (text !== readFileSync(file, 'utf8')) {
    console.error('package.json is out of date with src/manifest/contributions.ts: run `npm run gen:manifest`.');
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
  console.log('package.json contributions written');
}
