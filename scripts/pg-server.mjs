// A private, real PostgreSQL server for tests, benchmarks and trying the worker: initdb in a temp dir, fsync=on, its own port and socket.
//
//   node scripts/pg-server.mjs start [--dir DIR] [--port N]   prints the connection string; the server keeps running
//   node scripts/pg-server.mjs stop  [--dir DIR]
//   node scripts/pg-server.mjs ensure                          installs Debian's postgresql if missing (root)
//
// Debian's `postgresql` package provides the binaries (installed with apt when missing and running as root, like the
// VS Code tests' Chromium). PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user.

import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_DIR = path.join(os.tmpdir(), 'logbook-pg');
const isRoot = () => process.getuid?.() === 0;

/** The directory holding initdb and pg_ctl: $LOGBOOK_PG_BIN, else the newest /usr/lib/postgresql/N/bin, else PATH. */
export function pgBinDir() {
  if (process.env.LOGBOOK_PG_BIN) return process.env.LOGBOOK_PG_BIN;
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) {
    const versions = fs
      .readdirSync(base)
      .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? path.dirname(found) : undefined;
}

/** Installs Debian's postgresql when its binaries are missing (root only); otherwise says how. */
export function ensurePostgres() {
  const bin = pgBinDir();
  if (bin) return bin;
  if (!isRoot()) {
    throw new Error(
      'PostgreSQL is not installed (no initdb found). Install it: `sudo apt-get install -y postgresql`, or set LOGBOOK_PG_BIN to the folder holding initdb and pg_ctl.',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql'], { stdio: 'inherit', env });
  const after = pgBinDir();
  if (!after) throw new Error('apt-get installed postgresql but no initdb was found under /usr/lib/postgresql; set LOGBOOK_PG_BIN.');
  return after;
}

export async function freePort() {
  return await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Runs a PostgreSQL binary as the server's owner: the `postgres` user under root, else the current user. */
function asOwner(bin, file, args, opts = {}) {
  const cmd = path.join(bin, file);
  const [exe, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(exe, argv, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  return r.stdout;
}

function chownToOwner(dir) {
  if (isRoot()) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
}

const stateFile = (dir) => path.join(dir, 'server.json');

/**
 * Starts a server in `dir` (created, or reused if it holds a data directory) and waits until it accepts connections.
 * Returns its connection string and the handles to stop or crash-restart it.
 */
export async function startServer(opts = {}) {
  const bin = ensurePostgres();
  const dir = opts.dir ? path.resolve(opts.dir) : fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-pg-'));
  fs.mkdirSync(dir, { recursive: true });
  // The postgres user must reach the folder: temp dirs are 0700 and owned by root.
  fs.chmodSync(dir, 0o755);
  const data = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  fs.mkdirSync(socketDir, { recursive: true });
  chownToOwner(dir);
  if (!fs.existsSync(path.join(data, 'PG_VERSION'))) {
    asOwner(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-instructions']);
  }
  const port = opts.port ?? (await freePort());
  const settings = [
    `-p ${port}`,
    `-k ${socketDir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=on',
    '-c synchronous_commit=on',
    '-c full_page_writes=on',
    `-c max_connections=${opts.maxConnections ?? 200}`,
    '-c shared_buffers=32MB',
  ].join(' ');
  const log = path.join(dir, 'server.log');
  const handle = {
    dir,
    data,
    port,
    socketDir,
    log,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** Starts the (stopped) server again on the same port and data directory. */
    start: () => {
      asOwner(bin, 'pg_ctl', ['-D', data, '-l', log, '-o', settings, '-w', '-t', '60', 'start']);
    },
    /** Stops it: `fast` rolls back sessions and checkpoints; `immediate` is a crash (recovery on the next start). */
    stop: (mode = 'fast') => {
      if (fs.existsSync(path.join(data, 'postmaster.pid'))) asOwner(bin, 'pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    /** A crash and a restart: `pg_ctl -m immediate stop`, then start. */
    restartImmediate: () => {
      handle.stop('immediate');
      handle.start();
    },
    /** Stops the server and deletes its folder. */
    destroy: () => {
      try {
        handle.stop('immediate');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  handle.start();
  fs.writeFileSync(stateFile(dir), JSON.stringify({ url: handle.url, port, data }, null, 2));
  return handle;
}

/** Stops the server a previous `start` left in `dir`. */
export function stopServer(dir) {
  const bin = ensurePostgres();
  const data = path.join(path.resolve(dir), 'data');
  if (!fs.existsSync(path.join(data, 'postmaster.pid'))) return false;
  asOwner(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  return true;
}

async function main(argv) {
  const [cmd, ...rest] = argv;
  const opt = (name) => {
    const i = rest.indexOf(name);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  const dir = opt('--dir') ?? DEFAULT_DIR;
  if (cmd === 'ensure') {
    process.stdout.write(`PostgreSQL binaries: ${ensurePostgres()}\n`);
  } else if (cmd === 'start') {
    // A fixed default port, so the documented connection string stays the same between tries.
    const s = await startServer({ dir, port: Number(opt('--port') ?? 54329) });
    process.stdout.write(
      `PostgreSQL is running (data in ${s.data}, log ${s.log}).\nexport LOGBOOK_JOURNAL=${s.url}\nStop it with: node scripts/pg-server.mjs stop --dir ${dir}\n`,
    );
  } else if (cmd === 'stop') {
    process.stdout.write(stopServer(dir) ? `Stopped the server in ${dir}.\n` : `No server is running in ${dir}.\n`);
  } else {
    process.stderr.write('usage: node scripts/pg-server.mjs ensure|start|stop [--dir DIR] [--port N]\n');
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
