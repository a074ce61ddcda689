// The journal store: one SQLite file, its reader, and the lease-fenced writers handed to runs.

import * as path from 'node:path';
import { openJournalDb, type Db } from './open';
import { JournalReader } from './reader';

export interface Store {
  readonly db: Db;
  readonly file: string;
  readonly reader: JournalReader;
  close(): void;
}

export function openStore(file: string, opts: { readonly?: boolean } = {}): Store {
  const abs = path.resolve(file);
  const db = openJournalDb(abs, opts);
  return {
    db,
    file: abs,
    reader: new JournalReader(db, abs),
    close: () => {
      if (db.open) db.close();
    },
  };
}

export { DEFAULT_DB } from './open';
export { JournalReader, type RunView } from './reader';
export { RunWriter, type Lease, type Durability } from './writer';
export { createRun, acquireRun, type ForkPoint } from './lease';
export { currentOwner } from './owner';
export { copyStepsForFork, seedForkActions, INHERITED_ATTEMPT, type ForkSeed } from './fork';
export type { RunRow, StepRow, ActionRow, EventRow } from './rows';
