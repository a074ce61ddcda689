// The journal store: a SQLite file or a PostgreSQL database behind one Db interface, its reader, and the lease-fenced writers.

import * as path from 'node:path';
import { isPostgresUrl, type Db } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import { journalTargetProblem, resolveTarget as resolvePlainTarget } from '../../shared/journalTarget';
import { openJournalDb } from './open';
import { openPgJournal } from './pg/openPg';
import { JournalReader } from './reader';

export interface Store {
  readonly db: Db;
  /** The journal's file, or its connection string without the password (safe to print). */
  readonly file: string;
  readonly reader: JournalReader;
  close(): void;
}

/**
 * Refuses, with LB_USAGE and before anything is opened or created, a target that is not what it looks like: a URL
 * whose scheme is not PostgreSQL's (`postgress://…` would otherwise become a SQLite file at a path made of the URL),
 * or a PostgreSQL URL that does not parse. The decision itself is shared/journalTarget.ts's.
 */
export function requireUsableTarget(target: string): void {
  const p = journalTargetProblem(target);
  if (p) throw new LogbookError(ErrorCodes.USAGE, p.problem, p.remedy);
}

/** The journal target checked (requireUsableTarget) and resolved: a connection string as it is, a path against `base`. */
export function resolveTarget(target: string, base?: string): string {
  requireUsableTarget(target);
  return resolvePlainTarget(target, base);
}

/** A `postgres://` or `postgresql://` URL opens PostgreSQL; anything else is a SQLite file path (resolved against cwd). */
export function openStore(target: string, opts: { readonly?: boolean } = {}): Store {
  requireUsableTarget(target);
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
export { isPostgresUrl, redactUrl, NOTIFY_CHANNEL, type Db } from './db';
export { JournalReader, type RunView } from './reader';
export { RunWriter, type Lease, type Durability } from './writer';
export { createRun, acquireRun, type ForkPoint } from './lease';
export { beginSession, endSession, withNewSession, processOwner } from './owner';
export { copyStepsForFork, seedForkActions, INHERITED_ATTEMPT, type ForkSeed } from './fork';
export type { RunRow, StepRow, ActionRow, EventRow } from './rows';
