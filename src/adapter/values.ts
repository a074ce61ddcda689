// Adapter side: wire values as the JavaScript debugger shows them — previews, types, and children to expand.

import { TAG, isTagged, type Tagged } from '../link/wire';

const PREVIEW = 100;

function quote(s: string, max = PREVIEW): string {
  const body = s.length > max ? `${s.slice(0, max)}…` : s;
  return `'${body.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isTagged(v);
}

function key(k: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(k) ? k : quote(k);
}

/** A short form for values nested inside a preview. */
function brief(v: unknown): string {
  if (Array.isArray(v)) return `Array(${v.length})`;
  if (isPlainObject(v)) return Object.keys(v).length ? '{…}' : '{}';
  if (typeof v === 'string') return quote(v, 50);
  return preview(v);
}

function list(items: string[], budget: number): string {
  let out = '';
  for (const [i, s] of items.entries()) {
    const next = out ? `${out}, ${s}` : s;
    if (next.length > budget) return `${out}${i > 0 ? ', ' : ''}…`;
    out = next;
  }
  return out;
}

function taggedPreview(t: Tagged): string {
  switch (t[TAG]) {
    case 'undefined':
      return 'undefined';
    case 'circular':
      return '[Circular]';
    case 'error':
      return `${t.name}: ${t.message}`;
    case 'map':
      return `Map(${t.size}) {${list(
        t.entries.map(([k, x]) => `${brief(k)} => ${brief(x)}`),
        PREVIEW,
      )}}`;
    case 'set':
      return `Set(${t.size}) {${list(t.values.map(brief), PREVIEW)}}`;
    case 'instance':
      return `${t.class} {${list(
        Object.entries(t.props).map(([k, x]) => `${key(k)}: ${brief(x)}`),
        PREVIEW,
      )}}`;
    case 'array':
      return `(${t.length}) [${list(t.items.map(brief), PREVIEW)}]`;
    default:
      return t.text;
  }
}

export function preview(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (v === null || typeof v !== 'object') return String(v);
  if (isTagged(v)) return taggedPreview(v);
  if (Array.isArray(v)) return `(${v.length}) [${list(v.map(brief), PREVIEW)}]`;
  return `{${list(
    Object.entries(v).map(([k, x]) => `${key(k)}: ${brief(x)}`),
    PREVIEW,
  )}}`;
}

export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (isTagged(v)) {
    const t = v[TAG];
    if (t === 'instance') return v.class;
    return t === 'number' ? 'number' : t;
  }
  return typeof v;
}

export interface Children {
  readonly named: Array<[string, unknown]>;
  /** Elements of an array, addressed by index (paged by the client). */
  readonly indexed?: unknown[];
}

export function children(v: unknown): Children | undefined {
  if (Array.isArray(v)) return { named: [], indexed: v };
  if (isPlainObject(v)) return { named: Object.entries(v) };
  if (!isTagged(v)) return undefined;
  switch (v[TAG]) {
    case 'error':
      return { named: [['name', v.name], ['message', v.message], ...(v.stack ? ([['stack', v.stack]] as Array<[string, unknown]>) : [])] };
    case 'map':
      return { named: [['size', v.size]], indexed: v.entries.map(([k, x]) => ({ key: k, value: x })) };
    case 'set':
      return { named: [['size', v.size]], indexed: v.values };
    case 'instance':
      return { named: Object.entries(v.props) };
    case 'array':
      return { named: [['length', v.length]], indexed: v.items };
    default:
      return undefined;
  }
}

export function isExpandable(v: unknown): boolean {
  const c = children(v);
  return c !== undefined && (c.named.length > 0 || (c.indexed?.length ?? 0) > 0);
}

/** The expression that reaches a child, for "copy as expression" and "add to watch". */
export function childPath(parent: string | undefined, name: string, indexed: boolean): string | undefined {
  if (parent === undefined) return undefined;
  if (indexed) return `${parent}[${name}]`;
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`;
}
