// Child processes of the bench: bundled once with esbuild (like dist/), spawned with a timeout, one JSON line back.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '..');
export const CHILDREN = ['resumeChild', 'peerChild', 'fsyncChild'] as const;
export type ChildName = (typeof CHILDREN)[number];

/** Bundles the bench's child entry points into `dir`, so children start like the shipped CLI does: plain node, no tsx. */
export async function bundleChildren(dir: string): Promise<Record<ChildName, string>> {
  const out = {} as Record<ChildName, string>;
  await Promise.all(
    CHILDREN.map(async (name) => {
      const outfile = path.join(dir, `${name}.js`);
      await esbuild.build({
        entryPoints: [path.join(ROOT, 'bench', `${name}.ts`)],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['better-sqlite3', 'esbuild'],
        outfile,
        logLevel: 'warning',
      });
      out[name] = outfile;
    }),
  );
  return out;
}

export interface SpawnOptions {
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /** Run under `strace -f -c` and count these syscalls. */
  readonly countSyscalls?: readonly string[];
  /** Flags for node itself, before the script (e.g. --expose-gc). */
  readonly nodeArgs?: readonly string[];
}

export interface ChildResult<T> {
  readonly json: T;
  readonly syscalls?: Record<string, number>;
}

export function hasStrace(): boolean {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** Runs `node <script> <args>` (or `strace … node …`) and parses the last stdout line as JSON. */
export function spawnJson<T>(script: string, args: readonly string[], opts: SpawnOptions = {}): Promise<ChildResult<T>> {
  return new Promise((resolve, reject) => {
    const traceFile = opts.countSyscalls ? path.join(path.dirname(script), `strace-${process.pid}-${Date.now()}.txt`) : undefined;
    const cmd = traceFile ? 'strace' : process.execPath;
    const nodeArgv = [...(opts.nodeArgs ?? []), script, ...args];
    const argv = traceFile ? ['-f', '-c', '-o', traceFile, '-e', `trace=${(opts.countSyscalls ?? []).join(',')}`, process.execPath, ...nodeArgv] : nodeArgv;
    const child = spawn(cmd, argv, {
      cwd: opts.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Bundles keep better-sqlite3 external: resolve it (and the peers' packages) from this checkout.
      env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      let json: T;
      try {
        json = JSON.parse(line) as T;
      } catch {
        reject(
          new Error(
            `${path.basename(script)} ${args.join(' ')}: no JSON result (exit ${code}, ${signal ?? 'no signal'}): ${stdout.slice(-300)} ${stderr.slice(-800)}`,
          ),
        );
        return;
      }
      let syscalls: Record<string, number> | undefined;
      if (traceFile) {
        syscalls = parseStraceSummary(fs.readFileSync(traceFile, 'utf8'));
        fs.rmSync(traceFile, { force: true });
      }
      resolve({ json, ...(syscalls ? { syscalls } : {}) });
    });
  });
}

/** Reads the call counts out of `strace -c` output (columns: % time, seconds, usecs/call, calls, [errors], syscall). */
export function parseStraceSummary(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const name = cols[cols.length - 1];
    if (cols.length < 5 || !name || !/^[a-z_0-9]+$/.test(name) || name === 'total') continue;
    const calls = Number(cols[3]);
    if (Number.isFinite(calls)) counts[name] = calls;
  }
  return counts;
}
