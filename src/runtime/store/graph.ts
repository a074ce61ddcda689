// LangGraph checkpoints in the journal (tables of migration 4): the domain operations agent-logbook/langgraph's saver calls.
//
// A checkpoint row holds the checkpoint without its channel values; each channel's value is stored once per version in
// graph_blobs, written only when a superstep gave the channel a new version. Reading a checkpoint joins the versions it
// names. Values arrive already serialised by LangGraph's serde (a type tag and bytes): the store keeps bytes, never
// interprets them, and validates every row it reads back. Writes are immediate transactions on the journal's own
// connection, so they are as durable as every other transition (SQLite at synchronous=FULL, PostgreSQL's commit).

import * as z from 'zod/mini';
import { ErrorCodes, LogbookError } from '../errors';
import type { Db } from './db';

/** A serialised value: LangGraph's serde type tag and its bytes (null: the channel is empty at that version). */
export interface GraphValue {
  readonly type: string;
  readonly value: Uint8Array | null;
}

export interface GraphCheckpointRow {
  readonly threadId: string;
  readonly ns: string;
  readonly checkpointId: string;
  readonly parentId: string | null;
  readonly checkpoint: GraphValue & { readonly value: Uint8Array };
  readonly metadata: GraphValue & { readonly value: Uint8Array };
}

export interface GraphBlob extends GraphValue {
  readonly channel: string;
  readonly version: string;
}

export interface GraphWrite extends GraphValue {
  readonly taskId: string;
  readonly idx: number;
  readonly taskPath: string;
  readonly channel: string;
}

export interface GraphListQuery {
  readonly threadId?: string;
  readonly ns?: string;
  /** Only checkpoints whose id sorts before this one (LangGraph's ids are time-ordered uuid6). */
  readonly before?: string;
  readonly limit?: number;
}

/**
 * A write made for a run's session (runGraph's thread): done only while the run's lease is still at `epoch`, in the
 * same transaction, so a driver that lost the run (frozen past its lease, then woken) saves nothing of the thread.
 */
export interface GraphFence {
  readonly runId: string;
  readonly epoch: number;
}

/** The domain interface the saver sees: no SQL, no engine. */
export interface GraphCheckpoints {
  /** Stores a checkpoint and the channel values that changed with it, in one transaction (fenced, when given). */
  putCheckpoint(row: GraphCheckpointRow, blobs: readonly GraphBlob[], now: number, fence?: GraphFence): void;
  /**
   * Stores a task's pending writes against a checkpoint. `replace`: writes at fixed special indexes (errors,
   * interrupts) replace what the task wrote there before; otherwise a write already stored is kept (a re-run task
   * writes the same writes again). Fenced, when given.
   */
  putWrites(threadId: string, ns: string, checkpointId: string, writes: readonly GraphWrite[], replace: boolean, fence?: GraphFence): void;
  /** One checkpoint, or the newest of the thread and namespace when `checkpointId` is undefined. */
  checkpoint(threadId: string, ns: string, checkpointId: string | undefined): GraphCheckpointRow | undefined;
  /** Checkpoints newest first. */
  list(q: GraphListQuery): GraphCheckpointRow[];
  /** The stored values of the given (channel, version) pairs; a pair never stored is absent. */
  blobs(threadId: string, ns: string, versions: readonly (readonly [string, string])[]): GraphBlob[];
  /** The pending writes of a checkpoint, in no particular order (the saver sorts them by LangGraph's rule). */
  writes(threadId: string, ns: string, checkpointId: string): GraphWrite[];
  /** Removes every checkpoint, value and write of a thread. */
  deleteThread(threadId: string): void;
  /**
   * Records that run `runId` is a fork of run `from` at its step index `atStep` (LangGraph's time travel: the run's
   * thread starts as `from`'s thread at a past checkpoint), with a `run.forked` event carrying `data`. Only a run not
   * yet recorded as a fork is changed; false when it already was (or is not in the journal), and nothing is written.
   */
  recordFork(runId: string, from: string, atStep: number, data: Record<string, unknown>, now: number): boolean;
}

const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array);
const CheckpointRow = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  parent_id: z.nullable(z.string()),
  type: z.string(),
  checkpoint: bytes,
  metadata_type: z.string(),
  metadata: bytes,
});
const BlobRow = z.object({ channel: z.string(), version: z.string(), type: z.string(), value: z.nullable(bytes) });
const WriteRow = z.object({
  task_id: z.string(),
  idx: z.int(),
  task_path: z.string(),
  channel: z.string(),
  type: z.string(),
  value: z.nullable(bytes),
});

function parsed<T>(schema: z.ZodMiniType<T>, row: unknown, what: string, db: Db): T {
  const r = schema.safeParse(row);
  if (r.success) return r.data;
  throw new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `A LangGraph ${what} row in ${db.name} does not have the shape Logbook wrote (${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}).`,
    'The journal was edited or damaged: restore it from a backup, or delete the thread (saver.deleteThread) to start it again.',
    { db: db.name },
  );
}

const CHECKPOINT_COLUMNS = 'thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata_type, metadata';

function toRow(r: z.infer<typeof CheckpointRow>): GraphCheckpointRow {
  return {
    threadId: r.thread_id,
    ns: r.checkpoint_ns,
    checkpointId: r.checkpoint_id,
    parentId: r.parent_id,
    checkpoint: { type: r.type, value: r.checkpoint },
    metadata: { type: r.metadata_type, value: r.metadata },
  };
}

// PostgreSQL binds and returns bytea as Buffer (a Uint8Array after the pg thread's postMessage); SQLite as Buffer.
const bind = (v: Uint8Array | null): Buffer | null => (v === null ? null : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

export class SqlGraphCheckpoints implements GraphCheckpoints {
  constructor(private readonly db: Db) {}

  /** Throws LB_LEASE_LOST, inside the write's transaction, when the run's lease is no longer at the fence's epoch. */
  private fenced(fence: GraphFence | undefined): void {
    if (!fence) return;
    const epoch = this.db.prepare('SELECT lease_epoch FROM runs WHERE id = ?').pluck().get(fence.runId);
    if (epoch === fence.epoch) return;
    throw new LogbookError(
      ErrorCodes.LEASE_LOST,
      `Run ${fence.runId} is driven by another session now (lease epoch ${String(epoch)}, this one ${fence.epoch}): its LangGraph checkpoint was not saved.`,
      'Nothing to do here: the session that holds the run goes on with the thread.',
      { runId: fence.runId },
    );
  }

  putCheckpoint(row: GraphCheckpointRow, blobs: readonly GraphBlob[], now: number, fence?: GraphFence): void {
    const blob = this.db.prepare(
      'INSERT INTO graph_blobs (thread_id, checkpoint_ns, channel, version, type, value) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING',
    );
    const cp = this.db.prepare(
      `INSERT INTO graph_checkpoints (${CHECKPOINT_COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_id = excluded.parent_id, type = excluded.type,
       checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type, metadata = excluded.metadata`,
    );
    this.db
      .transaction(() => {
        this.fenced(fence);
        for (const b of blobs) blob.run(row.threadId, row.ns, b.channel, b.version, b.type, bind(b.value));
        cp.run(
          row.threadId,
          row.ns,
          row.checkpointId,
          row.parentId,
          row.checkpoint.type,
          bind(row.checkpoint.value),
          row.metadata.type,
          bind(row.metadata.value),
          now,
        );
      })
      .immediate();
  }

  putWrites(threadId: string, ns: string, checkpointId: string, writes: readonly GraphWrite[], replace: boolean, fence?: GraphFence): void {
    const conflict = replace
      ? 'DO UPDATE SET task_path = excluded.task_path, channel = excluded.channel, type = excluded.type, value = excluded.value'
      : 'DO NOTHING';
    const st = this.db.prepare(
      `INSERT INTO graph_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${conflict}`,
    );
    this.db
      .transaction(() => {
        this.fenced(fence);
        for (const w of writes) st.run(threadId, ns, checkpointId, w.taskId, w.idx, w.taskPath, w.channel, w.type, bind(w.value));
      })
      .immediate();
  }

  checkpoint(threadId: string, ns: string, checkpointId: string | undefined): GraphCheckpointRow | undefined {
    const row =
      checkpointId === undefined
        ? this.db
            .prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1`)
            .get(threadId, ns)
        : this.db
            .prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`)
            .get(threadId, ns, checkpointId);
    return row === undefined ? undefined : toRow(parsed(CheckpointRow, row, 'checkpoint', this.db));
  }

  list(q: GraphListQuery): GraphCheckpointRow[] {
    const conditions: [string, unknown][] = [];
    if (q.threadId !== undefined) conditions.push(['thread_id = ?', q.threadId]);
    if (q.ns !== undefined) conditions.push(['checkpoint_ns = ?', q.ns]);
    if (q.before !== undefined) conditions.push(['checkpoint_id < ?', q.before]);
    const params = conditions.map(([, v]) => v);
    const where = conditions.length ? ` WHERE ${conditions.map(([c]) => c).join(' AND ')}` : '';
    let sql = `SELECT ${CHECKPOINT_COLUMNS} FROM graph_checkpoints${where} ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns`;
    if (q.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(q.limit);
    }
    return this.db
      .prepare(sql)
      .all(...params)
      .map((r) => toRow(parsed(CheckpointRow, r, 'checkpoint', this.db)));
  }

  blobs(threadId: string, ns: string, versions: readonly (readonly [string, string])[]): GraphBlob[] {
    if (versions.length === 0) return [];
    // One statement for all of them: on PostgreSQL each statement is a round trip.
    const pairs = versions.map(() => '(channel = ? AND version = ?)').join(' OR ');
    return this.db
      .prepare(`SELECT channel, version, type, value FROM graph_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND (${pairs})`)
      .all(threadId, ns, ...versions.flat())
      .map((r) => parsed(BlobRow, r, 'channel value', this.db));
  }

  writes(threadId: string, ns: string, checkpointId: string): GraphWrite[] {
    return this.db
      .prepare('SELECT task_id, idx, task_path, channel, type, value FROM graph_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?')
      .all(threadId, ns, checkpointId)
      .map((r) => {
        const w = parsed(WriteRow, r, 'pending write', this.db);
        return { taskId: w.task_id, idx: w.idx, taskPath: w.task_path, channel: w.channel, type: w.type, value: w.value };
      });
  }

  recordFork(runId: string, from: string, atStep: number, data: Record<string, unknown>, now: number): boolean {
    return this.db
      .transaction(() => {
        const changed = this.db
          .prepare('UPDATE runs SET forked_from = ?, forked_at_step = ?, updated_at = ? WHERE id = ? AND forked_from IS NULL')
          .run(from, atStep, now, runId).changes;
        if (changed === 0) return false;
        const attempt = this.db.prepare('SELECT attempt FROM runs WHERE id = ?').pluck().get(runId);
        this.db
          .prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)')
          .run(runId, typeof attempt === 'number' ? attempt : 1, now, 'run.forked', JSON.stringify({ from, atStep, ...data }));
        return true;
      })
      .immediate();
  }

  deleteThread(threadId: string): void {
    this.db
      .transaction(() => {
        for (const t of ['graph_writes', 'graph_blobs', 'graph_checkpoints']) this.db.prepare(`DELETE FROM ${t} WHERE thread_id = ?`).run(threadId);
      })
      .immediate();
  }
}
