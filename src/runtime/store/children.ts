// Child runs (run.child) in the journal: the child's row written inside its parent's fenced transaction, and the reads
// that find a run's children. A journal from before the child-runs migration, opened read-only, simply has none.

import type { Db, Statement } from './db';
import type { Owner } from './owner';
import { RunRow, checked } from './rows';

/** A child run as its parent's writer records it (RunWriter.childStarted). */
export interface NewChild {
  readonly id: string;
  readonly agent: string;
  /** The parent's script and version: its bundle defines the child's agent, so a worker or `logbook resume` finds it there. */
  readonly script: string;
  readonly scriptVersion: string | null;
  /** The input, as the child agent's schema parsed it (journal JSON). */
  readonly input: string | null;
  readonly parentId: string;
  readonly parentStep: number;
}

/**
 * Inserts the child's run row held by `owner` (epoch 1, attempt 1, status running, as createRun does) and its
 * `run.started` event. Called inside the parent's fenced write, so the parent's `child.started` commits with it.
 */
export function insertChildRun(db: Db, child: NewChild, owner: Owner, now: number, expires: number): void {
  db.prepare(
    `INSERT INTO runs (id, agent, script, input, status, attempt, created_at, updated_at,
       lease_token, lease_owner, lease_pid, lease_pid_start, lease_host, lease_epoch, lease_expires, script_version, parent_id, parent_step)
     VALUES (?, ?, ?, ?, 'running', 1, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
  ).run(
    child.id,
    child.agent,
    child.script,
    child.input,
    now,
    now,
    owner.token,
    owner.label,
    owner.pid,
    owner.pidStart,
    owner.host,
    expires,
    child.scriptVersion,
    child.parentId,
    child.parentStep,
  );
  db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, 1, ?, ?, ?)').run(
    child.id,
    now,
    'run.started',
    JSON.stringify({ agent: child.agent, script: child.script, owner: owner.label, parent: { runId: child.parentId, stepIdx: child.parentStep } }),
  );
}

/** The reads of a run's children, prepared on first use: a read-only journal older than the child-runs migration has no parent_id column. */
export class ChildReads {
  private stmts: { children: Statement; firstSeq: Statement } | null | undefined;

  constructor(
    private readonly db: Db,
    private readonly target: string,
  ) {}

  private get q(): { children: Statement; firstSeq: Statement } | null {
    if (this.stmts !== undefined) return this.stmts;
    try {
      this.stmts = {
        children: this.db.prepare('SELECT * FROM runs WHERE parent_id = ? ORDER BY parent_step, created_at, id'),
        firstSeq: this.db.prepare('SELECT MIN(seq) FROM events WHERE run_id = ?').pluck(),
      };
    } catch {
      this.stmts = null;
    }
    return this.stmts;
  }

  /** The runs `parentId` started with run.child, by the place of the call. */
  of(parentId: string): RunRow[] {
    const q = this.q;
    if (!q) return [];
    return q.children.all(parentId).map((r) => checked(RunRow, r, 'run', this.target));
  }

  /** The seq of a run's first event: for a child, its start, written in the same transaction as its parent's record of it. */
  firstEventSeq(runId: string): number | undefined {
    const n = this.q?.firstSeq.get(runId) as number | null | undefined;
    return typeof n === 'number' ? n : undefined;
  }
}
