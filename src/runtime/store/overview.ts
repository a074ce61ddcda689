// The reads behind the sidebar's reader process: counts and pages of a run's rows, a script's latest run, and what
// changed since a position (the dialect's data version, new events, leases), as domain calls with their SQL here.

import { catchUpOf } from './catchUp';
import type { Db, Statement } from './db';
import { RunRow, actionRow, checked, type ActionRow, type StepRow } from './rows';

/** What a run's action rows of one type, status and compensation add up to. */
export interface ActionCount {
  readonly type: string;
  readonly status: ActionRow['status'];
  readonly compensation: ActionRow['compensation'];
  readonly errored: number;
  readonly n: number;
}

/** The lease columns of a run that has a holder. */
export interface LeasedRun {
  readonly id: string;
  readonly lease_token: string | null;
  readonly lease_pid: number | null;
  readonly lease_pid_start: string | null;
  readonly lease_host: string | null;
  readonly lease_expires: number | null;
}

export class JournalOverview {
  private readonly q;
  /** The sidebar's root: runs no other run started (run.child), prepared on first use; null in a journal from before child runs. */
  private roots: { readonly page: Statement; readonly count: Statement } | null | undefined;
  /** Format 2 (SQLite): brings a run's rows up to its log before they are counted (store/catchUp.ts). */
  private readonly catchUp: ((runId: string) => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly target: string,
  ) {
    this.catchUp = catchUpOf(db);
    this.q = {
      countByStatus: db.prepare('SELECT COUNT(*) AS n FROM actions WHERE run_id = ? AND status = ?'),
      stepActions: db.prepare('SELECT COUNT(*) AS n FROM actions WHERE run_id = ? AND step_idx = ?'),
      actionsOfStep: db.prepare('SELECT * FROM actions WHERE run_id = ? AND step_idx = ? AND seq > ? ORDER BY seq LIMIT ?'),
      latestForScript: db.prepare(`SELECT * FROM runs WHERE script = ? ORDER BY created_at DESC, ${db.dialect.insertOrder} DESC LIMIT 1`),
      stepNamesStatus: db.prepare('SELECT name, status, attempt FROM steps WHERE run_id = ?'),
      actionsByType: db.prepare(
        'SELECT type, status, compensation, CASE WHEN error IS NULL THEN 0 ELSE 1 END AS errored, COUNT(*) AS n FROM actions WHERE run_id = ? GROUP BY type, status, compensation, errored',
      ),
      version: db.prepare(db.dialect.dataVersion).pluck(),
      maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM events').pluck(),
      runCount: db.prepare('SELECT COUNT(*) FROM runs').pluck(),
      changedRuns: db.prepare(
        "SELECT run_id, MAX(CASE WHEN kind = 'run.started' THEN 1 ELSE 0 END) AS created FROM events WHERE seq > ? AND run_id <> '' GROUP BY run_id LIMIT 1001",
      ),
      leased: db.prepare('SELECT id, lease_token, lease_pid, lease_pid_start, lease_host, lease_expires FROM runs WHERE lease_token IS NOT NULL'),
    };
  }

  /** How many of the run's actions are in `status`. */
  actionsIn(runId: string, status: string): number {
    this.catchUp?.(runId);
    return (this.q.countByStatus.get(runId, status) as { n: number }).n;
  }

  /** How many actions step `idx` of the run holds. */
  actionsInStep(runId: string, idx: number): number {
    this.catchUp?.(runId);
    return (this.q.stepActions.get(runId, idx) as { n: number }).n;
  }

  /** A page of step `idx`'s actions after `afterSeq`, each row checked. */
  actionsOfStep(runId: string, idx: number, afterSeq: number, limit: number): ActionRow[] {
    this.catchUp?.(runId);
    return this.q.actionsOfStep.all(runId, idx, afterSeq, limit).map((r) => actionRow(r, this.target));
  }

  /** The newest run of the script at `script`, checked. */
  latestRunOf(script: string): RunRow | undefined {
    const r = this.q.latestForScript.get(script);
    return r === undefined ? undefined : checked(RunRow, r, 'run', this.target);
  }

  stepStatuses(runId: string): Iterable<{ name: string; status: StepRow['status']; attempt: number }> {
    this.catchUp?.(runId);
    return this.q.stepNamesStatus.iterate(runId) as Iterable<{ name: string; status: StepRow['status']; attempt: number }>;
  }

  actionCounts(runId: string): ActionCount[] {
    this.catchUp?.(runId);
    return this.q.actionsByType.all(runId) as ActionCount[];
  }

  /** A value that changes whenever the journal does (SQLite's data_version; the dialect's equivalent). */
  dataVersion(): unknown {
    return this.q.version.get();
  }

  lastEventSeq(): number {
    return this.q.maxSeq.get() as number;
  }

  runCount(): number {
    return this.q.runCount.get() as number;
  }

  /** Up to 1001 runs with events after `seq`, each saying whether it was created there. */
  runsChangedSince(seq: number): Array<{ run_id: string; created: number }> {
    return this.q.changedRuns.all(seq) as Array<{ run_id: string; created: number }>;
  }

  private get topLevel(): { readonly page: Statement; readonly count: Statement } | null {
    if (this.roots !== undefined) return this.roots;
    try {
      this.roots = {
        page: this.db.prepare(`SELECT * FROM runs WHERE parent_id IS NULL ORDER BY created_at DESC, id LIMIT ? OFFSET ?`),
        count: this.db.prepare('SELECT COUNT(*) FROM runs WHERE parent_id IS NULL').pluck(),
      };
    } catch {
      this.roots = null;
    }
    return this.roots;
  }

  /** A page of the runs no other run started, newest first (every run, in a journal from before child runs). */
  topLevelRuns(limit: number, offset: number): RunRow[] {
    const q = this.topLevel;
    const rows = q ? q.page.all(limit, offset) : this.db.prepare('SELECT * FROM runs ORDER BY created_at DESC, id LIMIT ? OFFSET ?').all(limit, offset);
    return rows.map((r) => checked(RunRow, r, 'run', this.target));
  }

  topLevelRunCount(): number {
    const q = this.topLevel;
    return q ? (q.count.get() as number) : this.runCount();
  }

  leasedRuns(): LeasedRun[] {
    return this.q.leased.all() as LeasedRun[];
  }
}
