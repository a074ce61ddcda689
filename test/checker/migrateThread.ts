// A second opener of an old-schema journal, in a thread of its own: it upgrades the file with today's migration runner while a checker driver opens it too, as another process would.

import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { openStore } from '../../src/runtime';
import { migrate } from '../../src/runtime/store/migrate';

/**
 * `hold`: take the write lock, migrate under it and keep it `holdMs` more (an upgrade of a large journal), so the
 * driver's open must wait for it. `race`: open and migrate the moment `go` is set, as the driver opens too.
 */
export interface ThreadAsk {
  readonly id: number;
  readonly mode: 'hold' | 'race';
  readonly file: string;
  readonly runId: string;
  readonly holdMs: number;
  readonly go: SharedArrayBuffer;
}

export type ThreadAnswer =
  | { readonly id: number; readonly stage: 'ready' }
  | {
      readonly id: number;
      readonly stage: 'done';
      /** Whether this thread's connection did the upgrade (it copied rows), or found it done by the other. */
      readonly migrated: boolean;
      readonly version: number;
      /** What it then read of the run through today's store, on the migrated file. */
      readonly status: string | undefined;
      readonly steps: number;
    }
  | { readonly id: number; readonly stage: 'error'; readonly message: string };

function serve(ask: ThreadAsk): ThreadAnswer {
  const go = new Int32Array(ask.go);
  const db = new Database(ask.file);
  try {
    // As openStore sets it: the runner's own wait (MIGRATION_WAIT_MS) is for a lock held past it.
    db.pragma('busy_timeout = 5000');
    if (ask.mode === 'hold') {
      db.exec('BEGIN IMMEDIATE');
      try {
        migrate(db, ask.file);
        parentPort?.postMessage({ id: ask.id, stage: 'ready' } satisfies ThreadAnswer);
        Atomics.wait(go, 0, 0, ask.holdMs);
        db.exec('COMMIT');
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK');
      }
    } else {
      parentPort?.postMessage({ id: ask.id, stage: 'ready' } satisfies ThreadAnswer);
      Atomics.wait(go, 0, 0, 10_000);
      migrate(db, ask.file);
    }
    const migrated = (db.prepare('SELECT total_changes()').pluck().get() as number) > 0;
    const version = db.pragma('user_version', { simple: true }) as number;
    const store = openStore(ask.file);
    try {
      const run = store.reader.run(ask.runId);
      return { id: ask.id, stage: 'done', migrated, version, status: run?.status, steps: store.reader.steps(ask.runId, 0, 1_000_000).length };
    } finally {
      store.close();
    }
  } finally {
    db.close();
  }
}

parentPort?.on('message', (ask: ThreadAsk) => {
  let answer: ThreadAnswer;
  try {
    answer = serve(ask);
  } catch (err) {
    answer = { id: ask.id, stage: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  parentPort?.postMessage(answer);
});
