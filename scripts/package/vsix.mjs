// `npm run package [-- --target T]`: stages a lean copy of the extension (bundles, media, examples, production
// dependencies, and better-sqlite3 builds for Node 20/22/24 and esbuild's binary for that target) and packs it with
// @vscode/vsce into a per-platform agent-logbook-<target>-<version>.vsix. Default target: linux-x64.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TARGETS, placeAll } from './native.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
export const DEFAULT_TARGET = 'linux-x64';
export const vsixPath = (target = DEFAULT_TARGET) => path.join(root, `${pkg.name}-${target}-${pkg.version}.vsix`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/**
 * Dependencies used only while npm installs a package: better-sqlite3 fetches its binary with prebuild-install. They
 * are staged (vsce checks the tree with `npm list`) but left out of the VSIX by .vscodeignore.
 */
const INSTALL_ONLY = new Set(['prebuild-install']);

/** Production dependencies, transitively, as they are installed in node_modules (esbuild's binary is per target). */
function productionPackages(skip = new Set()) {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    const dir = path.join(root, 'node_modules', name);
    if (!fs.existsSync(path.join(dir, 'package.json'))) return; // an optional dependency for another platform
    if (name.startsWith('@esbuild/')) return; // added per target by esbuildFor()
    if (skip.has(name)) return;
    seen.add(name);
    const p = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const d of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) visit(d);
  };
  // zod: not a dependency of the package (the bundles carry zod/mini), but the VSIX's example agents import it.
  for (const d of [...Object.keys(pkg.dependencies), 'zod']) visit(d);
  return [...seen].sort();
}

/** What a package needs at run time; better-sqlite3's sources and its own build stay out (dist/native has ours). */
const SKIP = { 'better-sqlite3': new Set(['build', 'deps', 'src', 'binding.gyp']), esbuild: new Set(['bin']) };

/** esbuild's native binary package for a target (@esbuild/<platform>-<arch>): this machine's install, or the registry's. */
function esbuildFor(target, stageModules) {
  const esbuildVersion = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8')).version;
  const name = `@esbuild/${target}`;
  const dest = path.join(stageModules, name);
  const local = path.join(root, 'node_modules', name);
  if (fs.existsSync(path.join(local, 'package.json')) && JSON.parse(fs.readFileSync(path.join(local, 'package.json'), 'utf8')).version === esbuildVersion) {
    fs.cpSync(local, dest, { recursive: true, dereference: true });
    return;
  }
  const tmp = fs.mkdtempSync(path.join(root, '.tmp', 'esbuild-'));
  try {
    const r = spawnSync('npm', ['pack', `${name}@${esbuildVersion}`, '--silent'], { cwd: tmp, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm pack ${name}@${esbuildVersion} failed: ${r.stderr}`);
    fs.mkdirSync(dest, { recursive: true });
    run('tar', ['-xzf', r.stdout.trim(), '-C', dest, '--strip-components=1'], { cwd: tmp });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The README as packaged: relative images and links point into the repository, which the VSIX has no address for
 * (vsce refuses to pack them), so they become plain text naming the file.
 */
export function packagedReadme(text) {
  return text.replace(/!\[([^\]]*)\]\((?![a-z]+:|#)([^)]+)\)/g, '*$1 (in the repository: `$2`)*').replace(/\[([^\]]+)\]\((?![a-z]+:|#)([^)]+)\)/g, '$1 (`$2`)');
}

export async function stage(target = DEFAULT_TARGET) {
  const dir = path.join(root, '.tmp', 'vsix-stage');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const manifest = { ...pkg };
  delete manifest.devDependencies;
  // `files` is the npm package's list; vsce refuses it next to the .vscodeignore written below.
  delete manifest.files;
  manifest.scripts = {};
  // The VSIX's example agents import zod; declared here so the staged tree is what `npm list` expects.
  manifest.dependencies = { ...manifest.dependencies, zod: pkg.devDependencies.zod };
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const f of ['LICENSE', 'CHANGELOG.md']) if (fs.existsSync(path.join(root, f))) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'README.md'), packagedReadme(fs.readFileSync(path.join(root, 'README.md'), 'utf8')));
  fs.cpSync(path.join(root, 'media'), path.join(dir, 'media'), { recursive: true, filter: (s) => !s.includes(`${path.sep}screenshots`) });
  fs.cpSync(path.join(root, 'examples'), path.join(dir, 'examples'), { recursive: true });
  fs.cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true, filter: (s) => !s.endsWith('.map') && !s.includes(`${path.sep}native`) });
  const staged = productionPackages();
  const running = new Set(productionPackages(INSTALL_ONLY));
  const installOnly = staged.filter((n) => !running.has(n)).map((n) => `node_modules/${n}/**`);
  for (const name of staged) {
    const from = path.join(root, 'node_modules', name);
    const skip = SKIP[name];
    fs.cpSync(from, path.join(dir, 'node_modules', name), {
      recursive: true,
      dereference: true,
      filter: (s) => !skip || !skip.has(path.relative(from, s).split(path.sep)[0]),
    });
  }
  esbuildFor(target, path.join(dir, 'node_modules'));
  const built = await placeAll(path.join(dir, 'dist'), target);
  fs.writeFileSync(
    path.join(dir, '.vscodeignore'),
    [
      '**/*.map',
      '**/*.tsbuildinfo',
      'node_modules/**/test/**',
      'node_modules/**/*.md',
      '!README.md',
      'node_modules/**/*.d.ts',
      '!dist/types/**',
      'node_modules/zod/src/**',
      'node_modules/zod/v3/**',
      ...installOnly,
      'node_modules/zod/**/*.d.cts',
      '',
    ].join('\n'),
  );
  return { dir, built };
}

const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');

/** What `vsce ls` says the staged extension would pack, one path a line. */
export function vsceList(dir) {
  const r = spawnSync(process.execPath, [vsce, 'ls'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vsce ls failed: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean);
}

/** Builds dist/, stages and packs one target; returns { file, dir, built }. */
export async function packageTarget(target = DEFAULT_TARGET) {
  if (!TARGETS[target]) throw new Error(`unknown target ${target}; known: ${Object.keys(TARGETS).join(', ')}`);
  run(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root });
  const { dir, built } = await stage(target);
  const file = vsixPath(target);
  fs.rmSync(file, { force: true });
  run(process.execPath, [vsce, 'package', '--target', target, '--allow-missing-repository', '--allow-star-activation', '-o', file], { cwd: dir });
  const mb = (fs.statSync(file).size / 1024 / 1024).toFixed(1);
  console.log(
    `[package] ${path.relative(root, file)} (${mb} MB) with SQLite builds for ${built.map((b) => `Node ${b.major} (ABI ${b.abi})`).join(', ')} (${TARGETS[target].how})`,
  );
  return { file, dir, built };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--target');
  const targets = at > 0 ? (process.argv[at + 1] === 'all' ? Object.keys(TARGETS) : [process.argv[at + 1]]) : [DEFAULT_TARGET];
  try {
    for (const t of targets) await packageTarget(t);
  } catch (err) {
    console.error(`[package] FAILED: ${err.message}`);
    process.exitCode = 1;
  }
}
