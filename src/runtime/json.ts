// JSON-safety: values that would not survive a JSON round trip are refused with the path of the bad value.

import { ErrorCodes, LogbookError } from './errors';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Nesting deeper than this is checked by the slow walk, which also finds cycles (a cycle nests without end). */
const FAST_DEPTH = 256;

/**
 * The hot path's check: true when every part of the value round-trips through JSON. It builds no path strings and
 * keeps no set of visited objects, so it costs about as much as JSON.stringify; on any doubt (a bad value, or nesting
 * deep enough to be a cycle) it returns false and the caller asks findNonJson, which says exactly what and where.
 */
function isPlainJson(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth > FAST_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isPlainJson(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  const o = v as Record<string, unknown>;
  for (const k in o) if (!isPlainJson(o[k], depth + 1)) return false;
  return true;
}

/** Returns a description of the first value that would not round-trip, or undefined when the value is safe. */
export function findNonJson(value: unknown, path = '$'): string | undefined {
  return isPlainJson(value, 0) ? undefined : describeNonJson(value, path);
}

/** The slow walk behind findNonJson: the path of the first bad value, cycles included. */
function describeNonJson(value: unknown, path: string): string | undefined {
  const seen = new Set<object>();
  const walk = (v: unknown, p: string): string | undefined => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return undefined;
      case 'number':
        return Number.isFinite(v) ? undefined : `${p} is ${String(v)}, which JSON cannot hold`;
      case 'undefined':
        return `${p} is undefined, which JSON drops`;
      case 'function':
        return `${p} is a function`;
      case 'bigint':
        return `${p} is a BigInt (${String(v)}n); store it as a string`;
      case 'symbol':
        return `${p} is a Symbol`;
      case 'object':
        break;
    }
    if (v === null) return undefined;
    const o = v;
    if (seen.has(o)) return `${p} is a cycle back to an enclosing object`;
    if (Array.isArray(o)) {
      seen.add(o);
      for (let i = 0; i < o.length; i++) {
        const r = walk(o[i], `${p}[${i}]`);
        if (r) return r;
      }
      seen.delete(o);
      return undefined;
    }
    const proto = Object.getPrototypeOf(o) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const name = (o.constructor as { name?: string } | undefined)?.name ?? 'object';
      const hint =
        o instanceof Date ? '; store date.toISOString()' : o instanceof Map ? '; store Object.fromEntries(map)' : o instanceof Set ? '; store [...set]' : '';
      return `${p} is a ${name}, not a plain object${hint}`;
    }
    seen.add(o);
    for (const [k, child] of Object.entries(o)) {
      const r = walk(child, `${p}${/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`);
      if (r) return r;
    }
    seen.delete(o);
    return undefined;
  };
  return walk(value, path);
}

/**
 * Serialises a value for the journal. Top-level `undefined` is allowed (a step or effect that returns nothing)
 * and is stored as SQL NULL; anything else that would not round-trip is refused.
 */
export function toJournalJson(value: unknown, what: string, remedy: string): string | null {
  if (value === undefined) return null;
  const bad = findNonJson(value);
  if (bad) {
    throw new LogbookError(ErrorCodes.NOT_JSON, `${what} cannot be journaled: ${bad}.`, remedy, { path: bad.split(' ')[0] });
  }
  return JSON.stringify(value);
}

/**
 * Where a journaled value lives: the run, its row (the run's own, a step's or an action's) and the column. What
 * LB_JOURNAL_INVALID names, so a person can find the damaged value.
 */
export type JournalPlace =
  | { readonly runId: string; readonly table: 'runs'; readonly column: 'input' | 'output' | 'error' }
  | { readonly runId: string; readonly table: 'steps'; readonly idx: number; readonly name?: string; readonly column: 'result' | 'error' }
  | {
      readonly runId: string;
      readonly table: 'actions';
      readonly id: string;
      readonly stepIdx?: number;
      /** `id`: the action's key itself is damaged (stored as something other than text), not a value. */
      readonly column: 'args' | 'result' | 'error' | 'compensation_result' | 'id';
    }
  | {
      readonly runId: string;
      readonly table: 'inbox';
      readonly seq: number;
      readonly name: string;
      /** `id`: the event's dedupe id itself is damaged (stored as something other than text), not a value. */
      readonly column: 'data' | 'error' | 'id';
    };

/** Where an action's journaled value lives (an action row: its run, id and step). */
export function actionPlace(
  a: { readonly run_id: string; readonly id: string; readonly step_idx: number },
  column: 'args' | 'result' | 'error' | 'compensation_result',
): JournalPlace {
  return { runId: a.run_id, table: 'actions', id: a.id, stepIdx: a.step_idx, column };
}

/** The row and column of a place, as a person reads them: `step #3 "charge", column result`. */
export function describePlace(p: JournalPlace): string {
  switch (p.table) {
    case 'runs':
      return `the run's own row, column ${p.column}`;
    case 'steps':
      return `step #${p.idx + 1}${p.name === undefined ? '' : ` ${JSON.stringify(p.name)}`}, column ${p.column}`;
    case 'actions':
      return `action ${JSON.stringify(p.id)}${p.stepIdx === undefined ? '' : ` (step #${p.stepIdx + 1})`}, column ${p.column}`;
    case 'inbox':
      return `event #${p.seq} ${JSON.stringify(p.name)} sent to it, column ${p.column}`;
  }
}

/**
 * A damaged journal value (edited by hand, or damaged on disk): never the script's failure. It is a journal error, like
 * a storage failure: the run stops resumable and no declared policy fires. `nothingWritten` when it was found before
 * the command wrote anything.
 */
export function journalInvalid(p: JournalPlace, why: string, nothingWritten = false): LogbookError {
  const base = 'Restore the journal from a backup (do not edit its rows by hand).';
  const without =
    p.table === 'steps'
      ? ` Without one, \`logbook compensate ${p.runId}\` undoes its effects (it reads no checkpoint)${p.idx > 0 ? `, \`logbook fork ${p.runId} --step ${p.idx}\` replays it up to the step before under a new run id (redoing the effects from step #${p.idx + 1} under their own keys)` : ''}, or \`logbook delete ${p.runId}\` removes it.`
      : ` Without one, \`logbook delete ${p.runId}\` removes the run (its effects stay as they are outside).`;
  return new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `The journal of run ${p.runId} is damaged: ${describePlace(p)} ${why}; a value edited or damaged is not taken for the script's result or failure.${nothingWritten ? ' Nothing was written.' : ''}`,
    base + without,
    { ...p },
  );
}

/** What is wrong at a damaged place: a value that is not JSON, or a key (an action's, an event's dedupe id) that is not text. */
export function damageAt(p: JournalPlace): string {
  if (p.table === 'actions' && p.column === 'id')
    return "is not stored as text: it is the action's key, so the row cannot be found by it, and the action would be taken for a new one and run again";
  if (p.table === 'inbox' && p.column === 'id')
    return 'is not stored as text: it is the dedupe id, so an event sent again with it would not be found, and would be kept a second time';
  return 'holds text that is not JSON';
}

/** Why a journaled text is not JSON, or undefined when it is. */
function notJson(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return `holds text that is not JSON (${err instanceof Error ? err.message : String(err)})`;
  }
}

/**
 * A journaled value read back: SQL NULL is `undefined`; text that is not JSON is LB_JOURNAL_INVALID naming the run, the
 * row and the column (`place` is called only then, so the hot path builds nothing).
 */
export function fromJournalJson(text: string | null, place: () => JournalPlace): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw journalInvalid(place(), notJson(text) ?? 'cannot be read');
  }
}

/** A value for display (`show`, the sidebar): the parsed value, or the damage, without throwing. */
export type Displayed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: LogbookError };

export function displayJournalJson(text: string | null, place: () => JournalPlace): Displayed {
  try {
    return { ok: true, value: fromJournalJson(text, place) };
  } catch (err) {
    if (err instanceof LogbookError) return { ok: false, error: err };
    throw err;
  }
}

/** Checks a journaled text without keeping its value: the damage, or undefined. */
export function journalTextDamage(text: string | null, place: () => JournalPlace, nothingWritten = true): LogbookError | undefined {
  if (text === null) return undefined;
  const why = notJson(text);
  return why === undefined ? undefined : journalInvalid(place(), why, nothingWritten);
}
