// The state rows' writes as data: each transition's writes to `steps` and `actions`, run at once (PostgreSQL) or
// carried by its event and folded into the rows later (SQLite, journal format 2), by the same statements either way.

import type { Db, RunResult, Statement } from './db';
import { ErrorCodes, LogbookError } from '../errors';

type Param = string | number | null;

/** An UPDATE of one action: its own parameters first, then `WHERE run_id = ? AND id = ?`. */
function byId(runId: string, [id, ...rest]: Param[]): Param[] {
  return [...rest, runId, id ?? null];
}

/**
 * Each write: its SQL, with positional parameters, and `bind`, which orders run_id and the op's own for it. The writes
 * marked `seq` set `commit_seq`, the seq of the event that carries it: `bind` places it, unless the SQL names it.
 * Only what the statement itself says is written: none of them is read back or counted, so running them later, in
 * order, leaves the rows exactly as running them at once.
 */
const OPS = {
  stepStart: {
    arity: 4, // idx, name, attempt, started_at
    sql: () =>
      "INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES (?, ?, ?, 'started', ?, ?) " +
      "ON CONFLICT (run_id, idx) DO UPDATE SET status = 'started', attempt = excluded.attempt, error = NULL",
    bind: (r: string, p: Param[]) => [r, ...p],
  },
  // The step's row holds what it waits for (name, timeout) until it completes: a resume reads the deadline back.
  stepWait: {
    arity: 5, // idx, name, attempt, started_at, result
    sql: () =>
      "INSERT INTO steps (run_id, idx, name, status, attempt, started_at, result) VALUES (?, ?, ?, 'started', ?, ?, ?) " +
      "ON CONFLICT (run_id, idx) DO UPDATE SET status = 'started', attempt = excluded.attempt, error = NULL, result = excluded.result",
    bind: (r: string, p: Param[]) => [r, ...p],
  },
  stepEnd: {
    one: true,
    arity: 5, // idx, status, result, error, ended_at
    sql: () => 'UPDATE steps SET status = ?, result = ?, error = ?, ended_at = ? WHERE run_id = ? AND idx = ?',
    bind: (r: string, [idx, ...rest]: Param[]) => [...rest, r, idx],
  },
  actionInsert: {
    arity: 11, // id, seq, step_idx, type, version, effect, args, status, attempt, started_at, approval
    sql: () =>
      'INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, attempt, started_at, approval) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    bind: (r: string, p: Param[]) => [r, ...p],
  },
  // A decision answers one episode of doubt: started again, the action may be in doubt afresh and is asked anew.
  actionRestart: {
    one: true,
    arity: 4, // id, attempt, version, reconciliation
    sql: () =>
      "UPDATE actions SET status = 'started', error = NULL, decision = NULL, result = NULL, attempt = ?, version = ?, reconciliation = COALESCE(?, reconciliation) WHERE run_id = ? AND id = ?",
    bind: byId,
  },
  // A read-only action's whole record in one statement: the same row the insert, count and commit would leave.
  actionObserved: {
    arity: 10, // id, seq, step_idx, type, version, effect, args, result, attempt, at
    seq: true,
    sql: (seq: string) =>
      'INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, ended_at, commit_seq) ' +
      `VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'committed', ?, 1, ?, ?, ?, ${seq})`,
    bind: (r: string, p: Param[], seq: Param[]) => [r, ...p, p[9] ?? null, ...seq],
  },
  actionExecuting: { one: true, arity: 1, sql: () => 'UPDATE actions SET executions = executions + 1 WHERE run_id = ? AND id = ?', bind: byId },
  // Found to have happened: it ran at least once, counted or not (a crash can take the count away with the call's end).
  actionHappened: { arity: 1, sql: () => 'UPDATE actions SET executions = 1 WHERE run_id = ? AND id = ? AND executions = 0', bind: byId },
  actionCommit: {
    one: true,
    arity: 4, // id, result, ended_at, reconciliation
    seq: true,
    sql: (seq: string) =>
      `UPDATE actions SET status = 'committed', result = ?, ended_at = ?, commit_seq = ${seq}, reconciliation = COALESCE(?, reconciliation), error = NULL WHERE run_id = ? AND id = ?`,
    bind: (r: string, [id, result, endedAt, reconciliation]: Param[], seq: Param[]) => [
      result ?? null,
      endedAt ?? null,
      ...seq,
      reconciliation ?? null,
      r,
      id ?? null,
    ],
  },
  actionFail: { one: true, arity: 3, sql: () => "UPDATE actions SET status = 'failed', error = ?, ended_at = ? WHERE run_id = ? AND id = ?", bind: byId },
  // Stays started: only the error is recorded (which moves it into the in-doubt-after-error index).
  actionInDoubt: {
    arity: 3,
    sql: () => "UPDATE actions SET error = ?, ended_at = ? WHERE run_id = ? AND id = ? AND status = 'started'",
    bind: byId,
  },
  // The result a person gave with "happened" waits in the row (still started) until the decision is applied.
  actionDecision: { one: true, arity: 3, sql: () => 'UPDATE actions SET decision = ?, result = ? WHERE run_id = ? AND id = ?', bind: byId },
  actionApproval: {
    one: true,
    arity: 4, // id, approval, note, status
    sql: () => 'UPDATE actions SET approval = ?, approval_note = ?, status = ? WHERE run_id = ? AND id = ?',
    bind: byId,
  },
  compStatus: {
    one: true,
    arity: 3, // id, status, result
    sql: () => 'UPDATE actions SET compensation = ?, compensation_result = COALESCE(?, compensation_result) WHERE run_id = ? AND id = ?',
    bind: byId,
  },
  compExecuting: {
    one: true,
    arity: 1,
    sql: () => 'UPDATE actions SET compensation_executions = compensation_executions + 1 WHERE run_id = ? AND id = ?',
    bind: byId,
  },
} as const;

export type RowOpName = keyof typeof OPS;
/** One write: its name and its parameters after run_id, as the event carries it (JSON). */
export type RowOp = readonly [RowOpName, ...Param[]];

/** The statements of every write, prepared for one connection; `seqSql` is how a write names its event's seq. */
export class RowWrites {
  private readonly stmts = new Map<RowOpName, Statement>();
  /** Whether the event's seq is a parameter (SQLite, and every fold) or SQL of its own (PostgreSQL's currval). */
  readonly seqAsParam: boolean;

  constructor(
    private readonly db: Db,
    private readonly seqSql: string | null,
  ) {
    this.seqAsParam = seqSql === null;
  }

  private stmt(name: RowOpName): Statement {
    let s = this.stmts.get(name);
    if (s === undefined) {
      const def = OPS[name];
      const sql = 'seq' in def ? def.sql(this.seqSql ?? '?') : def.sql();
      this.stmts.set(name, (s = this.db.prepare(sql)));
    }
    return s;
  }

  /** Runs `op` for run `runId`, whose event has `seq` (used only by the writes that record it). */
  apply(runId: string, seq: number, op: RowOp): RunResult {
    const [name, ...params] = op;
    const def = OPS[name];
    return this.stmt(name).run(...def.bind(runId, params, this.seqAsParam ? [seq] : []));
  }
}

/**
 * Whether a write folded from the log changed what it changes when made at once: one row, for the writes marked `one`.
 * Otherwise the rows are not what the log says (a key edited or damaged), and the fold must stop rather than lose it.
 * (Not read at once on PostgreSQL: its row count would cost a round trip.)
 */
export function foldedAsMade(op: RowOp, r: RunResult): boolean {
  return !('one' in OPS[op[0]]) || r.changes === 1;
}

/**
 * A parameter at least this long (a checkpoint's state, an action's args or result) is carried after the writes' JSON,
 * as it is, rather than inside it: escaped into the JSON it would cost a scan and a copy on the commit's path, and a
 * fifth more bytes written (every quote of a JSON text escaped).
 */
export const CARRIED_RAW = 512;
/** Stands in the writes' JSON for the parameter carried after it (an object: no parameter is one). */
const RAW = { $: 'raw' } as const;

/**
 * What an event's `fold` holds: the writes as JSON, and when one of their parameters is long, a newline and that
 * parameter as it is (JSON as the writer makes it holds no raw newline, so the first one ends it). Null for none.
 */
export function encodeRowOps(ops: readonly RowOp[]): string | null {
  if (ops.length === 0) return null;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as RowOp;
    for (let j = 1; j < op.length; j++) {
      const p = op[j];
      if (typeof p !== 'string' || p.length < CARRIED_RAW) continue;
      const stand = ops.map((o, k) => (k === i ? o.map((q, m) => (m === j ? RAW : q)) : o));
      return `${JSON.stringify(stand)}\n${p}`;
    }
  }
  return JSON.stringify(ops);
}

/** Reads back what an event carries (`encodeRowOps`): a JSON array of known writes with their parameters, else LB_JOURNAL_INVALID. */
export function decodeRowOps(text: unknown, where: { file: string; runId: string; seq: number }): RowOp[] {
  let ops: unknown;
  let raw: string | undefined;
  let stands = 0;
  const param = (p: unknown): boolean => {
    if (p === null || typeof p === 'string' || (typeof p === 'number' && Number.isFinite(p))) return true;
    const isRaw = typeof p === 'object' && !Array.isArray(p) && Object.keys(p).length === 1 && (p as { $?: unknown }).$ === RAW.$;
    if (isRaw) stands++;
    return isRaw;
  };
  try {
    if (typeof text === 'string') {
      const end = text.indexOf('\n');
      if (end >= 0) raw = text.slice(end + 1);
      ops = JSON.parse(end >= 0 ? text.slice(0, end) : text);
    }
  } catch {
    ops = undefined;
  }
  const ok =
    Array.isArray(ops) &&
    ops.every(
      (op) =>
        Array.isArray(op) &&
        typeof op[0] === 'string' &&
        Object.hasOwn(OPS, op[0]) &&
        op.length === OPS[op[0] as RowOpName].arity + 1 &&
        op.slice(1).every(param),
    ) &&
    // The parameter carried after the JSON is used once, by the one write that stands for it.
    stands === (raw === undefined ? 0 : 1);
  if (!ok)
    throw new LogbookError(
      ErrorCodes.JOURNAL_INVALID,
      `The journal ${where.file} holds event #${where.seq} of run ${where.runId} whose state writes are not what Logbook writes (not a JSON list of known writes); it was edited or damaged. Nothing was written.`,
      `Restore the file from a backup (do not edit journal rows by hand), or go on without the run: \`logbook delete ${where.runId}\`.`,
      { runId: where.runId, table: 'events', seq: where.seq },
    );
  if (raw === undefined) return ops as RowOp[];
  return (ops as unknown[][]).map((op) => op.map((p) => (typeof p === 'object' && p !== null ? raw : p)) as unknown as RowOp);
}

/** Whether a write records the seq of the event that carries it (`commit_seq`). */
export function namesSeq(op: RowOp): boolean {
  return 'seq' in OPS[op[0]];
}

/** The action or step a write is about, so a writer knows which of its rows are not folded yet. */
export function opTarget(op: RowOp): string {
  return op[0].startsWith('step') ? `#${String(op[1])}` : String(op[1]);
}
