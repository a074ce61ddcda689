// The journal store: a SQLite file or a PostgreSQL database behind one Db interface, its reader, and the lease-fenced writers.

import * as path from 'node:path';
import { isPostgresUrl } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import { journalTargetProblem, resolveTarget as resolvePlainTarget } from '../../shared/journalTarget';
import type { JournalStore } from './journalStore';
import { openJournalDb } from './open';
import { openPgJournal } from './pg/openPg';
import { SqlJournal } from './sqlJournal';

/** The journal, open: the domain interface (store/journalStore.ts) both engines implement. */
export type Store = JournalStore;

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
  return new SqlJournal(isPostgresUrl(target) ? openPgJournal(target, opts) : openJournalDb(path.resolve(target), opts));
}

// What callers outside the store may use (eslint.config.mjs refuses imports of the store's other modules): the
// interface and the types its operations take and give, the target helpers, and process-level sessions (owners).
export type { JournalStore, JournalConnection } from './journalStore';
export { DEFAULT_DB } from './open';
export { isPostgresUrl, redactUrl, NOTIFY_CHANNEL } from './db';
export type { JournalReader, RunView, ReadScope } from './reader';
export type { JournalOverview, ActionCount, LeasedRun } from './overview';
export type { RunWriter, Lease, Durability, NewAction } from './writer';
export type { NewRun, ForkPoint, AcquireOptions } from './lease';
export type { Claimed, ClaimKind, Known, QueuedRun, WorkerInfo } from './queue';
export type { ForkSeed } from './fork';
export type { DeletedCounts } from './deleteRun';
export type { GraphCheckpoints, GraphCheckpointRow, GraphBlob, GraphWrite, GraphValue, GraphListQuery, GraphFence } from './graph';
export type { CancelRequest, CancelResult } from './cancel';
export type { NewEvent, SendResult, InboxReader } from './inbox';
export { parseCancelRequest } from './cancel';
export type { RunRow, StepRow, ActionRow, EventRow, ReplayStepRow, ReplayStepHead, ReplayActionRow, InboxRow } from './rows';
export { beginSession, endSession, withNewSession, processOwner, holderOnThisNode, type Owner } from './owner';
export { isStorageError, storageError } from './storageError';
export { createSchema as createScratchSchema, dropSchemasStartingWith as dropScratchSchemas } from './pg/scratchSchemas';
// The reader's change feed on PostgreSQL (LISTEN on a connection of its own): the statement stays in the store.
export { PgListener, type ListenerEvents } from './pg/pgListener';
