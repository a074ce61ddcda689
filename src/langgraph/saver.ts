// LogbookSaver: a LangGraph checkpointer (BaseCheckpointSaver) whose checkpoints and pending writes live in the Logbook journal.
//
// The store keeps channel values by version (store/graph.ts): `put` serialises and writes only the channels in
// `newVersions`, and reading a checkpoint joins the versions it names, so a long thread costs what changed, not a
// snapshot per superstep. Every write is one immediate transaction on the journal's connection: synchronous=FULL on
// SQLite, a synchronous commit on PostgreSQL.

import {
  BaseCheckpointSaver,
  INTERRUPT,
  RESUME,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { ErrorCodes, LogbookError, __journal } from 'agent-logbook';
import { driving, drivingJournal } from './context';

export interface LogbookSaverOptions {
  /**
   * The journal: a SQLite file (created if missing) or a `postgres://` URL. Default: inside runGraph, the journal of
   * the run it drives; elsewhere `$LOGBOOK_JOURNAL`, else `.logbook/journal.db`.
   */
  readonly journal?: string;
  /** LangGraph's serializer (default: its JsonPlusSerializer). */
  readonly serde?: SerializerProtocol;
}

// The store comes from the runtime's entry (one copy of it, the driving runtime's); its types are read off it.
type Store = ReturnType<typeof __journal.openStore>;
type GraphCheckpoints = ReturnType<Store['graphCheckpoints']>;
type GraphCheckpointRow = NonNullable<ReturnType<GraphCheckpoints['checkpoint']>>;
type GraphBlob = Parameters<GraphCheckpoints['putCheckpoint']>[1][number];

const RUN_FENCE = Symbol.for('agent-logbook.run-fence');

/** What the runtime puts on a run object under RUN_FENCE (runtime/session.ts). */
interface RunFence {
  readonly runId: string;
  readonly epoch: number;
  assert(): void;
}

/** A journaled step as runGraph reads it back (its result is JSON text, or null). */
export interface JournaledStep {
  readonly idx: number;
  readonly name: string;
  readonly status: 'started' | 'completed' | 'failed';
  readonly result: string | null;
  readonly attempt: number;
}

/** The marker of a channel that has a version but no value (LangGraph's "empty" channel). */
const EMPTY = 'empty';

interface Where {
  readonly threadId: string;
  readonly ns: string;
  readonly checkpointId: string | undefined;
}

function where(config: RunnableConfig, what: string, needs: { readonly checkpointId?: boolean } = {}): Where {
  const c = config.configurable ?? {};
  const threadId: unknown = c.thread_id;
  const ns: unknown = c.checkpoint_ns ?? '';
  const checkpointId: unknown = c.checkpoint_id;
  if (typeof threadId !== 'string' && typeof threadId !== 'number')
    throw new LogbookError(
      ErrorCodes.USAGE,
      `LogbookSaver.${what}: config.configurable.thread_id is missing.`,
      'Pass { configurable: { thread_id } } to the graph call.',
    );
  if (typeof ns !== 'string')
    throw new LogbookError(ErrorCodes.USAGE, `LogbookSaver.${what}: config.configurable.checkpoint_ns is not a string.`, 'Leave it unset, or pass a string.');
  if (checkpointId !== undefined && typeof checkpointId !== 'string')
    throw new LogbookError(
      ErrorCodes.USAGE,
      `LogbookSaver.${what}: config.configurable.checkpoint_id is not a string.`,
      'Pass the id a checkpoint config gave.',
    );
  if (needs.checkpointId && checkpointId === undefined)
    throw new LogbookError(ErrorCodes.USAGE, `LogbookSaver.${what}: config.configurable.checkpoint_id is missing.`, 'Pass the config that put() returned.');
  return { threadId: String(threadId), ns, checkpointId };
}

export class LogbookSaver extends BaseCheckpointSaver {
  private readonly journal: string | undefined;
  /** One store per journal: without an explicit journal, each run's graph is saved in that run's journal. */
  private readonly stores = new Map<string, Store>();

  constructor(opts: LogbookSaverOptions = {}) {
    super(opts.serde);
    this.journal = opts.journal;
    // An explicit journal is opened now, so a bad target is refused where the saver is made.
    if (opts.journal !== undefined) this.storeFor(opts.journal);
  }

  private storeFor(target: string): Store {
    const resolved = __journal.resolveTarget(target);
    let s = this.stores.get(resolved);
    if (!s) {
      s = __journal.openStore(resolved);
      this.stores.set(resolved, s);
    }
    return s;
  }

  /** The journal: the one given, else that of the run runGraph drives, else $LOGBOOK_JOURNAL, else .logbook/journal.db. */
  private get store(): Store {
    return this.storeFor(this.journal ?? drivingJournal() ?? process.env.LOGBOOK_JOURNAL ?? __journal.DEFAULT_DB);
  }

  private get graph(): GraphCheckpoints {
    return this.store.graphCheckpoints();
  }

  /** The journal's target as the saver uses it now: its file, or its connection string without the password. */
  get target(): string {
    return this.store.target;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (config.configurable?.thread_id === undefined) return undefined;
    const w = where(config, 'getTuple');
    const row = this.graph.checkpoint(w.threadId, w.ns, w.checkpointId);
    return row && (await this.tuple(row));
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const c = config.configurable ?? {};
    const filter = Object.entries(options.filter ?? {});
    const before: unknown = options.before?.configurable?.checkpoint_id;
    const rows = this.graph.list({
      ...(c.thread_id !== undefined ? { threadId: String(c.thread_id) } : {}),
      ...(typeof c.checkpoint_ns === 'string' ? { ns: c.checkpoint_ns } : {}),
      ...(typeof before === 'string' ? { before } : {}),
      // A metadata filter is applied here, after decoding: the limit counts only checkpoints that pass it.
      ...(options.limit !== undefined && filter.length === 0 ? { limit: options.limit } : {}),
    });
    let left = options.limit ?? Infinity;
    for (const row of rows) {
      if (left <= 0) return;
      if (typeof c.checkpoint_id === 'string' && row.checkpointId !== c.checkpoint_id) continue;
      const tuple = await this.tuple(row);
      const meta = (tuple.metadata ?? {}) as Record<string, unknown>;
      if (!filter.every(([k, v]) => sameValue(meta[k], v))) continue;
      left -= 1;
      yield tuple;
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const w = where(config, 'put');
    if (metadata.source === 'fork' && w.ns === '') this.refuseUnjournaledFork(w.threadId, w.checkpointId);
    const bare = copyCheckpoint(checkpoint);
    const values = bare.channel_values;
    bare.channel_values = {};
    const blobs: GraphBlob[] = [];
    for (const [channel, version] of Object.entries(newVersions)) {
      if (Object.prototype.hasOwnProperty.call(values, channel)) {
        const [type, value] = await this.serde.dumpsTyped(values[channel]);
        blobs.push({ channel, version: String(version), type, value });
      } else blobs.push({ channel, version: String(version), type: EMPTY, value: null });
    }
    const [type, value] = await this.serde.dumpsTyped(bare);
    const [metadataType, metadataValue] = await this.serde.dumpsTyped(metadata);
    this.graph.putCheckpoint(
      {
        threadId: w.threadId,
        ns: w.ns,
        checkpointId: checkpoint.id,
        parentId: w.checkpointId ?? null,
        checkpoint: { type, value },
        metadata: { type: metadataType, value: metadataValue },
      },
      blobs,
      Date.now(),
      this.fenceFor(w.threadId),
    );
    return { configurable: { thread_id: w.threadId, checkpoint_ns: w.ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const w = where(config, 'putWrites', { checkpointId: true });
    const special = WRITES_IDX_MAP as Record<string, number | undefined>;
    const rows = [];
    for (const [i, [channel, v]] of writes.entries()) {
      const [type, value] = await this.serde.dumpsTyped(v);
      rows.push({ taskId, idx: special[channel] ?? i, taskPath, channel, type, value });
    }
    this.graph.putWrites(
      w.threadId,
      w.ns,
      w.checkpointId as string,
      rows,
      writes.every(([channel]) => special[channel] !== undefined),
      this.fenceFor(w.threadId),
    );
  }

  async deleteThread(threadId: string): Promise<void> {
    await Promise.resolve();
    this.graph.deleteThread(String(threadId));
  }

  /**
   * The fence of a write to the thread of the run being driven here: the lease checked now by this process's clock (a
   * driver that cannot prove it saves nothing), and its epoch checked again in the write's transaction.
   */
  private fenceFor(threadId: string): { readonly runId: string; readonly epoch: number } | undefined {
    const run = driving.getStore()?.run as { readonly id: string; readonly [RUN_FENCE]?: RunFence } | undefined;
    const fence = run?.id === threadId ? run[RUN_FENCE] : undefined;
    if (!fence) return undefined;
    fence.assert();
    return { runId: fence.runId, epoch: fence.epoch };
  }

  /**
   * LangGraph forks a thread when it is invoked from a past checkpoint (time travel). A thread that is a Logbook run
   * forks only inside runGraph, where the fork is a run of its own in the journal; anywhere else its effects would be
   * journaled nowhere and `logbook resume` would go on from a branch the run's steps never took. Refused before any
   * node runs (LangGraph saves the fork's checkpoint first).
   */
  private refuseUnjournaledFork(threadId: string, from: string | undefined): void {
    if (driving.getStore()?.run.id === threadId || this.store.reader.run(threadId) === undefined) return;
    throw new LogbookError(
      ErrorCodes.USAGE,
      `Thread ${threadId} is Logbook run ${threadId}: invoking its graph from a past checkpoint${from ? ` (${from})` : ''} outside runGraph would branch the run's thread behind its journal. Nothing was written.`,
      `Fork it as a run: inside an agent, \`runGraph(run, graph, null, { config: { configurable: { thread_id: '${threadId}', checkpoint_id: '<checkpoint>' } } })\` (the new run is recorded as its fork), or \`logbook fork ${threadId} --step <n>\`.`,
      { threadId },
    );
  }

  /**
   * The note a person approved action `actionId` of run `runId` with (null: none), or undefined when this journal has
   * no such action. runGraph answers an interrupt() with it.
   * @internal
   */
  approvalNote(runId: string, actionId: string): string | null | undefined {
    const row = this.store.reader.action(runId, actionId);
    return row === undefined ? undefined : row.approval_note;
  }

  /**
   * The run `runId` as this saver's journal holds it (its fork origin), or undefined when it is not there.
   * @internal
   */
  runInfo(runId: string): { readonly forkedFrom: string | undefined } | undefined {
    const row = this.store.reader.run(runId);
    return row && { forkedFrom: row.forked_from ?? undefined };
  }

  /**
   * The steps of run `runId` journaled at positions `from` and after (runGraph replays them on a resume).
   * @internal
   */
  journaledSteps(runId: string, from: number): JournaledStep[] {
    const count = this.store.reader.stepCount(runId);
    return from >= count
      ? []
      : this.store.reader.steps(runId, from, count).map((s) => ({ idx: s.idx, name: s.name, status: s.status, result: s.result, attempt: s.attempt }));
  }

  /**
   * Records run `runId` as a fork of `from` at its step `atStep` (LangGraph's time travel through runGraph).
   * @internal
   */
  recordFork(runId: string, from: string, atStep: number, data: Record<string, unknown>): boolean {
    return this.graph.recordFork(runId, from, atStep, data, Date.now());
  }

  /**
   * The pending writes of checkpoint `checkpointId` of a thread's root namespace, by task: the channels written.
   * @internal
   */
  writtenChannels(threadId: string, checkpointId: string): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const w of this.graph.writes(threadId, '', checkpointId)) out.set(w.taskId, [...(out.get(w.taskId) ?? []), w.channel]);
    return out;
  }

  /**
   * Makes thread `to` start as thread `from` did, up to and including checkpoint `upto` (a fork's thread): its
   * checkpoints, their channel values, and of `upto`'s pending writes those of the tasks `keep` names ('all': every
   * task's), as the origin had them when it stopped there: a task stopped by interrupt() keeps only its interrupt, and
   * no answer the origin was resumed with is carried over. Oldest first, and `upto` itself last, after its writes, so
   * its presence says the copy is whole (a copy cut by a crash is finished by the next call). Nothing is done if it is.
   * @internal
   */
  async copyThread(from: string, to: string, upto: string, keep: ReadonlySet<string> | 'all'): Promise<void> {
    if (this.graph.checkpoint(to, '', upto)) return;
    const tuples: CheckpointTuple[] = [];
    for await (const t of this.list({ configurable: { thread_id: from } }, {})) if (String(t.config.configurable?.checkpoint_id) <= upto) tuples.push(t);
    if (!tuples.some((t) => t.config.configurable?.checkpoint_id === upto && (t.config.configurable?.checkpoint_ns ?? '') === ''))
      throw new LogbookError(
        ErrorCodes.USAGE,
        `Thread ${from} has no checkpoint ${upto}, so thread ${to} cannot start from it.`,
        `Pick a checkpoint of thread ${from} (graph.getStateHistory({ configurable: { thread_id: '${from}' } }) lists them).`,
        { from, checkpoint: upto },
      );
    tuples.sort((a, b) => (String(a.config.configurable?.checkpoint_id) < String(b.config.configurable?.checkpoint_id) ? -1 : 1));
    const isUpto = (t: CheckpointTuple): boolean => t.config.configurable?.checkpoint_id === upto && (t.config.configurable?.checkpoint_ns ?? '') === '';
    tuples.sort((a, b) => Number(isUpto(a)) - Number(isUpto(b)));
    for (const t of tuples) {
      const ns = String(t.config.configurable?.checkpoint_ns ?? '');
      const parent = t.parentConfig?.configurable?.checkpoint_id as string | undefined;
      const at = { configurable: { thread_id: to, checkpoint_ns: ns, checkpoint_id: t.checkpoint.id } };
      const last = t.config.configurable?.checkpoint_id === upto;
      if (last) {
        const interrupted = new Set((t.pendingWrites ?? []).filter(([, ch]) => ch === INTERRUPT).map(([task]) => task));
        const byTask = new Map<string, PendingWrite[]>();
        for (const [task, channel, value] of t.pendingWrites ?? []) {
          if (keep !== 'all' && !keep.has(task)) continue;
          if (channel === RESUME || (interrupted.has(task) && channel !== INTERRUPT)) continue;
          byTask.set(task, [...(byTask.get(task) ?? []), [channel, value]]);
        }
        for (const [task, writes] of byTask) await this.putWrites(at, writes, task);
      }
      await this.put(
        { configurable: { thread_id: to, checkpoint_ns: ns, ...(parent !== undefined ? { checkpoint_id: parent } : {}) } },
        t.checkpoint,
        t.metadata ?? { source: 'fork', step: -1, parents: {} },
        t.checkpoint.channel_versions,
      );
    }
  }

  /** Closes the journals it opened. */
  close(): void {
    for (const s of this.stores.values()) s.close();
    this.stores.clear();
  }

  private async tuple(row: GraphCheckpointRow): Promise<CheckpointTuple> {
    const checkpoint = (await this.serde.loadsTyped(row.checkpoint.type, row.checkpoint.value)) as Checkpoint;
    const values: Record<string, unknown> = {};
    const versions = Object.entries(checkpoint.channel_versions).map(([ch, v]) => [ch, String(v)] as const);
    for (const b of this.graph.blobs(row.threadId, row.ns, versions)) {
      if (b.type !== EMPTY && b.value !== null) values[b.channel] = await this.serde.loadsTyped(b.type, b.value);
    }
    checkpoint.channel_values = values;
    if (checkpoint.v < 4 && row.parentId !== null) await this.migratePendingSends(checkpoint, row);
    const pendingWrites: CheckpointPendingWrite[] = [];
    const writes = this.graph
      .writes(row.threadId, row.ns, row.checkpointId)
      .sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
    for (const wr of writes) pendingWrites.push([wr.taskId, wr.channel, wr.value === null ? undefined : await this.serde.loadsTyped(wr.type, wr.value)]);
    const metadata = (await this.serde.loadsTyped(row.metadata.type, row.metadata.value)) as CheckpointMetadata;
    return {
      config: { configurable: { thread_id: row.threadId, checkpoint_ns: row.ns, checkpoint_id: row.checkpointId } },
      checkpoint,
      metadata,
      ...(row.parentId !== null ? { parentConfig: { configurable: { thread_id: row.threadId, checkpoint_ns: row.ns, checkpoint_id: row.parentId } } } : {}),
      pendingWrites,
    };
  }

  /** Checkpoints of format < 4 kept sends as the parent's pending TASKS writes; format 4 keeps them in the channel. */
  private async migratePendingSends(checkpoint: Checkpoint, row: GraphCheckpointRow): Promise<void> {
    const sends = this.graph
      .writes(row.threadId, row.ns, row.parentId as string)
      .filter((w) => w.channel === TASKS)
      .sort((a, b) => compareWritesSortKeys(writesSortKey('', a.taskId, a.idx), writesSortKey('', b.taskId, b.idx)));
    if (sends.length === 0) return;
    const values: unknown[] = [];
    for (const s of sends) values.push(s.value === null ? undefined : await this.serde.loadsTyped(s.type, s.value));
    checkpoint.channel_values[TASKS] = values;
    const existing = Object.values(checkpoint.channel_versions);
    (checkpoint.channel_versions as Record<string, number | string>)[TASKS] =
      existing.length > 0 ? maxChannelVersion(...existing) : this.getNextVersion(undefined);
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
