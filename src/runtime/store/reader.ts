// Read side of the journal: validated, paged queries that never load a whole run into memory.

import type { Db, Statement } from './db';
import {
  type ActionRow,
  actionRow,
  type EventRow,
  RunRow,
  StepRow,
  checked,
  eventRow,
  replayActionRow,
  replayStepHead,
  replayStepRow,
  type ReplayActionRow,
  type ReplayStepHead,
  type ReplayStepRow,
} from './rows';
import { leaseIsLive } from './owner';
import { effectiveStatus } from '../policy';
import type { RunStatus } from '../types';
import { journalTextDamage, type JournalPlace } from '../json';
import { InboxReader } from './inbox';
import { ChildReads } from './children';
import { catchUpOf } from './catchUp';

/**
 * What a command reads back of a run before it writes anything, so a damaged value among them is found first: the
 * steps below `steps` (their result and error), and `actions`: 'open' (what a resume reads: the actions of unfinished
 * steps and those not committed), 'all' (what compensation reads), or 'none'.
 */
export interface ReadScope {
  readonly steps: number;
  readonly actions: 'none' | 'open' | 'all';
  /**
   * Step results longer than this many bytes are left to replay, which checks each when the script uses it (a resume
   * then reads no large checkpoint it does not need); undefined checks every one here.
   */
  readonly deferAbove?: number;
}

const STEP_JSON = ['result', 'error'] as const;
const ACTION_JSON = ['args', 'result', 'error', 'compensation_result'] as const;
/**
 * The actions a resume reads: those of steps not completed (redone, through the step index), and those a caught error
 * left in doubt in a completed step (settled at the end, through the partial index of migration 2). A committed action
 * of a completed step is never read again (replay returns the step's checkpoint), so a resume does not scan them.
 */
const OPEN_IN_STEPS = "step_idx IN (SELECT idx FROM steps WHERE run_id = ? AND status <> 'completed')";
const OPEN_IN_DOUBT = "status = 'started' AND error IS NOT NULL";

/** A PostgreSQL data error (SQLSTATE class 22: a cast of text that is not JSON raises 22P02), not a storage failure. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && err.name === 'PgError' && typeof code === 'string' && code.startsWith('22');
}

export type RunView = RunRow & {
  readonly effectiveStatus: RunStatus;
  readonly leaseLive: boolean;
  /** Stopped for a decision by a compensation (not by going forward): only the compensation may go on. */
  readonly compensationStopped: boolean;
};

/** What an event row is (EventRow), without what the log carries for the fold. */
const EVENT_COLUMNS = 'seq, run_id, attempt, at, kind, step_idx, action_id, data';
export class JournalReader {
  private readonly q;
  /** The events sent to runs (run.waitFor, approval decisions): read on first use. */
  readonly inbox: InboxReader;
  private readonly childReads: ChildReads;
  /** Format 2 (SQLite): brings a run's rows up to its log before they are read; undefined where rows are written at once. */
  private readonly catchUp: ((runId: string, target?: string) => void) | undefined;

  constructor(
    private readonly db: Db,
    readonly target: string,
  ) {
    this.inbox = new InboxReader(db, target);
    this.childReads = new ChildReads(db, target);
    this.catchUp = catchUpOf(db);
    const { insertOrder } = db.dialect;
    const indexedBy = (index: string): string => db.dialect.indexedBy(index);
    this.q = {
      run: db.prepare('SELECT * FROM runs WHERE id = ?'),
      runs: db.prepare('SELECT * FROM runs ORDER BY created_at DESC, id LIMIT ? OFFSET ?'),
      latestRun: db.prepare(`SELECT * FROM runs ORDER BY created_at DESC, ${insertOrder} DESC LIMIT 1`),
      runCount: db.prepare('SELECT COUNT(*) AS n FROM runs'),
      // Which drove the run last: a lease taken (going forward or compensating) or a compensation begun in it.
      lastDriving: db
        .prepare("SELECT kind FROM events WHERE run_id = ? AND kind IN ('run.lease-acquired', 'compensation.begin') ORDER BY seq DESC LIMIT 1")
        .raw(true),
      stepsRange: db.prepare('SELECT * FROM steps WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx'),
      // Replay reads every journaled row back, so its two queries return raw arrays: better-sqlite3 builds a row object
      // property by property, which costs more than the query (1.8 vs 1.1 µs a step row, measured by the bench).
      replaySteps: db.prepare('SELECT idx, name, status, result, error, attempt FROM steps WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx').raw(true),
      replayStepHeads: db.prepare(REPLAY_STEP_HEADS).raw(true),
      packedStepHeads: packed(db, REPLAY_STEP_HEADS, REPLAY_STEP_HEAD_COLUMNS),
      stepResult: db.prepare('SELECT result FROM steps WHERE run_id = ? AND idx = ?').raw(true),
      stepCount: db.prepare('SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM steps WHERE run_id = ?'),
      step: db.prepare('SELECT * FROM steps WHERE run_id = ? AND idx = ?'),
      action: db.prepare('SELECT * FROM actions WHERE run_id = ? AND id = ?'),
      // INDEXED BY: left alone, the planner may walk actions_by_seq over the whole run to skip a sort (O(run), not
      // O(step)); actions_by_step (run_id, step_idx, seq) gives a step's rows in seq order, with no sort (migration 9).
      actionsOfStep: db.prepare(`SELECT * FROM actions${indexedBy('actions_by_step')} WHERE run_id = ? AND step_idx = ? ORDER BY seq`),
      openActionsOfStep: db.prepare(
        `SELECT * FROM actions${indexedBy('actions_by_step')} WHERE run_id = ? AND step_idx = ? AND status <> 'committed' ORDER BY seq`,
      ),
      // Row by row, not packed: an action's args and result have no size bound, and packed they would be held twice.
      replayActionsOfStep: db
        .prepare(
          `SELECT id, seq, type, version, args, status, result, attempt FROM actions${indexedBy('actions_by_step')} WHERE run_id = ? AND step_idx = ? AND seq > ? ORDER BY seq LIMIT ?`,
        )
        .raw(true),
      actionsPage: db.prepare('SELECT * FROM actions WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      actionCount: db.prepare('SELECT COUNT(*) AS n FROM actions WHERE run_id = ?'),
      inDoubt: db.prepare("SELECT * FROM actions WHERE run_id = ? AND status = 'started' ORDER BY seq"),
      // Its WHERE implies the partial index's (migration 2), so the planner answers from that usually empty index; no INDEXED BY, so
      // a read-only open of a version-1 file still prepares it.
      inDoubtAfterError: db.prepare("SELECT * FROM actions WHERE run_id = ? AND status = 'started' AND error IS NOT NULL ORDER BY seq"),
      pendingApprovals: db.prepare("SELECT * FROM actions WHERE run_id = ? AND status = 'awaiting-approval' ORDER BY seq"),
      failedUncompensated: db.prepare(
        "SELECT * FROM actions WHERE run_id = ? AND status = 'failed' AND effect = 'idempotent' AND compensation IS NULL ORDER BY seq",
      ),
      committedDesc: db.prepare("SELECT * FROM actions WHERE run_id = ? AND status = 'committed' AND commit_seq < ? ORDER BY commit_seq DESC LIMIT ?"),
      // The event's own columns, not the state writes a SQLite event carries (`fold`: a checkpoint's whole state).
      eventsPage: db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
      eventsAt: db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE run_id = ? ORDER BY seq LIMIT ? OFFSET ?`),
      eventCount: db.prepare('SELECT COUNT(*) AS n FROM events WHERE run_id = ?'),
      lastEventSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM events'),
      nextActionSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM actions WHERE run_id = ?'),
      firstWrite: db
        .prepare("SELECT data FROM events WHERE run_id = ? AND action_id = ? AND kind IN ('action.started', 'action.awaiting-approval') ORDER BY seq LIMIT 1")
        .pluck(),
      ...damageQueries(db),
    };
  }

  /**
   * The first journaled value in `scope` that is not JSON, or undefined: one scan in the database (SQLite's json_valid,
   * about 0.2 µs a row), so a resume or a compensation refuses a damaged run before it writes anything. On PostgreSQL
   * the scan casts each value to json, which raises on a damaged one: only then are the rows read here to find it.
   */
  firstDamage(runId: string, scope: ReadScope): JournalPlace | undefined {
    this.catchUp?.(runId);
    const q = this.q;
    const deferring = scope.deferAbove !== undefined;
    const stepStmt = deferring ? q.smallStepDamage : q.stepDamage;
    const stepDamage = (stmt: DamageQuery['stmt']): unknown => {
      if (!deferring) return stmt.get(runId, scope.steps);
      // The search names the bound twice (in its CASE and its WHERE), the cast once.
      return stepStmt.kind === 'find' ? stmt.get(scope.deferAbove, runId, scope.steps, scope.deferAbove) : stmt.get(scope.deferAbove, runId, scope.steps);
    };
    if (stepStmt.kind === 'find' && q.actionDamage.kind === 'find' && q.openActionDamage.kind === 'find') {
      if (scope.actions === 'open' && q.openStepScan !== undefined) return this.firstOpenDamage(runId, scope, q.openStepScan, q.openActionDamage.stmt);
      const step = scope.steps > 0 ? (stepDamage(stepStmt.stmt) as { idx: number; name: string; col: string } | undefined) : undefined;
      if (step) return { runId, table: 'steps', idx: step.idx, name: step.name, column: step.col as 'result' | 'error' };
      const a = (scope.actions === 'all' ? q.actionDamage.stmt.get(runId) : undefined) as { id: string | null; step_idx: number; col: string } | undefined;
      return a && actionPlace(runId, a);
    }
    try {
      if (scope.steps > 0) stepDamage(stepStmt.stmt);
      if (scope.actions === 'all') q.actionDamage.stmt.get(runId);
      if (scope.actions === 'open') q.openActionDamage.stmt.get(runId, runId, runId);
      return undefined;
    } catch (err) {
      if (!isDataError(err)) throw err;
    }
    return this.findDamage(runId, scope);
  }

  /**
   * firstDamage of a resume's scope where the database finds damage: one scan of the run's steps returns the first
   * damaged one and every unfinished one (a resume's scan of a 1M-step run reads each step once, not twice), and the
   * actions of the unfinished steps are then read through the step index.
   */
  private firstOpenDamage(runId: string, scope: ReadScope, scan: Statement, actions: Statement): JournalPlace | undefined {
    // The indexes as SQLite's JSON of them: a JS number would round one above 2^53, and then match no action's.
    const unfinished: string[] = [];
    for (const st of scan.iterate({ run: runId, steps: scope.steps, defer: scope.deferAbove ?? -1 }) as Iterable<OpenStepScanRow>) {
      if (st.bad === 1) return { runId, table: 'steps', idx: st.idx, name: st.name, column: st.col };
      unfinished.push(st.key);
    }
    const a = actions.get({ run: runId, open: `[${unfinished.join(',')}]` }) as { id: string | null; step_idx: number; col: string } | undefined;
    return a && actionPlace(runId, a);
  }

  /** The slow search behind firstDamage where the database only says that some value is damaged. */
  private findDamage(runId: string, scope: ReadScope): JournalPlace | undefined {
    const count = this.stepCount(runId);
    const unfinished = new Set<number>();
    for (let from = 0; from < count; from += 500) {
      for (const st of this.steps(runId, from, from + 500)) {
        if (st.status !== 'completed') unfinished.add(st.idx);
        if (st.idx >= scope.steps) continue;
        for (const column of STEP_JSON) {
          if (column === 'result' && scope.deferAbove !== undefined && st.result !== null && Buffer.byteLength(st.result) > scope.deferAbove) continue;
          const place: JournalPlace = { runId, table: 'steps', idx: st.idx, name: st.name, column };
          if (journalTextDamage(st[column], () => place)) return place;
        }
      }
    }
    if (scope.actions === 'none') return undefined;
    for (const a of this.allActions(runId)) {
      if (scope.actions === 'open' && !unfinished.has(a.step_idx) && !(a.status === 'started' && a.error !== null)) continue;
      for (const column of ACTION_JSON) {
        const place: JournalPlace = { runId, table: 'actions', id: a.id, stepIdx: a.step_idx, column };
        if (journalTextDamage(a[column], () => place)) return place;
      }
    }
    return undefined;
  }

  run(id: string): RunRow | undefined {
    const r = this.q.run.get(id);
    return r === undefined ? undefined : checked(RunRow, r, 'run', this.target);
  }

  /** `now` is the clock leases are measured by (the database server's on PostgreSQL). */
  view(row: RunRow, now = this.db.now()): RunView {
    const leaseLive = leaseIsLive(row, now, this.db.dialect.leaseByExpiry);
    // A compensation that stops for a decision leaves the run needs-decision, as going forward does; it may have undone
    // actions already, so the run must not go forward from there. Its newest driving event tells the two apart.
    const compensationStopped = row.status === 'needs-decision' && (this.q.lastDriving.get(row.id) as unknown[] | undefined)?.[0] === 'compensation.begin';
    return { ...row, effectiveStatus: effectiveStatus(row.status, leaseLive), leaseLive, compensationStopped };
  }

  runs(limit = 100, offset = 0): RunRow[] {
    return this.q.runs.all(limit, offset).map((r) => checked(RunRow, r, 'run', this.target));
  }

  latestRun(): RunRow | undefined {
    const r = this.q.latestRun.get();
    return r === undefined ? undefined : checked(RunRow, r, 'run', this.target);
  }

  runCount(): number {
    return (this.q.runCount.get() as { n: number }).n;
  }

  steps(runId: string, from: number, to: number): StepRow[] {
    this.catchUp?.(runId);
    return this.q.stepsRange.all(runId, from, to).map((r) => checked(StepRow, r, 'step', this.target));
  }

  /** What replay needs of steps [from, to): read once per chunk for every journaled step on resume. */
  replaySteps(runId: string, from: number, to: number): ReplayStepRow[] {
    this.catchUp?.(runId);
    return (this.q.replaySteps.all(runId, from, to) as unknown[][]).map((r) => replayStepRow(r, this.target));
  }

  /**
   * Replay's reading of steps [from, to): each step's header, with its result when that is at most `inline` bytes;
   * for a longer one `result` is null, `large` says how long it is and `lead` its first character (read it with
   * stepResult when it is needed).
   */
  replayStepHeads(runId: string, from: number, to: number, inline: number): ReplayStepHead[] {
    this.catchUp?.(runId);
    const packedRows = unpack(this.q.packedStepHeads, [inline, runId, from, to]);
    if (packedRows !== undefined) {
      try {
        return packedRows.map((r) => replayStepHead(r, this.target));
      } catch {
        // A row its guard refuses (a BLOB comes packed as `true`): read row by row, which names the damage as always.
      }
    }
    return (this.q.replayStepHeads.all(inline, runId, from, to) as unknown[][]).map((r) => replayStepHead(r, this.target));
  }

  /** One step's result, as journaled (null: none); undefined when the run has no such step. */
  stepResult(runId: string, idx: number): string | null | undefined {
    this.catchUp?.(runId, `#${idx}`);
    const row = this.q.stepResult.get(runId, idx) as unknown[] | undefined;
    if (row === undefined) return undefined;
    const [text] = row;
    if (text === null || typeof text === 'string') return text;
    return checked(StepRow.shape.result, text, 'step', this.target);
  }

  step(runId: string, idx: number): StepRow | undefined {
    this.catchUp?.(runId, `#${idx}`);
    const r = this.q.step.get(runId, idx);
    return r === undefined ? undefined : checked(StepRow, r, 'step', this.target);
  }

  stepCount(runId: string): number {
    this.catchUp?.(runId);
    return (this.q.stepCount.get(runId) as { n: number }).n;
  }

  action(runId: string, id: string): ActionRow | undefined {
    this.catchUp?.(runId, id);
    const r = this.q.action.get(runId, id);
    return r === undefined ? undefined : actionRow(r, this.target);
  }

  actionsOfStep(runId: string, idx: number): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.actionsOfStep.all(runId, idx).map((r) => actionRow(r, this.target));
  }

  openActionsOfStep(runId: string, idx: number): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.openActionsOfStep.all(runId, idx).map((r) => actionRow(r, this.target));
  }

  /** What replay needs of a step's actions in start order after `afterSeq` (0: from its first): one range of actions_by_step. */
  replayActionsOfStep(runId: string, stepIdx: number, afterSeq: number, limit: number): ReplayActionRow[] {
    this.catchUp?.(runId);
    return (this.q.replayActionsOfStep.all(runId, stepIdx, afterSeq, limit) as unknown[][]).map((r) => replayActionRow(r, this.target));
  }

  /** Actions in start order, `limit` at a time after `afterSeq`. */
  actions(runId: string, afterSeq = 0, limit = 1000): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.actionsPage.all(runId, afterSeq, limit).map((r) => actionRow(r, this.target));
  }

  *allActions(runId: string, page = 1000): Generator<ActionRow> {
    let after = 0;
    for (;;) {
      const rows = this.actions(runId, after, page);
      yield* rows;
      const last = rows[rows.length - 1];
      if (rows.length < page || !last) return;
      after = last.seq;
    }
  }

  actionCount(runId: string): number {
    this.catchUp?.(runId);
    return (this.q.actionCount.get(runId) as { n: number }).n;
  }

  inDoubt(runId: string): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.inDoubt.all(runId).map((r) => actionRow(r, this.target));
  }

  /** Actions whose execute threw an error that left them in doubt, in start order. */
  inDoubtAfterError(runId: string): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.inDoubtAfterError.all(runId).map((r) => actionRow(r, this.target));
  }

  /** Idempotent actions journaled failed after an error that was not definite: their effect may have happened. */
  failedMayHaveHappened(runId: string): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.failedUncompensated
      .all(runId)
      .map((r) => actionRow(r, this.target))
      .filter((a) => {
        try {
          return (JSON.parse(a.error ?? 'null') as { mayHaveHappened?: unknown } | null)?.mayHaveHappened === true;
        } catch {
          return false;
        }
      });
  }

  pendingApprovals(runId: string): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.pendingApprovals.all(runId).map((r) => actionRow(r, this.target));
  }

  /** Committed actions newest-first by commit order, strictly older than `beforeCommitSeq`. */
  committedDesc(runId: string, beforeCommitSeq: number, limit: number): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.committedDesc.all(runId, beforeCommitSeq, limit).map((r) => actionRow(r, this.target));
  }

  /** Every committed action newest-first by commit order, a page at a time: the order compensation undoes them in. */
  *committedNewestFirst(runId: string, page = 200): Generator<ActionRow> {
    let before = Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = this.committedDesc(runId, before, page);
      if (rows.length === 0) return;
      for (const a of rows) {
        before = a.commit_seq ?? before;
        yield a;
      }
    }
  }

  events(runId: string, afterSeq = 0, limit = 1000): EventRow[] {
    return this.q.eventsPage.all(runId, afterSeq, limit).map((r) => eventRow(r, this.target));
  }

  /** Events by position (0-based) rather than by seq: what a debugger's paged variable view asks for. */
  eventsAt(runId: string, offset: number, limit: number): EventRow[] {
    return this.q.eventsAt.all(runId, limit, offset).map((r) => eventRow(r, this.target));
  }

  eventCount(runId: string): number {
    return (this.q.eventCount.get(runId) as { n: number }).n;
  }

  lastEventSeq(): number {
    return (this.q.lastEventSeq.get() as { n: number }).n;
  }

  /** Whether an action's definition had an inverse, as its first journal record says (undefined: not recorded). */
  actionHadInverse(runId: string, actionId: string): boolean | undefined {
    const data = this.q.firstWrite.get(runId, actionId);
    if (typeof data !== 'string') return undefined;
    try {
      const inverse = (JSON.parse(data) as { inverse?: unknown }).inverse;
      return typeof inverse === 'boolean' ? inverse : undefined;
    } catch {
      return undefined;
    }
  }

  nextActionSeq(runId: string): number {
    this.catchUp?.(runId);
    return (this.q.nextActionSeq.get(runId) as { n: number }).n;
  }

  /** The runs `parentId` started with run.child, by the place of the call (none in a journal from before child runs). */
  children(parentId: string): RunRow[] {
    return this.childReads.of(parentId);
  }

  /** The seq of a run's first event (a child's start, in the transaction of its parent's record of it). */
  firstEventSeq(runId: string): number | undefined {
    return this.childReads.firstEventSeq(runId);
  }
}

// Step headers for replay: a result of up to ? bytes comes inline; a longer one as '#', its first character (what kind
// of JSON value it is) and its size, in the same column (no JSON text starts with '#'). Both databases know the size
// without reading the value (SQLite's octet_length reads no overflow page, PostgreSQL's no TOAST), and the first
// character costs little in a scan; each expression per row costs about as much as a column read, and a 1M-step
// resume reads a million headers.
const REPLAY_STEP_HEAD_COLUMNS = ['idx', 'name', 'status', 'head', 'error', 'attempt'] as const;
const REPLAY_STEP_HEADS =
  "SELECT idx, name, status, CASE WHEN octet_length(result) <= ? THEN result ELSE '#' || substr(result, 1, 1) || octet_length(result) END AS head, error, attempt FROM steps WHERE run_id = ? AND idx >= ? AND idx < ? ORDER BY idx";

/** A replay query's rows as one JSON text (Dialect.packRows), where the engine can. */
function packed(db: Db, select: string, columns: readonly string[]): ReturnType<Db['prepare']> | undefined {
  const pack = db.dialect.packRows;
  return pack ? db.prepare(pack(select, columns)).pluck() : undefined;
}

/**
 * The rows of a packed query, or undefined when there is none or it failed (a storage error is then thrown by the
 * caller's row-by-row read of the same rows).
 */
function unpack(stmt: ReturnType<Db['prepare']> | undefined, params: readonly unknown[]): unknown[][] | undefined {
  if (stmt === undefined) return undefined;
  try {
    const rows = JSON.parse(stmt.get(...params) as string) as unknown;
    return Array.isArray(rows) ? (rows as unknown[][]) : undefined;
  } catch {
    return undefined;
  }
}

type DamageQuery = { readonly kind: 'find' | 'cast'; readonly stmt: Statement };

/** Where a damage query's action row (its id, step and damaged column) is, as a JournalPlace. */
function actionPlace(runId: string, a: { id: string | null; step_idx: number; col: string }): JournalPlace {
  return { runId, table: 'actions', id: a.id ?? '', stepIdx: a.step_idx, column: a.col as (typeof ACTION_JSON)[number] | 'id' };
}
type OpenStepScanRow = { idx: number; key: string; name: string; col: 'result' | 'error'; bad: number };

/**
 * firstDamage's statements: with the dialect's not-JSON test, each finds the first damaged value (and `openStepScan`
 * a damaged step and the unfinished ones in one scan); without it, each casts.
 */
function damageQueries(db: Db): {
  stepDamage: DamageQuery;
  smallStepDamage: DamageQuery;
  actionDamage: DamageQuery;
  openActionDamage: DamageQuery;
  openStepScan?: Statement;
} {
  const bad = db.dialect.notJson;
  if (bad) {
    const which = (cols: readonly string[], first = ''): string =>
      `CASE ${first}${cols
        .slice(0, -1)
        .map((c) => `WHEN ${bad(c)} THEN '${c}'`)
        .join(' ')} ELSE '${cols[cols.length - 1] ?? ''}' END AS col`;
    const any = (cols: readonly string[]): string => `(${cols.map(bad).join(' OR ')})`;
    // An action's key stored as anything but text (Dialect.notText) hides its row from the lookup by key: replay
    // would take the action for a new one and run its effect again. The key is returned as text, so the error can name it.
    const badKey = db.dialect.notText?.('id') ?? 'FALSE';
    const actions = (index: string, where: string, run = '?'): string =>
      `SELECT CAST(id AS TEXT) AS id, step_idx, seq, ${which(ACTION_JSON, `WHEN ${badKey} THEN 'id' `)} FROM actions${index} WHERE run_id = ${run}${where} AND (${badKey} OR ${any(ACTION_JSON)})`;
    // With ReadScope.deferAbove: only results of at most ? bytes (octet_length reads no overflow page).
    const badSmallResult = `(octet_length(result) <= ? AND ${bad('result')})`;
    return {
      stepDamage: {
        kind: 'find',
        stmt: db.prepare(`SELECT idx, name, ${which(STEP_JSON)} FROM steps WHERE run_id = ? AND idx < ? AND ${any(STEP_JSON)} ORDER BY idx LIMIT 1`),
      },
      smallStepDamage: {
        kind: 'find',
        stmt: db.prepare(
          `SELECT idx, name, CASE WHEN ${badSmallResult} THEN 'result' ELSE 'error' END AS col FROM steps WHERE run_id = ? AND idx < ? AND (${badSmallResult} OR ${bad('error')}) ORDER BY idx LIMIT 1`,
        ),
      },
      actionDamage: { kind: 'find', stmt: db.prepare(`${actions('', '')} ORDER BY seq LIMIT 1`) },
      // The unfinished steps come from openStepScan, as a JSON array (@open), named parameters throughout.
      openActionDamage: {
        kind: 'find',
        stmt: db.prepare(
          `SELECT * FROM (${actions(db.dialect.indexedBy('actions_by_step'), ' AND step_idx IN (SELECT value FROM json_each(@open))', '@run')} UNION ALL ${actions('', ` AND ${OPEN_IN_DOUBT}`, '@run')}) ORDER BY seq LIMIT 1`,
        ),
      },
      // A result longer than @defer bytes is left to replay (@defer < 0: none is); an unfinished step comes with bad = 0.
      openStepScan: ((): Statement => {
        // The size first: SQLite stops at it, so a result left to replay is never read (json_valid would read it whole).
        const badResult = `((@defer < 0 OR octet_length(result) <= @defer) AND ${bad('result')})`;
        const damaged = `(${badResult} OR ${bad('error')})`;
        return db.prepare(
          `SELECT idx, iif(typeof(idx) = 'blob', 'null', json_quote(idx)) AS key, name, CASE WHEN ${badResult} THEN 'result' ELSE 'error' END AS col, idx < @steps AND ${damaged} AS bad FROM steps WHERE run_id = @run AND ((idx < @steps AND ${damaged}) OR status <> 'completed') ORDER BY idx`,
        );
      })(),
    };
  }
  // COUNT(x::json) casts every value, and the cast raises on text that is not JSON.
  const casts = (cols: readonly string[]): string => cols.map((c) => `COUNT(${c}::json)`).join(' + ');
  return {
    stepDamage: { kind: 'cast', stmt: db.prepare(`SELECT ${casts(STEP_JSON)} AS n FROM steps WHERE run_id = ? AND idx < ?`) },
    smallStepDamage: {
      kind: 'cast',
      stmt: db.prepare(
        'SELECT COUNT(CASE WHEN octet_length(result) <= ? THEN result::json END) + COUNT(error::json) AS n FROM steps WHERE run_id = ? AND idx < ?',
      ),
    },
    actionDamage: { kind: 'cast', stmt: db.prepare(`SELECT ${casts(ACTION_JSON)} AS n FROM actions WHERE run_id = ?`) },
    openActionDamage: {
      kind: 'cast',
      stmt: db.prepare(
        `SELECT (SELECT ${casts(ACTION_JSON)} FROM actions WHERE run_id = ? AND ${OPEN_IN_STEPS}) + (SELECT ${casts(ACTION_JSON)} FROM actions WHERE run_id = ? AND ${OPEN_IN_DOUBT}) AS n`,
      ),
    },
  };
}
