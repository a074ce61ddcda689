// Rebuilds a journaled step failure as the error the script caught in the attempt where it happened.

import * as z from 'zod/mini';
import { ActionFailedError, ApprovalRejectedError, ChildRunFailedError, ErrorCodes, LogbookError, type ErrorCode, type ErrorRecord } from './errors';
import { fromJournalJson, journalInvalid, type JournalPlace } from './json';

const Record_ = z.object({
  name: z.optional(z.string()),
  message: z.optional(z.string()),
  code: z.optional(z.string()),
  stack: z.optional(z.string()),
  remedy: z.optional(z.string()),
  details: z.optional(z.record(z.string(), z.unknown())),
  props: z.optional(z.record(z.string(), z.unknown())),
});

/** Logbook's own error classes, by name: a replayed one is an instance of the same class (instanceof works). */
const LOGBOOK_CLASSES: Record<string, abstract new (...args: never[]) => LogbookError> = {
  LogbookError,
  ApprovalRejectedError,
  ActionFailedError,
  ChildRunFailedError,
};

/** JavaScript's own error classes: a TypeError caught in the first attempt is a TypeError on replay. */
const BUILTIN: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

const CODES = new Set<string>(Object.values(ErrorCodes));

/**
 * What is kept: for Logbook's errors, the class, `code`, `message`, `remedy` and `details`; for any other error,
 * `name`, `message`, a string or number `code` (as a string), the original stack (appended below the replay's), and
 * its other own properties that survive JSON. A user's own class cannot be rebuilt from the journal (its constructor
 * may need arguments or do work), so `instanceof MyError` is false on replay: match on `name` or `code` instead.
 */
export function reviveError(text: string | null, place: () => JournalPlace): Error {
  let rec: ErrorRecord = { name: 'Error', message: 'step failed' };
  if (text !== null) {
    // A record that is not JSON, or not an error record, was edited or damaged: replayed, the script would take the
    // damage for its own failure (and a declared compensation would undo its effects).
    const parsed = Record_.safeParse(fromJournalJson(text, place));
    if (!parsed.success) throw journalInvalid(place(), 'holds JSON that is not an error record (name, message, …)');
    rec = { name: parsed.data.name ?? 'Error', message: parsed.data.message ?? 'step failed', ...withoutUndefined(parsed.data) };
  }
  const err =
    rec.code !== undefined && CODES.has(rec.code) && rec.remedy !== undefined ? logbookError(rec, rec.code as ErrorCode, rec.remedy) : plainError(rec);
  if (rec.stack) err.stack = `${err.name}: ${err.message}\n    (replayed from the journal; first thrown at:)\n${rec.stack.split('\n').slice(1).join('\n')}`;
  return err;
}

function logbookError(rec: ErrorRecord, code: ErrorCode, remedy: string): LogbookError {
  const cls = LOGBOOK_CLASSES[rec.name] ?? LogbookError;
  const problem = rec.message.endsWith(` ${remedy}`) ? rec.message.slice(0, rec.message.length - remedy.length - 1) : rec.message;
  // Built through LogbookError's constructor with the subclass's prototype: the subclass's own constructor derives its
  // message from arguments the record no longer has, but the record holds the message it produced.
  const err = Reflect.construct(LogbookError, [code, problem, remedy, rec.details ?? {}], cls) as LogbookError;
  err.name = rec.name;
  if (rec.message !== err.message) Object.defineProperty(err, 'message', { value: rec.message, writable: true, configurable: true });
  return err;
}

function plainError(rec: ErrorRecord): Error {
  const Ctor = BUILTIN[rec.name] ?? Error;
  const err = new Ctor(rec.message);
  if (err.name !== rec.name) err.name = rec.name;
  for (const [k, v] of Object.entries(rec.props ?? {})) {
    if (!(k in err)) (err as unknown as Record<string, unknown>)[k] = v;
  }
  if (rec.code !== undefined) (err as Error & { code?: string }).code = rec.code;
  return err;
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
