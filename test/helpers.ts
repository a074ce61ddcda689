// Test helpers: temporary directories, the built CLI as a real child process, and journal inspection.

import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');
export const EXAMPLES = path.join(ROOT, 'examples');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');

export function tmpDir(prefix = 'logbook-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface CliResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `logbook <args>` as a real child process with the journal and provider state in `dir`. */
export function cli(dir: string, args: string[], env: Record<string, string> = {}): CliResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [CLI, ...args, '--journal', path.join(dir, 'journal.db')], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...env },
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `logbook <args>` without waiting, for tests that kill or race it. */
export function cliAsync(dir: string, args: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, [CLI, ...args, '--journal', path.join(dir, 'journal.db')], {
    cwd: dir,
    env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `logbook <args>` raced with others: its exit code and everything it printed, stdout and stderr interleaved. */
export function cliEnded(dir: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const c = cliAsync(dir, args);
  let out = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => c.on('exit', (code) => resolve({ code, out })));
}

export function cliJson<T = any>(dir: string, args: string[], env: Record<string, string> = {}): { status: number | null; json: T; stderr: string } {
  const r = cli(dir, [...args, '--json'], env);
  let json: T;
  try {
    json = JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.status}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return { status: r.status, json, stderr: r.stderr };
}

export function show(dir: string, runId: string): any {
  return cliJson(dir, ['show', runId]).json;
}

export function fileHash(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/**
 * Journal format 2: brings every run's steps and actions up to its log, as any reader does before it reads. For tests
 * that read or damage the rows with raw SQL after a kill (a killed writer leaves its last transitions unfolded).
 */
export function foldRows(file: string): void {
  // Loaded here, not at the top: the helpers are also used where the store is not (extension tests).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openStore } = require('../src/runtime/store') as typeof import('../src/runtime/store');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { foldRun } = require('../src/runtime/store/fold') as typeof import('../src/runtime/store/fold');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { dbOf } = require('../src/runtime/store/db') as typeof import('../src/runtime/store/db');
  const store = openStore(file);
  try {
    const db = dbOf(store.db);
    const stale = db.prepare(
      'SELECT id FROM runs r WHERE EXISTS (SELECT 1 FROM events e WHERE e.run_id = r.id AND e.seq > r.folded_seq AND e.fold IS NOT NULL)',
    );
    for (const runId of stale.pluck().all() as string[]) foldRun(db, runId);
  } finally {
    store.close();
  }
}
