// The checks of what a script passes to run.step, run.do and run.note: each refusal says how to call it instead.

import { ErrorCodes, LogbookError, describe } from './errors';
import { isAction, type ActionDefinition } from './define';
import { requireWellFormed } from './wellFormed';
import { toJournalJson } from './json';
import { validateNow, type InferOutput, type StandardSchema, type Validated } from './schema';
import { SECRET_FIELD_HINT, warnSecretFields } from './warnings';
import type { RunApi } from './types';

/** run.step(name, fn) at `position` (from 1), inside the step named `parent` if any: steps have names and do not nest. */
export function checkStepCall(name: unknown, fn: unknown, position: number, parent: string | undefined): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      'run.step was called without a name.',
      'Give every step a stable, descriptive name: run.step("load recipients", () => …).',
    );
  }
  if (typeof fn !== 'function') {
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `run.step(${JSON.stringify(name)}) was called without a function.`,
      'Pass the step body as the second argument.',
    );
  }
  requireWellFormed(name, `The name of step #${position}`);
  if (parent !== undefined) {
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `run.step(${JSON.stringify(name)}) was called inside step ${JSON.stringify(parent)}; steps do not nest.`,
      'Call the inner work with run.do inside the outer step, or make it a step of its own after it.',
    );
  }
}

/** run.do(action, …) takes an action made with defineAction, inside a step (`frame`, the step it is called in). */
export function checkActionCall<F>(action: unknown, frame: F | undefined): asserts frame is F {
  if (!isAction(action)) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      'run.do was called with something that is not an action.',
      'Pass an action made with defineAction({...}).',
    );
  }
  if (frame === undefined) {
    throw new LogbookError(
      ErrorCodes.ACTION_OUTSIDE_STEP,
      `run.do(${action.type}) was called outside a step.`,
      `Wrap it in a step: await run.step("…", () => run.do(${action.type.replace(/\W+(\w)/g, (_, c: string) => c.toUpperCase())}, args)).`,
    );
  }
}

/**
 * The args of run.do checked against the action's schema and the journal's JSON; a field named like a secret is warned
 * about once. Synchronous when the schema is (a promise only for an async one), so run.do takes no extra turn.
 */
export function checkedArgs<S extends StandardSchema, R>(
  action: ActionDefinition<S, R>,
  args: unknown,
  log: (line: string) => void,
  warned: Set<string>,
): CheckedArgs<S> | Promise<CheckedArgs<S>> {
  const v = validateNow(action.args, args);
  return v instanceof Promise ? v.then((r) => journaledArgs(action, r, log, warned)) : journaledArgs(action, v, log, warned);
}

type CheckedArgs<S extends StandardSchema> = { readonly parsed: InferOutput<S>; readonly json: string };

function journaledArgs<S extends StandardSchema, R>(
  action: ActionDefinition<S, R>,
  v: Validated<unknown>,
  log: (line: string) => void,
  warned: Set<string>,
): CheckedArgs<S> {
  if (!v.ok) {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      `The args of ${action.type} are invalid: ${v.message}.`,
      `Fix the values passed to run.do(${action.type}, …) so they match its args schema.`,
      { type: action.type },
    );
  }
  const parsed = v.value as InferOutput<S>;
  const json =
    toJournalJson(parsed, `The args of ${action.type}`, 'Pass plain JSON values (strings, numbers, booleans, arrays, plain objects) as action args.') ?? 'null';
  if (SECRET_FIELD_HINT.test(json)) warnSecretFields(parsed, 'args', `the args of ${action.type}`, log, warned);
  return { parsed, json };
}

/** The action's key for these args: a non-empty, well-formed string its key function derives. */
export function actionKey<S extends StandardSchema, R>(action: ActionDefinition<S, R>, parsed: InferOutput<S>, api: RunApi): string {
  let key: unknown;
  try {
    key = action.key(parsed, api);
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      `The key function of ${action.type} threw: ${describe(err)}.`,
      'Make key(args, run) a pure function of the args and run id.',
      { type: action.type },
    );
  }
  if (typeof key !== 'string' || key.length === 0) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      `The key function of ${action.type} returned ${JSON.stringify(key)}, not a non-empty string.`,
      "Return a string derived from the action's meaning, e.g. `email:${run.id}:${args.to}`.",
      { type: action.type },
    );
  }
  requireWellFormed(key, `The key of ${action.type}`, { type: action.type });
  return key;
}

/** One action id, two effects: another type, or other args, than the journal (or a call in flight) has for it. */
export function keyConflict(type: string, id: string, before: string, now: string, beforeType?: string): LogbookError {
  return new LogbookError(
    ErrorCodes.KEY_CONFLICT,
    beforeType && beforeType !== type
      ? `Action id ${id} was used by ${beforeType} and now by ${type} (args ${clip(before)} then ${clip(now)}): two action types cannot share an id. Nothing new was executed.`
      : `Action id ${id} was used twice by ${type} with different args (${clip(before)} then ${clip(now)}). Nothing new was executed.`,
    'Make the key include whatever distinguishes the two effects (e.g. the action type or the recipient), or pass the same args.',
    { id, type, before, now, ...(beforeType ? { beforeType } : {}) },
  );
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** run.note(kind, data): a named note of plain JSON; returns the data as the journal keeps it. */
export function checkedNote(kind: unknown, data: unknown): unknown {
  if (typeof kind !== 'string' || kind.length === 0) {
    throw new LogbookError(ErrorCodes.INVALID_ARGS, 'run.note was called without a kind.', 'Name the note, e.g. run.note("model.partial", { text }).');
  }
  requireWellFormed(kind, 'The kind of a note');
  const json = toJournalJson(data, `The note ${kind}`, 'Pass plain JSON to run.note.');
  return json === null ? null : (JSON.parse(json) as unknown);
}
