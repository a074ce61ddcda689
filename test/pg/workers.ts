// Test helpers for `logbook worker`: real worker processes on a shared journal, the provider's ledger, waiting for states.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES } from '../helpers';
import { openStore, type Store } from '../../src/runtime/store';
import { enqueueRun } from '../../src/runtime/store/queue';
import { loadScript } from '../../src/loader/loadScript';
import { dbOf } from '../../src/runtime/store/db';

export const WORKER_SCRIPTS = path.join(FIXTURES, 'workers');
export const LEDGER_SCRIPT = path.join(WORKER_SCRIPTS, 'ledger.ts');
/** Short enough that a takeover is quick, long enough that a busy machine still renews in time (renewal at a third). */
export const TTL_MS = 2000;

export interface Env {
  /** The journal: a postgres:// URL or a SQLite file. */
  readonly db: string;
  readonly dir: string;
  readonly ledger: string;
}

export function baseEnv(e: Env, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, LEDGER_FILE: e.ledger, LOGBOOK_STATE_DIR: e.dir, LOGBOOK_LEASE_TTL_MS: String(TTL_MS), NO_COLOR: '1', ...extra };
}

export function cliSync(e: Env, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--journal', e.db], { cwd: e.dir, encoding: 'utf8', env: baseEnv(e), timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Queues a run of the ledger agent; returns its id. */
export function detach(e: Env, input: Record<string, unknown>, runId?: string): string {
  const r = cliSync(e, ['run', '--detach', LEDGER_SCRIPT, '--input', JSON.stringify(input), ...(runId ? ['--run-id', runId] : [])]);
  if (r.status !== 0) throw new Error(`run --detach exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

export interface Worker {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first stdout line matching `re` (already printed or not). */
  waitLine(re: RegExp, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startWorker(e: Env, name: string, args: string[] = [], scripts = WORKER_SCRIPTS, extraEnv: Record<string, string> = {}): Worker {
  const child = spawn(process.execPath, [CLI, 'worker', '--scripts', scripts, '--name', name, '--poll-ms', '100', '--journal', e.db, ...args], {
    cwd: e.dir,
    env: baseEnv(e, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  let buf = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const errLog = fs.createWriteStream(path.join(e.dir, `${name}.stderr`));
  child.stderr?.pipe(errLog);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    name,
    child,
    lines,
    exited,
    waitLine(re, timeoutMs = 60_000) {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `worker ${name}: no line matching ${re} in ${timeoutMs} ms; it printed:\n${lines.join('\n')}\nstderr: ${safeRead(path.join(e.dir, `${name}.stderr`))}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
      });
    },
  };
}

function safeRead(f: string): string {
  try {
    return fs.readFileSync(f, 'utf8');
  } catch {
    return '';
  }
}

/** Stops a worker the way a deploy does (SIGTERM) and waits for it; a worker already gone is fine. */
export async function stopWorker(w: Worker): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
  return w.exited;
}

export function ledger(e: Env): string[] {
  try {
    return fs
      .readFileSync(e.ledger, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
  } catch {
    return [];
  }
}

/** How many times each key's effect happened. */
export function effectCounts(e: Env): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of ledger(e)) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

export function withStore<T>(e: Env, fn: (s: Store) => T): T {
  const s = openStore(e.db, { readonly: true });
  try {
    return fn(s);
  } finally {
    s.close();
  }
}

export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The keys a completed ledger run of `items` items made: one post per item and one notify. */
export function expectedKeys(runId: string, items: number): string[] {
  return [...Array.from({ length: items }, (_, i) => `post:${runId}:${i}`), `notify:${runId}`];
}

/** Queues many runs in this process (one script load, one connection): what `run --detach` records, without a process each. */
export async function detachMany(e: Env, runs: ReadonlyArray<{ id: string; input: Record<string, unknown> }>): Promise<void> {
  const script = await loadScript(LEDGER_SCRIPT);
  const s = openStore(e.db);
  try {
    for (const r of runs)
      enqueueRun(dbOf(s.db), s.reader, {
        id: r.id,
        agent: script.agent.name,
        script: script.path,
        scriptVersion: script.version,
        input: JSON.stringify(r.input),
      });
  } finally {
    s.close();
  }
}
