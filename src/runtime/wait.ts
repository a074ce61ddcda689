// run.waitFor's rules, apart from the session: what a script may pass, the record its step journals, and the names of
// events (an approval gate's decision is an event too, under a reserved name).

import { ErrorCodes, LogbookError } from './errors';
import { parseDuration } from './sleep';
import { isStandardSchema, type StandardSchema } from './schema';
import { requireWellFormed } from './wellFormed';

/** Names that start so are Logbook's own (an approval gate's decision is `logbook:approval:<action id>`). */
export const RESERVED_EVENT_PREFIX = 'logbook:';

/** The event an approval gate takes its decision as: `logbook approve` sends it (the prefix is refused for run.waitFor and `send`). */
export function approvalEventName(actionId: string): string {
  return `${RESERVED_EVENT_PREFIX}approval:${actionId}`;
}

/** The longest event name: it is a step name and a column value, and people type it. */
const MAX_NAME = 200;

/** An event's name as a sender or a script gives it: checked the same way everywhere (what: who gave it, for the message). */
export function checkEventName(name: unknown, what: string, reservedOk = false): asserts name is string {
  if (typeof name !== 'string' || name.trim().length === 0)
    throw new LogbookError(ErrorCodes.USAGE, `${what}: the event name is missing or empty.`, 'Name the event, e.g. "reply" or "payment.cleared".');
  if (name.length > MAX_NAME)
    throw new LogbookError(ErrorCodes.USAGE, `${what}: the event name is ${name.length} characters long.`, `Use a name of at most ${MAX_NAME} characters.`);
  requireWellFormed(name, `${what}: the event name`);
  if (!reservedOk && name.startsWith(RESERVED_EVENT_PREFIX))
    throw new LogbookError(
      ErrorCodes.USAGE,
      `${what}: event names that start with ${JSON.stringify(RESERVED_EVENT_PREFIX)} are Logbook's own (${JSON.stringify(name)}).`,
      'Approve or reject a gate with `logbook approve` / `logbook reject`; give your own events another name.',
    );
}

/** run.waitFor(name, options) at a step's position, outside any step (`parent`): the checked name, timeout and schema. */
export function checkWaitCall(
  name: unknown,
  options: unknown,
  parent: string | undefined,
): { readonly name: string; readonly timeoutMs: number | undefined; readonly schema: StandardSchema | undefined } {
  try {
    checkEventName(name, 'run.waitFor');
  } catch (err) {
    // A script's mistake: the run stops as for any misuse of the API, not as a bad command line.
    if (err instanceof LogbookError) throw new LogbookError(ErrorCodes.STEP_MISUSE, err.message.slice(0, -err.remedy.length - 1), err.remedy);
    throw err;
  }
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `run.waitFor(${JSON.stringify(name)}): the options are not an object.`,
      "Pass { timeout: '3d', schema } or nothing.",
    );
  const o = (options ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'timeout' && k !== 'schema')
      throw new LogbookError(
        ErrorCodes.STEP_MISUSE,
        `run.waitFor(${JSON.stringify(name)}): unknown option ${JSON.stringify(k)}.`,
        'Use only timeout and schema.',
      );
  if (o.schema !== undefined && !isStandardSchema(o.schema))
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `run.waitFor(${JSON.stringify(name)}): schema is not a Standard Schema.`,
      'Pass a zod schema (or any Standard Schema), e.g. z.object({ text: z.string() }).',
    );
  const timeoutMs = o.timeout === undefined ? undefined : parseDuration(o.timeout, `run.waitFor(${JSON.stringify(name)})'s timeout`);
  if (parent !== undefined)
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `run.waitFor(${JSON.stringify(name)}) was called inside step ${JSON.stringify(parent)}; a wait is a step of its own.`,
      'Call run.waitFor between steps, and pass what it returns to the next step.',
    );
  return { name, timeoutMs, schema: o.schema };
}

/**
 * What a waitFor's step journals. Started: the wait itself (`deadline` null when it has no timeout), so a resume waits
 * only what is left. Completed: the event it took (`data` is what the script got: the schema's output), or the timeout.
 */
export type WaitRecord =
  | { readonly waitFor: string; readonly deadline: number | null; readonly timeout: number | null }
  | {
      readonly waitFor: string;
      readonly event: { readonly id: string; readonly seq: number; readonly sentAt: number; readonly by: string };
      readonly data: unknown;
    }
  | { readonly waitFor: string; readonly timedOut: true; readonly deadline: number };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A completed waitFor's checkpoint: the data it returned, or `timedOut`. Anything else is a step of that name that is not a wait. */
export function replayedWait(value: unknown, name: string, runId: string): { readonly timedOut: boolean; readonly data: unknown } {
  if (isRecord(value) && value.waitFor === name) {
    if (value.timedOut === true) return { timedOut: true, data: undefined };
    if (isRecord(value.event) && 'data' in value) return { timedOut: false, data: value.data };
  }
  throw notAWait(name, runId);
}

/** The deadline a started waitFor's step journaled: null for none, undefined when the step holds no wait (not started as one). */
export function journaledDeadline(value: unknown, name: string): number | null | undefined {
  if (!isRecord(value) || value.waitFor !== name || !('deadline' in value) || 'timedOut' in value) return undefined;
  return typeof value.deadline === 'number' && Number.isFinite(value.deadline) ? value.deadline : null;
}

export function notAWait(name: string, runId: string): LogbookError {
  return new LogbookError(
    ErrorCodes.NONDETERMINISM,
    `run.waitFor(${JSON.stringify(name)}): the journal holds a step of that name that is not a wait (its result is not an event or a timeout).`,
    'Give the wait a name of its own, or start a new run.',
    { runId },
  );
}
