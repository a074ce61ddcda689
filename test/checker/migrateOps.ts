// The journal put back to schema 9 mid-schedule, and the openers that race to migrate it again: the migration operation's machinery.

import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Exec } from './executor';
import { isPgUrl, onServer } from './pgdb';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { putBackToSchema9 } from '../store/schema9';
import type { ThreadAnswer, ThreadAsk } from './migrateThread';

export type Opener = 'thread-holds' | 'thread-races' | 'driver';

export const OPENERS: Record<Opener, string> = {
  'thread-holds': 'a second opener (another thread) upgrades it first and holds the lock; the driver opens meanwhile and must wait',
  'thread-races': 'a second opener (another thread) opens it at the same moment as the driver: one upgrades, the other waits',
  driver: 'the driver alone upgrades it',
};

/** How often the migration operation ran, and who did the upgrade: the suite prints it (a seed that never races proves little). */
export const MIGRATE_STATS = { ops: 0, threadMigrated: 0, driverMigrated: 0, pg: 0 };

export function resetMigrateStats(): void {
  Object.assign(MIGRATE_STATS, { ops: 0, threadMigrated: 0, driverMigrated: 0, pg: 0 });
}

let thread: Worker | undefined;
let nextAsk = 1;
const asked = new Map<number, (a: ThreadAnswer) => void>();

/**
 * One thread for the whole check (loading the runtime takes it a second), referenced only while it has work: a
 * finished check must not be kept alive by it. It loads the TypeScript sources, as this process does.
 */
function openerThread(): Worker {
  if (thread) return thread;
  const boot = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(path.join(__dirname, 'migrateThread.ts'))});`;
  const w = new Worker(boot, { eval: true });
  w.unref();
  w.on('message', (a: ThreadAnswer) => asked.get(a.id)?.(a));
  const fail = (message: string): void => {
    thread = undefined;
    for (const [id, answer] of asked) answer({ id, stage: 'error', message });
  };
  w.on('error', (err) => fail(`the opener thread died: ${err.stack ?? err.message}`));
  w.on('exit', (code) => fail(`the opener thread exited (${code})`));
  thread = w;
  return w;
}

/** The second opener of one operation: `go` releases a racing one; `done` is its report. */
export interface SecondOpener {
  readonly go: () => void;
  readonly finish: () => Promise<void>;
}

/**
 * Puts the case's journal back to schema 9, as an older Logbook left it, and sets up who opens it next: on SQLite,
 * maybe a thread besides the driver. No driver of the case is live between operations, so the file is not held open
 * for writing (the checker's read-only observer is). On PostgreSQL migrations 10 and 11 change nothing but their
 * version rows: those rows are taken back, and the driver's open migrates again under the advisory lock; no thread.
 */
export async function putBack(x: Exec, opener: Opener, holdMs: number): Promise<SecondOpener> {
  MIGRATE_STATS.ops++;
  if (isPgUrl(x.target.db)) {
    MIGRATE_STATS.pg++;
    await onServer(x.target.db, 'DELETE FROM logbook_schema WHERE version >= 10');
    x.log.push('PostgreSQL: the version rows of schemas 10 and 11 deleted (their migrations change nothing else); the driver opens it alone');
    return { go: () => undefined, finish: () => Promise.resolve(checkVersion(x)) };
  }
  putBackToSchema9(x.target.db);
  if (opener === 'driver') return { go: () => undefined, finish: () => Promise.resolve(checkVersion(x)) };
  const go = new SharedArrayBuffer(4);
  const ask: ThreadAsk = { id: nextAsk++, mode: opener === 'thread-holds' ? 'hold' : 'race', file: x.target.db, runId: x.runId, holdMs, go };
  const w = openerThread();
  let ready: () => void = () => undefined;
  const readyP = new Promise<void>((r) => (ready = r));
  const done = new Promise<ThreadAnswer>((resolve) => {
    asked.set(ask.id, (a) => {
      if (a.stage === 'ready') return ready();
      asked.delete(ask.id);
      if (!asked.size) w.unref();
      ready();
      resolve(a);
    });
  });
  w.ref();
  w.postMessage(ask);
  // A holding thread has the lock (and the upgrade) before the driver opens; a racing one waits at its start line.
  await readyP;
  const word = opener === 'thread-holds' ? `holding the write lock ${holdMs} ms` : 'racing the driver';
  return {
    go: () => {
      if (ask.mode !== 'race') return;
      Atomics.store(new Int32Array(go), 0, 1);
      Atomics.notify(new Int32Array(go), 0);
    },
    finish: async () => {
      const a = await done;
      if (a.stage === 'error') {
        x.log.push(`the second opener (a thread, ${word}) failed`);
        x.violation(
          'migration-race-failed',
          `the second opener of the schema-9 journal (a thread, ${word}) failed: ${a.message.split('\n').slice(0, 8).join(' | ')}`,
        );
      } else if (a.stage === 'done') {
        if (a.migrated) MIGRATE_STATS.threadMigrated++;
        else MIGRATE_STATS.driverMigrated++;
        x.log.push(
          `the second opener (a thread, ${word}): ${a.migrated ? 'it upgraded the journal' : 'the driver had upgraded it'}; it read schema ${a.version}, run ${x.runId} ${a.status ?? 'absent'} with ${a.steps} step(s)`,
        );
        if (a.version !== LATEST_VERSION)
          x.violation('migration-race-failed', `the second opener of the schema-9 journal (a thread, ${word}) ended at schema ${a.version}`);
      }
      checkVersion(x);
    },
  };
}

/** After its openers, the journal is at today's schema: an open that returned left no older one behind. */
function checkVersion(x: Exec): void {
  const v = x.observer.store.schemaVersion();
  if (v !== LATEST_VERSION) x.violation('migration-not-done', `the journal put back to schema 9 is at schema ${v} after its openers`);
}
