// A person's decision on an in-doubt action as a host gives it (the word, or the word and the result), checked for the journal.

import { ErrorCodes, LogbookError } from './errors';
import { findNonJson } from './json';
import type { Decision } from './types';

/**
 * A decision on an in-doubt action without `verify`: "happened" or "not-happened", or, when a person knows what the
 * effect returned (looked the charge up at the provider, say), `{ decision: 'happened', result }`: then `run.do` (and
 * a tool's model) gets that result, as if `execute` had returned it.
 */
export type DecisionInput = Decision | { readonly decision: 'happened'; readonly result?: unknown } | { readonly decision: 'not-happened' };

/** A decision as the journal keeps it: the word, and the result as journal JSON (null: none was given). */
export interface JournaledDecision {
  readonly decision: Decision;
  readonly result: string | null;
}

const WORDS: readonly unknown[] = ['happened', 'not-happened'];

/**
 * One decision checked, before anything is written: a known word; a result only with "happened", and one the
 * journal can hold (plain JSON). `where` names what gave it, for the message (`journal.resume`, `--decide`).
 */
export function journaledDecision(id: string, given: unknown, where: string): JournaledDecision {
  const shape = `${where}: the decision for ${id}`;
  const example = `{ ${JSON.stringify(id)}: 'happened' }, or { ${JSON.stringify(id)}: { decision: 'happened', result: { … } } } with the result the action had`;
  if (typeof given === 'string') {
    if (!WORDS.includes(given))
      throw new LogbookError(
        ErrorCodes.BAD_DECISION,
        `${shape} is ${JSON.stringify(given)}, not "happened" or "not-happened". Nothing was written.`,
        `Pass ${example}.`,
        { actionId: id },
      );
    return { decision: given as Decision, result: null };
  }
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new LogbookError(
      ErrorCodes.BAD_DECISION,
      `${shape} is ${JSON.stringify(given) ?? String(given)}, not a decision. Nothing was written.`,
      `Pass ${example}.`,
      { actionId: id },
    );
  }
  const { decision, result, ...rest } = given as { decision?: unknown; result?: unknown };
  const extra = Object.keys(rest);
  if (!WORDS.includes(decision) || extra.length > 0) {
    const why = !WORDS.includes(decision)
      ? `its "decision" is ${JSON.stringify(decision) ?? 'missing'}, not "happened" or "not-happened"`
      : `it has ${extra.map((k) => JSON.stringify(k)).join(', ')}, which a decision does not`;
    throw new LogbookError(ErrorCodes.BAD_DECISION, `${shape}: ${why}. Nothing was written.`, `Pass ${example}.`, { actionId: id });
  }
  if (result === undefined) return { decision: decision as Decision, result: null };
  if (decision !== 'happened') {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      `${shape} is "not-happened" with a result: an effect that did not happen has none. Nothing was written.`,
      `Leave the result out, or decide "happened" if it did happen.`,
      { actionId: id },
    );
  }
  const bad = findNonJson(result);
  if (bad) {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      `${shape} has a result the journal cannot hold: ${bad.replace(/^\$/, 'result')}. Nothing was written.`,
      'Give the result as plain JSON (objects, arrays, strings, finite numbers, booleans, null), as execute would have returned it.',
      { actionId: id },
    );
  }
  return { decision: 'happened', result: JSON.stringify(result) };
}

/** Every decision of a resume or a compensation checked, before anything is written. */
export function journaledDecisions(given: unknown, where: string): Record<string, JournaledDecision> {
  if (given === undefined) return {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new LogbookError(
      ErrorCodes.BAD_DECISION,
      `${where}: "decisions" is ${JSON.stringify(given)}, not an object of decisions by action id. Nothing was written.`,
      `Pass { decisions: { '<action id>': 'happened' } }.`,
    );
  }
  const out: Record<string, JournaledDecision> = {};
  for (const [id, d] of Object.entries(given)) out[id] = journaledDecision(id, d, where);
  return out;
}
