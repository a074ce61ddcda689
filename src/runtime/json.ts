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
      const hint = o instanceof Date ? '; store date.toISOString()' : o instanceof Map ? '; store Object.fromEntries(map)' : o instanceof Set ? '; store [...set]' : '';
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

export function fromJournalJson(text: string | null): unknown {
  return text === null ? undefined : (JSON.parse(text) as unknown);
}
