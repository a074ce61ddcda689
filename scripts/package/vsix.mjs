// `npm run package`: stages a lean copy of the extension (bundles, media, example, production dependencies and
// better-sqlite3 builds for Node 20/22/24) and packs it with @vscode/vsce into agent-logbook-<version>.vsix.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { placeAll } from './native.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
export const vsixPath = path.join(root, `${pkg.name}-${pkg.version}.vsix`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/** Production dependencies, transitively, as they are installed in node_modules. */
function productionPackages() {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    const dir = path.join(root, 'node_modules', name);
    if (!fs.existsSync(path.join(dir, 'package.json'))) return; // an optional dependency for another platform
    seen.add(name);
    const p = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const d of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) visit(d);
  };
  for (const d of Object.keys(pkg.dependencies)) visit(d);
  return [...seen].sort();
}

/** What a package needs at run time; better-sqlite3's sources and its own build stay out (dist/native has ours). */
const SKIP = { 'better-sqlite3': new Set(['build', 'deps', 'src', 'binding.gyp']) };

/**
 * The README as packaged: relative images and links point into the repository, which the VSIX has no address for
 * (vsce refuses to pack them), so they become plain text naming the file.
 */
export function packagedReadme(text) {
  return text
    .replace(/!\[([^\]]*)\]\((?![a-z]+:|#)([^)]+)\)/g, '*$1 (in the repository: `$2`)*')
    .replace(/\[([^\]]+)\]\((?![a-z]+:|#)([^)]+)\)/g, '$1 (`$2`)');
}

export function stage() {
  const dir = path.join(root, '.tmp', 'vsix-stage');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const manifest = { ...pkg };
  delete manifest.devDependencies;
  manifest.scripts = {};
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const f of ['LICENSE', 'CHANGELOG.md']) if (fs.existsSync(path.join(root, f))) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'README.md'), packagedReadme(fs.readFileSync(path.join(root, 'README.md'), 'utf8')));
  fs.cpSync(path.join(root, 'media'), path.join(dir, 'media'), { recursive: true, filter: (s) => !s.includes(`${path.sep}screenshots`) });
  fs.cpSync(path.join(root, 'examples'), path.join(dir, 'examples'), { recursive: true });
  fs.cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true, filter: (s) => !s.endsWith('.map') && !s.includes(`${path.sep}native`) });
  for (const name of productionPackages()) {
    const from = path.join(root, 'node_modules', name);
    const skip = SKIP[name];
    fs.cpSync(from, path.join(dir, 'node_modules', name), { recursive: true, dereference: true, filter: (s) => !skip || !skip.has(path.relative(from, s).split(path.sep)[0]) });
  }
  const built = placeAll(path.join(dir, 'dist'));
  fs.writeFileSync(path.join(dir, '.vscodeignore'), ['**/*.map', '**/*.tsbuildinfo', 'node_modules/**/test/**', 'node_modules/**/*.md', '!README.md', 'node_modules/**/*.d.ts', '!dist/types/**', 'node_modules/zod/src/**', 'node_modules/zod/**/*.d.cts', ''].join('\n'));
  return { dir, built };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  run(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root });
  const { dir, built } = stage();
  fs.rmSync(vsixPath, { force: true });
  const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  run(process.execPath, [vsce, 'package', '--allow-missing-repository', '--skip-license', '--allow-star-activation', '-o', vsixPath], { cwd: dir });
  const mb = (fs.statSync(vsixPath).size / 1024 / 1024).toFixed(1);
  console.log(`[package] ${path.relative(root, vsixPath)} (${mb} MB) with SQLite builds for ${built.map((b) => `Node ${b.major} (ABI ${b.abi})`).join(', ')}`);
}
