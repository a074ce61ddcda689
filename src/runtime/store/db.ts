// The store's one synchronous database interface, which the SQLite file and the PostgreSQL journal both implement.
//
// ## Store interface
// Callers outside the store see only JournalStore (store/journalStore.ts), the domain operations, implemented once
// over this `Db` (store/sqlJournal.ts); the store's own modules (writer, reader, leases, queue, fork, overview,
// deleteRun) talk to a `Db`: prepared statements with `run/get/all/iterate/pluck/raw`, `transaction(fn).immediate()`,
// `exec`, `close`. It is synchronous on purpose: better-sqlite3 is, and PgDb (store/pg/pgDb.ts) blocks its caller on
// its thread's answer the way better-sqlite3 blocks on fsync, so one runtime code path serves both and the hot paths
// carry no awaits.
//
// SQLite's `Db` IS the better-sqlite3 Database (store/sqlite.ts only adds `kind`, `dialect`, `now`, `changed`,
// `leaseClock`, `writeSupport`), so a statement on the SQLite path costs exactly what it did before this interface existed.
//
// Shared SQL uses `?` placeholders (PgDb rewrites them to `$n`) and only what both engines accept. Where they differ,
// put the difference in `Dialect` or `Db` below, never an `if (kind === …)` in a shared module (only store/sqlite.ts
// and store/pg/* may read `kind`; only they and index.ts, which picks the engine by the target, import store/pg):
// - a SQL fragment (`indexedBy`, `forUpdate`, `claimLock`, `returningSeq`, `insertOrder`) concatenated into the shared text;
// - a whole statement (`renewLease`, `dataVersion`) when the fragments would be unreadable;
// - a behaviour read by the one module that needs it (`leaseByExpiry`; `leaseClock`; `writeSupport`: how a writer
//   commits lazily, fences, and who renews its lease).
// Add the member, give both implementations a value (store/sqlite.ts, store/pg/dialect.ts or pgDb.ts), and cover it
// in test/store/contract.test.ts or journal-store.test.ts, which run the same cases against both.

export { isPostgresUrl, redactUrl } from '../../shared/journalTarget';

export interface RunResult {
  readonly changes: number;
  /** SQLite: the rowid inserted. PostgreSQL: the first column of the first row a `RETURNING` gave back. */
  readonly lastInsertRowid: number | bigint;
}

export interface Statement {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
  /** Returns the first column's value instead of a row object. */
  pluck(toggle?: boolean): this;
  /** Returns rows as arrays of column values (in select order) instead of objects. */
  raw(toggle?: boolean): this;
}

export interface Transaction<A extends unknown[], R> {
  (...args: A): R;
  /** A write transaction: SQLite's BEGIN IMMEDIATE (takes the write lock first); PostgreSQL's BEGIN. */
  immediate(...args: A): R;
}

export type DbKind = 'sqlite' | 'postgres';

export interface Dialect {
  /** Appended after a table name to force an index (SQLite's planner needs it; PostgreSQL has no such clause). */
  readonly indexedBy: (index: string) => string;
  /** Appended to a SELECT of a run row to lock it until the transaction ends (PostgreSQL); SQLite's IMMEDIATE already does. */
  readonly forUpdate: string;
  /**
   * Appended to a worker's SELECT of the next claimable run: lock it, and pass over rows other workers hold locked
   * (PostgreSQL's SKIP LOCKED), so concurrent claims take different runs without waiting. SQLite's IMMEDIATE serialises claims.
   */
  readonly claimLock: string;
  /** Appended to `INSERT INTO events …` so `lastInsertRowid` is the new event's seq. */
  readonly returningSeq: string;
  /**
   * Whether deleting the newest events would let their seqs be handed out again (SQLite since migration 11: a seq is
   * the rowid, the largest plus one), so a delete must leave a marker at the largest; PostgreSQL's identity never goes back.
   */
  readonly seqsCanRepeat: boolean;
  /**
   * Journal format 2 (from schema 12): a transition's event carries its state writes and `steps`/`actions` are folded
   * from the log later (SQLite: one row appended per transition). PostgreSQL runs them in the transition's own round
   * trip, which costs it no more.
   */
  readonly foldsRows: boolean;
  /**
   * An expression for the seq of the event this transaction inserted last, used where the writer would otherwise read
   * it back first (PostgreSQL: reading a result half-way through a transaction costs a hop to the PG thread and
   * back). Null where that read is free (SQLite's lastInsertRowid): the writer binds the seq it read.
   */
  readonly lastEventSeq: string | null;
  /** The column that orders runs by insertion among equal created_at values. */
  readonly insertOrder: string;
  /**
   * Renews a lease, fenced by token and epoch; its parameters come from `renewParams`. SQLite measures the expiry by
   * this machine's clock (the file lives on it); PostgreSQL by the server's, the one clock all machines share.
   */
  readonly renewLease: string;
  readonly renewParams: (now: number, ttlMs: number, runId: string, token: string, epoch: number) => unknown[];
  /** One value that changes whenever anything commits (SQLite's data_version; PostgreSQL: the newest event and the run count). */
  readonly dataVersion: string;
  /**
   * Whether a lease is live only until its expiry (PostgreSQL: holders on other machines cannot be asked), with the
   * holder's pid a shortcut to call it dead sooner; SQLite trusts a live pid on this node even past expiry.
   */
  readonly leaseByExpiry: boolean;
  /**
   * A SQL condition true when a text column holds text that is not JSON (SQLite's json_valid), so a damaged journal is
   * found in one scan before anything is written. Null where no such test exists that does not raise (PostgreSQL 15):
   * there the reader casts every value to json, which raises on the first that is not, and only then reads the rows.
   */
  readonly notJson: ((column: string) => string) | null;
  /**
   * A SQL condition true when a key column holds anything but text. SQLite keeps the storage class a value was written
   * with, so a key damaged into a BLOB of the same bytes no longer matches its text, and its row hides from the lookup
   * by key (passing integrity_check). Null where typed columns cannot hold one (PostgreSQL).
   */
  readonly notText: ((column: string) => string) | null;
  /**
   * Wraps a SELECT of `columns` so that all its rows come back as one JSON text (an array of arrays, in the SELECT's
   * order; a value JSON cannot hold as it is comes as `true`, which the caller's row guard refuses), or null where the
   * engine has no such aggregate worth it. better-sqlite3 builds a JS array and a string per
   * row and column, which costs more than SQLite's stepping: replay reads a million rows on a 1M-step resume.
   */
  readonly packRows: ((select: string, columns: readonly string[]) => string) | null;
}

declare const connectionBrand: unique symbol;

/**
 * The store's connection as callers hold it (JournalStore.db): opaque, nothing can be read off it (no `kind`, no
 * `prepare`). It exists for callers that still hand it to the store's functions (acquireRun, RunWriter) rather than
 * calling JournalStore's methods.
 */
export interface JournalConnection {
  readonly [connectionBrand]: 'JournalConnection';
}

/** The `Db` behind an opaque connection: for the store's own modules (and tests), never for callers. */
export function dbOf(c: Db | JournalConnection): Db {
  return c as unknown as Db;
}

export interface Db {
  readonly kind: DbKind;
  readonly dialect: Dialect;
  /** SQLite: the file; PostgreSQL: the connection string with its password removed (safe to print). */
  readonly name: string;
  readonly open: boolean;
  prepare(sql: string): Statement;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<A, R>;
  exec(sql: string): unknown;
  close(): unknown;
  /** The clock leases are measured by: SQLite's is this machine's; PostgreSQL's is the server's. */
  now(): number;
  /** Tells live readers a run changed (PostgreSQL: a batched NOTIFY outside the transaction; SQLite: the file tells them). */
  changed(runId: string): void;
  /** The journal's schema version (SQLite's user_version; PostgreSQL's logbook_schema). */
  schemaVersion(): number;
  /**
   * The time leases are measured by, given this machine's `now`: SQLite's is `now` itself (the file lives on this
   * machine, so nothing is read); PostgreSQL's is the server's clock, the one all machines share (one read).
   */
  leaseClock(now: number): number;
  /** What a RunWriter does differently per engine (lazy commits, the fence, who renews), prepared for one writer. */
  writeSupport(): WriteSupport;
}

/** The engine-specific half of a RunWriter (store/writer.ts), so the writer itself never asks which engine it is on. */
export interface WriteSupport {
  /**
   * Statements run just before and just after a lazy (not fsynced) transaction: SQLite's `PRAGMA synchronous`, which
   * applies outside a transaction only. Undefined where laziness is set inside it (`lazyInside`).
   */
  readonly lazyAround: { readonly before: Statement; readonly after: Statement } | undefined;
  /** Run first inside a lazy transaction: PostgreSQL's `SET LOCAL synchronous_commit = off`. */
  readonly lazyInside: Statement | undefined;
  /**
   * Queues the transaction's fencing renewal (the parameters of `renewLease`, from `renewParams`), which the engine
   * checks before anything after it runs (PostgreSQL, see PgDb.fence); the transaction then throws an error
   * `isFenceLost` recognises. Undefined where the writer reads the row count itself (SQLite: nothing else can commit
   * inside BEGIN IMMEDIATE).
   */
  readonly fence: ((params: unknown[]) => void) | undefined;
  isFenceLost(err: unknown): boolean;
  /**
   * Has the engine renew the lease on its own every third of `ttlMs` (PostgreSQL's thread, so a busy caller cannot
   * starve it) and returns the cell it publishes acknowledged renewals in (monotonic µs of the send; -1 once it found
   * the lease taken). Undefined where the writer's heartbeat renews (SQLite). `onCancel` hears the run's cancel request
   * (its JSON) when a renewal finds one: the renewal's own row carries it, so learning of a cancel costs no statement.
   */
  holdLease(lease: LeaseKey, ttlMs: number, onLost: (reason: string) => void, onCancel?: (raw: string) => void): BigInt64Array | undefined;
  dropLease(lease: LeaseKey): void;
}

export interface LeaseKey {
  readonly runId: string;
  readonly token: string;
  readonly epoch: number;
}

/** The NOTIFY channel PostgreSQL writers announce changed runs on; the payload is the run id. */
export const NOTIFY_CHANNEL = 'logbook_events';

/** Lease length: $LOGBOOK_LEASE_TTL_MS (tests make it short), else 30 s. A holder renews it at a third of that. */
export function leaseTtlMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LOGBOOK_LEASE_TTL_MS;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 300 ? n : 30_000;
}
