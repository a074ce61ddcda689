// A tiny durable state file for example providers: survives a SIGKILL (write to temp, fsync, rename).

import * as fs from 'node:fs';
import * as path from 'node:path';

export function stateDir(): string {
  return process.env.LOGBOOK_STATE_DIR ?? path.resolve('.logbook');
}

export function readState<T>(file: string, initial: T): T {
  const p = path.join(stateDir(), file);
  try {
    return JSON.parse(fs.readFileSync(p, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return initial;
    throw err;
  }
}

export function writeState(file: string, value: unknown): void {
  const dir = stateDir();
  // Private, like the journal beside it: the providers' state holds what the runs sent.
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = path.join(dir, file);
  const tmp = `${p}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(value));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, p);
}
