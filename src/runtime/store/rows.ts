// zod schemas for every row read back from the journal: a row that does not match is a corrupt journal, not a crash.

import * as z from 'zod/mini';
import { ACTION_STATUSES, COMPENSATION_STATUSES, RECONCILIATIONS, RUN_STATUSES, STEP_STATUSES } from '../types';
import { EFFECTS } from '../define';
import { ErrorCodes, LogbookError } from '../errors';
import { ENGLISH } from '../../shared/zodEnglish';

const int = z.int();
const text = z.string();

export const RunRow = z.object({
  id: text,
  agent: text,
  script: text,
  input: z.nullable(text),
  status: z.enum(RUN_STATUSES),
  attempt: int,
  output: z.nullable(text),
  error: z.nullable(text),
  created_at: int,
  updated_at: int,
  lease_token: z.nullable(text),
  lease_owner: z.nullable(text),
  lease_pid: z.nullable(int),
  lease_pid_start: z.nullable(text),
  lease_host: z.nullable(text),
  lease_epoch: int,
  lease_expires: z.nullable(int),
  forked_from: z.nullable(text),
  forked_at_step: z.nullable(int),
  /** Absent in a journal of schema version 2 or older opened read-only (not migrated). */
  script_version: z.optional(z.nullable(text)),
  /** A cancel asked of a live run, as JSON (CancelRequest); absent in a journal older than schema version 5 opened read-only. */
  cancel_requested: z.optional(z.nullable(text)),
  /** When a sleeping run is due (ms since the epoch, this machine's clock); absent before schema version 5. */
  wake_at: z.optional(z.nullable(int)),
  /** The event a waiting run (or one awaiting approval) waits for; absent before schema version 7. */
  waiting_for: z.optional(z.nullable(text)),
  /** The run that started this one with run.child, and the index of the step it did it in; absent before the child-runs migration. */
  parent_id: z.optional(z.nullable(text)),
  parent_step: z.optional(z.nullable(int)),
});
export type RunRow = z.infer<typeof RunRow>;

export const StepRow = z.object({
  run_id: text,
  idx: int,
  name: text,
  status: z.enum(STEP_STATUSES),
  result: z.nullable(text),
  error: z.nullable(text),
  attempt: int,
  started_at: int,
  ended_at: z.nullable(int),
});
export type StepRow = z.infer<typeof StepRow>;

/** The columns replay reads for every journaled step: a narrower row decodes and validates in half the time. */
export const ReplayStepRow = z.pick(StepRow, { idx: true, name: true, status: true, result: true, error: true, attempt: true });
export type ReplayStepRow = z.infer<typeof ReplayStepRow>;

/**
 * A step's header as replay reads it: its result inline only up to a size, else null, with `large` saying how long it
 * is and `lead` its first character.
 */
export const ReplayStepHead = z.object({
  idx: int,
  name: text,
  status: z.enum(STEP_STATUSES),
  result: z.nullable(text),
  large: z.nullable(int),
  lead: z.nullable(text),
  error: z.nullable(text),
  attempt: int,
});
export type ReplayStepHead = z.infer<typeof ReplayStepHead>;

export const ActionRow = z.object({
  run_id: text,
  id: text,
  seq: int,
  step_idx: int,
  type: text,
  version: int,
  effect: z.enum(EFFECTS as unknown as ['read-only', 'idempotent', 'non-idempotent']),
  args: text,
  status: z.enum(ACTION_STATUSES),
  result: z.nullable(text),
  error: z.nullable(text),
  executions: int,
  reconciliation: z.nullable(z.enum(RECONCILIATIONS)),
  decision: z.nullable(z.enum(['happened', 'not-happened'])),
  approval: z.nullable(z.enum(['pending', 'approved', 'rejected'])),
  approval_note: z.nullable(text),
  compensation: z.nullable(z.enum(COMPENSATION_STATUSES)),
  compensation_result: z.nullable(text),
  compensation_executions: int,
  attempt: int,
  started_at: int,
  ended_at: z.nullable(int),
  commit_seq: z.nullable(int),
});
export type ActionRow = z.infer<typeof ActionRow>;

/** What replay compares and returns for a journaled action, read for every action of a step being redone. */
export const ReplayActionRow = z.pick(ActionRow, { id: true, seq: true, type: true, version: true, args: true, status: true, result: true, attempt: true });
export type ReplayActionRow = z.infer<typeof ReplayActionRow>;

export const EventRow = z.object({
  seq: int,
  run_id: text,
  attempt: int,
  at: int,
  kind: text,
  step_idx: z.nullable(int),
  action_id: z.nullable(text),
  data: z.nullable(text),
});
export type EventRow = z.infer<typeof EventRow>;

export const INBOX_STATUSES = ['pending', 'delivered', 'refused'] as const;

/** An event sent to a run (schema version 7): pending until a run.waitFor (or an approval gate) takes it. */
export const InboxRow = z.object({
  seq: int,
  run_id: text,
  name: text,
  /** The dedupe id: given by the sender, or generated. */
  id: text,
  data: z.nullable(text),
  sent_at: int,
  sent_by: text,
  status: z.enum(INBOX_STATUSES),
  /** The step that took it (delivered, or refused by its schema). */
  step_idx: z.nullable(int),
  attempt: z.nullable(int),
  taken_at: z.nullable(int),
  /** Why the run's schema refused it. */
  error: z.nullable(text),
});
export type InboxRow = z.infer<typeof InboxRow>;

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isText = (v: unknown): v is string => typeof v === 'string';
const isTextOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const STEP_STATUS = new Set<unknown>(STEP_STATUSES);
const ACTION_STATUS = new Set<unknown>(ACTION_STATUSES);

/**
 * Replay's hot path reads every journaled row back (a million for a million-action run), and zod costs more per row
 * there than the query when the process is cold. These guards accept exactly what ReplayStepRow / ReplayActionRow
 * accept (a unit test holds them to it); a row they refuse goes through the zod schema, which raises the usual error.
 */
export function replayStepRow(row: readonly unknown[], file: string): ReplayStepRow {
  const [idx, name, status, result, error, attempt] = row;
  const r = { idx, name, status, result, error, attempt };
  if (row.length === 6 && isInt(idx) && isText(name) && STEP_STATUS.has(status) && isTextOrNull(result) && isTextOrNull(error) && isInt(attempt))
    return r as ReplayStepRow;
  return checked(ReplayStepRow, r, 'step', file);
}

/** As replayStepRow, for a header (ReplayStepHead): its result column is the text, or '#', the first character and the size. */
export function replayStepHead(row: readonly unknown[], file: string): ReplayStepHead {
  const [idx, name, status, value, error, attempt] = row;
  const long = typeof value === 'string' && value.charCodeAt(0) === 0x23 ? /^#(\D*)(\d+)$/.exec(value) : undefined;
  const r = long
    ? { idx, name, status, result: null, large: Number(long[2]), lead: long[1] ?? '', error, attempt }
    : { idx, name, status, result: value, large: long === null ? Number.NaN : null, lead: null, error, attempt };
  if (
    row.length === 6 &&
    isInt(idx) &&
    isText(name) &&
    STEP_STATUS.has(status) &&
    isTextOrNull(r.result) &&
    (r.large === null || isInt(r.large)) &&
    isTextOrNull(error) &&
    isInt(attempt)
  )
    return r as ReplayStepHead;
  return checked(ReplayStepHead, r, 'step', file);
}

export function replayActionRow(row: readonly unknown[], file: string): ReplayActionRow {
  const [id, seq, type, version, args, status, result, attempt] = row;
  const r = { id, seq, type, version, args, status, result, attempt };
  if (
    row.length === 8 &&
    isText(id) &&
    isInt(seq) &&
    isText(type) &&
    isInt(version) &&
    isText(args) &&
    ACTION_STATUS.has(status) &&
    isTextOrNull(result) &&
    isInt(attempt)
  )
    return r as ReplayActionRow;
  return checked(ReplayActionRow, r, 'action', file);
}

const EFFECT = new Set<unknown>(EFFECTS);
const RECONCILIATION = new Set<unknown>(RECONCILIATIONS);
const DECISION = new Set<unknown>(['happened', 'not-happened']);
const APPROVAL = new Set<unknown>(['pending', 'approved', 'rejected']);
const COMPENSATION = new Set<unknown>(COMPENSATION_STATUSES);
const nullOr = (set: ReadonlySet<unknown>, v: unknown): boolean => v === null || set.has(v);
const intOrNull = (v: unknown): v is number | null => v === null || isInt(v);

/** An action row read back (`show`, the trace export, compensation, the sidebar): as eventRow, for ActionRow. */
export function actionRow(row: unknown, file: string): ActionRow {
  if (typeof row === 'object' && row !== null) {
    const r = row as Record<string, unknown>;
    if (
      isText(r.run_id) &&
      isText(r.id) &&
      isInt(r.seq) &&
      isInt(r.step_idx) &&
      isText(r.type) &&
      isInt(r.version) &&
      EFFECT.has(r.effect) &&
      isText(r.args) &&
      ACTION_STATUS.has(r.status) &&
      isTextOrNull(r.result) &&
      isTextOrNull(r.error) &&
      isInt(r.executions) &&
      nullOr(RECONCILIATION, r.reconciliation) &&
      nullOr(DECISION, r.decision) &&
      nullOr(APPROVAL, r.approval) &&
      isTextOrNull(r.approval_note) &&
      nullOr(COMPENSATION, r.compensation) &&
      isTextOrNull(r.compensation_result) &&
      isInt(r.compensation_executions) &&
      isInt(r.attempt) &&
      isInt(r.started_at) &&
      intOrNull(r.ended_at) &&
      intOrNull(r.commit_seq)
    ) {
      const { run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions, reconciliation } = r;
      const { decision, approval, approval_note, compensation, compensation_result, compensation_executions, attempt, started_at, ended_at, commit_seq } = r;
      return {
        run_id,
        id,
        seq,
        step_idx,
        type,
        version,
        effect,
        args,
        status,
        result,
        error,
        executions,
        reconciliation,
        decision,
        approval,
        approval_note,
        compensation,
        compensation_result,
        compensation_executions,
        attempt,
        started_at,
        ended_at,
        commit_seq,
      } as ActionRow;
    }
  }
  return checked(ActionRow, row, 'action', file);
}

/**
 * An event row read back (a run's history: `show`, the trace export, the debugger's timeline read every one), with
 * the same guard as replay's: exactly what EventRow accepts, the same object zod would return, zod only for a row it
 * refuses (a unit test holds them to it).
 */
export function eventRow(row: unknown, file: string): EventRow {
  if (typeof row === 'object' && row !== null) {
    const { seq, run_id, attempt, at, kind, step_idx, action_id, data } = row as Record<string, unknown>;
    if (
      isInt(seq) &&
      isText(run_id) &&
      isInt(attempt) &&
      isInt(at) &&
      isText(kind) &&
      (step_idx === null || isInt(step_idx)) &&
      isTextOrNull(action_id) &&
      isTextOrNull(data)
    )
      return { seq, run_id, attempt, at, kind, step_idx, action_id, data };
  }
  return checked(EventRow, row, 'event', file);
}

/** Validates a row read back; a mismatch means the file was edited or damaged. */
export function checked<T>(schema: z.ZodMiniType<T>, row: unknown, what: string, file: string): T {
  const r = schema.safeParse(row, ENGLISH);
  if (r.success) return r.data;
  const o = (typeof row === 'object' && row !== null ? row : {}) as Record<string, unknown>;
  // Named as far as the row itself says: its run, and its step index or action id.
  const runId = typeof o.run_id === 'string' ? o.run_id : what === 'run' && typeof o.id === 'string' ? o.id : undefined;
  const key = what === 'step' && typeof o.idx === 'number' ? ` #${o.idx + 1}` : what === 'action' && typeof o.id === 'string' ? ` ${JSON.stringify(o.id)}` : '';
  throw new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `The journal ${file} holds ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} row${key}${runId === undefined ? '' : ` of run ${runId}`} that does not match the schema (${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}); it was edited or damaged.`,
    `Restore the file from a backup (do not edit journal rows by hand)${runId === undefined ? ', or move it aside to start a fresh journal' : `, or go on without the run: \`logbook delete ${runId}\``}.`,
    { ...(runId === undefined ? {} : { runId }), table: what === 'inbox' ? what : `${what}s` },
  );
}
