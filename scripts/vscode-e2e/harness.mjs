// Reusable core of the VS Code e2e harness: a code-server + headless Chromium workbench session that always cleans up.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import util from 'node:util';
import { setup, REPO_ROOT } from './setup.mjs';

export { REPO_ROOT };

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

// Run by Node 24 as the leader of code-server's process group: when the harness goes away, even by SIGKILL,
// its stdin pipe closes and the watchdog kills the whole group.
const WATCHDOG = `
const { spawn } = require('node:child_process');
const kill = () => { try { process.kill(-process.pid, 'SIGKILL'); } catch {} };
const cs = spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
cs.on('exit', (code, sig) => { console.error('[watchdog] code-server exited', code, sig); kill(); });
process.stdin.on('close', kill); process.stdin.on('end', kill); process.stdin.resume();
process.on('SIGTERM', () => { cs.kill('SIGTERM'); setTimeout(kill, 3000).unref(); });
`;

// Workbench chatter that codeAutomationLog also carries (it is the workbench's log, which includes the
// extension host's console): hidden unless verbose. All of it is harmless on an offline machine.
const NOISE = [
  /^\[(AgentHost(:remote)?|ChatModelSelection|AccountPolicyGate|reconnection-grace-time|Service Worker)\]/,
  /^(Creating a socket|Resolving connection token|Resolved connection token|Updating additional builtin extensions cache)/,
  /^Timed out waiting for authentication provider 'github'/,
  /^getaddrinfo ENOTFOUND /,
];

const sessions = new Set(); // sync killers of sessions not closed yet
let handlersInstalled = false;

function installProcessHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const killAll = () => {
    for (const s of sessions) s.killSync();
  };
  process.on('exit', killAll);
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ]) {
    process.on(sig, () => {
      console.error(`[e2e] ${sig}: stopping code-server and chromium`);
      killAll();
      process.exit(code);
    });
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tail = (file, n) => {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '(missing)';
  }
};

function findFiles(dir, test, out = []) {
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) findFiles(p, test, out);
    else if (test(e.name)) out.push(p);
  }
  return out;
}

/** SIGKILLs every process whose command line mentions `needle` (the unique run dir), with its process group. */
function killByCmdline(needle) {
  const pgidOf = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
  const ownPgid = pgidOf('self');
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) continue;
      const pgid = pgidOf(pid);
      process.kill(pgid > 1 && pgid !== ownPgid ? -pgid : Number(pid), 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}

/** Removes run dirs left by harness processes that died by SIGKILL (their children die with them: see WATCHDOG). */
function sweepStaleRunDirs() {
  for (const name of fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('vscode-e2e-'))) {
    const dir = path.join(os.tmpdir(), name);
    let owner;
    try {
      owner = Number(fs.readFileSync(path.join(dir, 'harness.pid'), 'utf8'));
    } catch {
      continue;
    }
    try {
      process.kill(owner, 0);
      continue;
    } catch (e) {
      if (e.code !== 'ESRCH') continue;
    }
    killByCmdline(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Env for children: HOME, XDG_* and TMPDIR inside the run dir; no VS Code variables from a surrounding editor. */
function isolatedEnv(runDir) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VSCODE_') && k !== 'ELECTRON_RUN_AS_NODE'));
  const home = path.join(runDir, 'home');
  const dirs = {
    HOME: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_STATE_HOME: `${home}/.local/state`,
    XDG_RUNTIME_DIR: path.join(runDir, 'xdg-runtime'),
    TMPDIR: path.join(runDir, 'tmp'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  return { ...env, ...dirs };
}

async function startCodeServer(tools, runDir, env, trust = false) {
  const logFile = path.join(runDir, 'code-server.log');
  for (const d of ['user', 'exts']) fs.mkdirSync(path.join(runDir, d), { recursive: true }); // code-server's IPC socket needs user/ up front
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const fd = fs.openSync(logFile, 'a');
    const child = spawn(
      tools.nodeBin,
      [
        '-e',
        WATCHDOG,
        tools.codeServerEntry,
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--auth',
        'none',
        '--disable-telemetry',
        '--disable-update-check',
        ...(trust ? [] : ['--disable-workspace-trust']),
        '--disable-getting-started-override',
        '--user-data-dir',
        path.join(runDir, 'user'),
        '--extensions-dir',
        path.join(runDir, 'exts'),
        '--config',
        path.join(runDir, 'config.yaml'),
        // Without this code-server silently ignores the payload URL parameter and no test ever runs.
        '--vscode-option',
        'enable-smoke-test-driver',
      ],
      { env, cwd: runDir, detached: true, stdio: ['pipe', fd, fd] },
    );
    fs.closeSync(fd);
    let exited = false;
    const exitedP = new Promise((r) =>
      child.once('exit', (code, sig) => {
        exited = true;
        r(code ?? sig);
      }),
    );
    child.stdin.on('error', () => {});
    const deadline = Date.now() + 60_000;
    while (!exited && Date.now() < deadline) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { child, port, logFile, exitedP };
      } catch {
        /* not yet */
      }
      await sleep(200);
    }
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    if (attempt >= 3 || !exited) throw new Error(`code-server did not become healthy on port ${port}\n${tail(logFile, 30)}`);
    await exitedP; // early exit, e.g. the port was taken meanwhile: try another one
  }
}

/**
 * Opens the workbench in headless Chromium with `ext` as development extension and `workspace` as folder.
 * With `trust`, code-server runs with workspace trust on (the workspace starts untrusted, as for a real user).
 * With `tests`, the extension host runs that mocha index and `session.exitCode` resolves with its exit code.
 * Always `await session.close()` (or use withWorkbench); on exit/SIGINT/SIGTERM everything is killed anyway.
 */
export async function openWorkbench({
  ext,
  workspace,
  tests,
  env = {},
  onLog = (line) => console.log(line),
  verbose = false,
  viewport = { width: 1400, height: 900 },
  trust = false,
}) {
  installProcessHandlers();
  const tools = setup({ quiet: true });
  const { chromium } = createRequire(import.meta.url)(tools.playwrightCore);
  sweepStaleRunDirs();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-e2e-'));
  fs.writeFileSync(path.join(runDir, 'harness.pid'), String(process.pid));
  const profile = path.join(runDir, 'chrome');
  let cs = null;
  let context = null;
  let closed = false;
  let closing = false;
  const diagnostics = (n = 40) => {
    const hostLogs = findFiles(path.join(runDir, 'user', 'logs'), (f) => /exthost\.log$|Agent Logbook\.log$/i.test(f));
    return [
      `--- code-server log (last ${n} lines) ---`,
      tail(path.join(runDir, 'code-server.log'), n),
      ...hostLogs.flatMap((f) => [`--- ${path.relative(runDir, f)} (last ${n} lines) ---`, tail(f, n)]),
    ].join('\n');
  };
  const killSync = () => {
    if (closed) return;
    closed = true;
    if (cs)
      try {
        process.kill(-cs.child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    killByCmdline(runDir); // chromium, and crashpad handlers that leave chromium's group
    fs.rmSync(runDir, { recursive: true, force: true });
    sessions.delete(session);
  };
  const close = async () => {
    if (closed) return;
    closing = true;
    if (context) await Promise.race([context.close().catch(() => {}), sleep(10_000)]);
    if (cs) {
      try {
        process.kill(-cs.child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      await Promise.race([cs.exitedP, sleep(5_000)]);
    }
    killSync();
  };
  const session = { runDir, diagnostics, close, killSync, page: null, url: null, exitCode: null, hiddenLogLines: 0 };
  sessions.add(session);
  try {
    const childEnv = isolatedEnv(runDir);
    cs = await startCodeServer(tools, runDir, childEnv, trust);
    const authority = `127.0.0.1:${cs.port}`;
    const payload = [['extensionDevelopmentPath', `vscode-remote://${authority}${path.resolve(ext)}`]];
    if (tests) payload.push(['extensionTestsPath', `vscode-remote://${authority}${path.resolve(tests)}`]);
    payload.push(['extensionEnvironment', JSON.stringify(env)]);
    session.url = `http://${authority}/?folder=${encodeURIComponent(path.resolve(workspace))}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

    context = await chromium.launchPersistentContext(profile, {
      executablePath: tools.chromium,
      headless: true,
      viewport,
      args: CHROMIUM_ARGS,
      env: childEnv,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false, // our handlers clean up
    });
    const page = context.pages()[0] ?? (await context.newPage());
    session.page = page;
    let settle;
    session.exitCode = new Promise((r) => {
      settle = r;
    });
    cs.exitedP.then((c) => {
      if (closing || closed) return;
      onLog(`[e2e] code-server exited unexpectedly (${c})`);
      settle(1);
    });
    page.on('crash', () => {
      onLog('[e2e] page crashed');
      settle(1);
    });
    page.on('pageerror', (e) => verbose && onLog(`[pageerror] ${e.message}`));
    if (verbose) page.on('console', (m) => onLog(`[page:${m.type()}] ${m.text()}`));
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const text = Array.isArray(args) ? util.format(...args) : util.format(args ?? '');
      if (!verbose && (type === 'trace' || type === 'debug' || NOISE.some((re) => re.test(text)))) session.hiddenLogLines++;
      else onLog(text, type);
    });
    await page.exposeFunction('codeAutomationExit', (code) => settle(Number(code)));
    await page.goto(session.url, { waitUntil: 'domcontentloaded' });
    return session;
  } catch (e) {
    const diag = diagnostics(20);
    await close();
    e.message += `\n${diag}`;
    throw e;
  }
}

/** Opens a workbench, runs `callback(page, session)`, and always closes it. Returns the callback's result. */
export async function withWorkbench(options, callback) {
  const session = await openWorkbench(options);
  try {
    return await callback(session.page, session);
  } finally {
    await session.close();
  }
}
