// The journal store: a SQLite file or a PostgreSQL database behind one Db interface, its reader, and the lease-fenced writers.

import * as path from 'node:path';
import { isPostgresUrl, type Db } from './db';
import { openJournalDb } from './open';
import { openPgJournal } from './pg/open';
import { JournalReader } from './reader';

export interface Store {
  readonly db: Db;
  /** The journal's file, or its connection string without the password (safe to print). */
  readonly file: string;
  readonly reader: JournalReader;
  close(): void;
}

/** A `postgres://` or `postgresql://` URL opens PostgreSQL; anything else is a SQLite file path (resolved against cwd). */
export function openStore(target: string, opts: { readonly?: boolean } = {}): Store {
  const db = isPostgresUrl(target) ? openPgJournal(target, opts) : openJournalDb(path.resolve(target), opts);
  return {
    db,
    file: db.name,
    reader: new JournalReader(db, db.name),
    close: () => {
      if (db.open) db.close();
    },
  };
}

export { DEFAULT_DB } from './open';
export { isPostgresUrl, redactUrl, resolveTarget, NOTIFY_CHANNEL, type Db } from './db';
export { JournalReader, type RunView } from './reader';
export { RunWriter, type Lease, type Durability } from './writer';
export { createRun, acquireRun, type ForkPoint } from './lease';
export { beginSession, endSession, withNewSession, processOwner } from './owner';
export { copyStepsForFork, seedForkActions, INHERITED_ATTEMPT, type ForkSeed } from './fork';
export type { RunRow, StepRow, ActionRow, EventRow } from './rows';
