// Any JavaScript value → JSON that crosses the process boundary, with tagged leaves for what JSON cannot hold.

/** The key of a tagged leaf; a NUL character cannot collide with a real property name in practice. */
export const TAG = '\u0000lb';

export type Tagged =
  | { [TAG]: 'undefined' }
  | { [TAG]: 'circular' }
  | { [TAG]: 'function' | 'bigint' | 'symbol' | 'number' | 'date' | 'truncated'; text: string }
  | { [TAG]: 'error'; name: string; message: string; stack?: string }
  | { [TAG]: 'map'; size: number; entries: Array<[unknown, unknown]> }
  | { [TAG]: 'set'; size: number; values: unknown[] }
  | { [TAG]: 'instance'; class: string; props: Record<string, unknown> }
  | { [TAG]: 'array'; length: number; items: unknown[] };

const MAX_DEPTH = 12;
const MAX_ITEMS = 2000;

export function isTagged(v: unknown): v is Tagged {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Record<string, unknown>)[TAG] === 'string';
}

export function toWire(value: unknown): unknown {
  const stack = new Set<object>();
  const walk = (v: unknown, depth: number): unknown => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        return Number.isFinite(v) && !Object.is(v, -0) ? v : { [TAG]: 'number', text: Object.is(v, -0) ? '-0' : String(v) };
      case 'undefined':
        return { [TAG]: 'undefined' };
      case 'bigint':
        return { [TAG]: 'bigint', text: `${v}n` };
      case 'symbol':
        return { [TAG]: 'symbol', text: v.toString() };
      case 'function':
        return { [TAG]: 'function', text: `ƒ ${v.name || 'anonymous'}` };
      default:
        break;
    }
    if (v === null) return null;
    const o = v as object;
    if (stack.has(o)) return { [TAG]: 'circular' };
    if (depth >= MAX_DEPTH) return { [TAG]: 'truncated', text: Array.isArray(o) ? `Array(${o.length})` : (o.constructor?.name ?? 'Object') };
    stack.add(o);
    try {
      if (Array.isArray(o)) {
        const items = o.slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1));
        return o.length > MAX_ITEMS ? { [TAG]: 'array', length: o.length, items } : items;
      }
      // Tags rather than instanceof: values made by an expression come from the evaluation sandbox's realm.
      const tag = Object.prototype.toString.call(o);
      if (tag === '[object Date]') return { [TAG]: 'date', text: Number.isNaN((o as Date).getTime()) ? 'Invalid Date' : (o as Date).toISOString() };
      if (tag === '[object Error]') {
        const e = o as Error;
        return { [TAG]: 'error', name: String(e.name), message: String(e.message), ...(e.stack ? { stack: String(e.stack) } : {}) };
      }
      if (tag === '[object Map]')
        return {
          [TAG]: 'map',
          size: (o as Map<unknown, unknown>).size,
          entries: [...(o as Map<unknown, unknown>)].slice(0, MAX_ITEMS).map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1)]),
        };
      if (tag === '[object Set]')
        return { [TAG]: 'set', size: (o as Set<unknown>).size, values: [...(o as Set<unknown>)].slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1)) };
      const props: Record<string, unknown> = {};
      let n = 0;
      for (const k of Object.keys(o)) {
        if (n++ >= MAX_ITEMS) break;
        let child: unknown;
        try {
          child = (o as Record<string, unknown>)[k];
        } catch (err) {
          child = { [TAG]: 'error', name: 'Error', message: `getter threw: ${(err as Error)?.message ?? String(err)}` };
        }
        props[k] = walk(child, depth + 1);
      }
      const proto = Object.getPrototypeOf(o) as object | null;
      // A plain object of any realm: its prototype is null or some realm's Object.prototype.
      if (proto === null || Object.getPrototypeOf(proto) === null) return props;
      return { [TAG]: 'instance', class: (o.constructor as { name?: string } | undefined)?.name ?? 'Object', props };
    } finally {
      stack.delete(o);
    }
  };
  return walk(value, 0);
}
