// Mocha hooks around a private, real PostgreSQL server (scripts/pg-server.mjs): one per suite, a fresh database per use.

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

interface ServerHandle {
  readonly dir: string;
  readonly data: string;
  readonly port: number;
  readonly url: string;
  readonly log: string;
  start(): void;
  stop(mode?: 'fast' | 'immediate' | 'smart'): void;
  restartImmediate(): void;
  destroy(): void;
}

interface PgServerModule {
  startServer(opts?: { dir?: string; port?: number; maxConnections?: number }): Promise<ServerHandle>;
  pgBinDir(): string | undefined;
}

const loadHarness = (): Promise<PgServerModule> => import(path.join(__dirname, '..', '..', 'scripts', 'pg-server.mjs')) as Promise<PgServerModule>;

export interface PgServer extends ServerHandle {
  /** A new, empty database on this server; its connection string. */
  createDatabase(name?: string): string;
  /** Runs SQL with psql and returns its unaligned, tuples-only output. */
  psql(sql: string, database?: string): string;
}

let counter = 0;

export async function startPgServer(opts: { maxConnections?: number } = {}): Promise<PgServer> {
  const harness = await loadHarness();
  const handle = await harness.startServer(opts);
  const bin = harness.pgBinDir();
  if (!bin) throw new Error('PostgreSQL binaries vanished after the server started.');
  const psql = (sql: string, database = 'postgres'): string => {
    const r = spawnSync(
      path.join(bin, 'psql'),
      ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(handle.port), '-U', 'postgres', '-d', database, '-c', sql],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`psql failed (exit ${r.status}): ${r.stderr.trim()}`);
    return r.stdout.trim();
  };
  return {
    ...handle,
    start: () => handle.start(),
    stop: (mode) => handle.stop(mode),
    restartImmediate: () => handle.restartImmediate(),
    destroy: () => handle.destroy(),
    psql,
    createDatabase: (name) => {
      const db = name ?? `t${process.pid}_${++counter}`;
      psql(`CREATE DATABASE "${db}"`);
      return handle.url.replace(/\/postgres$/, `/${db}`);
    },
  };
}

/** Registers before/after hooks: a server for the enclosing suite, stopped and deleted afterwards. */
export function usePgServer(opts: { maxConnections?: number } = {}): { readonly server: PgServer } {
  const holder: { server?: PgServer } = {};
  before(async function () {
    this.timeout(180_000);
    holder.server = await startPgServer(opts);
  });
  after(() => {
    holder.server?.destroy();
  });
  return {
    get server(): PgServer {
      if (!holder.server) throw new Error('The PostgreSQL server is not started: use the value inside a test or hook.');
      return holder.server;
    },
  };
}
