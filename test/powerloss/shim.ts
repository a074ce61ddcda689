// Compiles the recording VFS (vfs/recordvfs.c) into .tmp/powerloss and loads it into this process as the default VFS.

import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const SOURCE = path.join(__dirname, 'vfs', 'recordvfs.c');
export const CACHE = path.resolve(__dirname, '..', '..', '.tmp', 'powerloss');

/** The shared object built from the current source (cached by its hash): gcc and sqlite3ext.h only, no download. */
export function buildShim(): string {
  const src = fs.readFileSync(SOURCE);
  // Named recordvfs.so so that SQLite derives the entry point from the file name: sqlite3_recordvfs_init.
  const out = path.join(CACHE, `vfs-${createHash('sha256').update(src).digest('hex').slice(0, 12)}`, 'recordvfs.so');
  if (fs.existsSync(out)) return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}`;
  execFileSync('gcc', ['-O2', '-Wall', '-Wextra', '-Werror', '-fPIC', '-shared', '-o', tmp, SOURCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  fs.renameSync(tmp, out);
  return out;
}

/** The loaded shim: its control connection stays open, since powerloss_ctl lives on it. */
export interface Shim {
  /** Starts a new log of the files whose path starts with `dir` (absolute). */
  record(log: string, dir: string): void;
  stop(): void;
  mark(text: string): void;
  /** The n-th sync of a recorded file from now on fails with SQLITE_IOERR_FSYNC. */
  failSync(n: number): void;
  /** From the n-th write of a recorded file from now on, every write fails with SQLITE_FULL (a full disk); 0 ends it. */
  failWrites(n: number): void;
  /** Recorded files' syncs are skipped and not logged (the negative control: a journal whose fsyncs do nothing). */
  dropSyncs(on: boolean): void;
}

let loaded: Shim | undefined;

export function loadShim(): Shim {
  if (loaded) return loaded;
  const ctl = new Database(':memory:');
  ctl.loadExtension(buildShim());
  const stmt = ctl.prepare<[string, string], { n: number }>('SELECT powerloss_ctl(?, ?) AS n');
  const call = (cmd: string, arg: string): number => stmt.get(cmd, arg)?.n ?? 0;
  let recording = false;
  loaded = {
    record: (log, dir) => {
      call('log', log);
      call('dir', dir.endsWith(path.sep) ? dir : dir + path.sep);
      recording = true;
    },
    stop: () => {
      call('stop', '');
      recording = false;
    },
    mark: (text) => void (recording && call('mark', text)),
    failSync: (n) => void call('failsync', String(n)),
    failWrites: (n) => void call('failwrites', String(n)),
    dropSyncs: (on) => void call('dropsyncs', on ? '1' : '0'),
  };
  return loaded;
}
