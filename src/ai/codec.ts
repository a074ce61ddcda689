// JSON for the journal of SDK values: dates, bytes and URLs tagged so they round-trip; errors keep name and fields.

/** The tag of an encoded non-JSON value; an object with this key and nothing but `v` is decoded back. */
const TAG = '$lb';

type Tagged = { [TAG]: 'date' | 'bytes' | 'url' | 'error' | 'undefined'; v?: unknown };

/** Turns an SDK value into plain JSON: Date, Uint8Array, URL and Error are tagged; undefined fields and functions dropped. */
export function encode(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined;
  if (value instanceof Date) return { [TAG]: 'date', v: value.toISOString() } satisfies Tagged;
  if (value instanceof Uint8Array)
    return { [TAG]: 'bytes', v: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') } satisfies Tagged;
  if (value instanceof ArrayBuffer) return encode(new Uint8Array(value));
  if (value instanceof URL) return { [TAG]: 'url', v: value.href } satisfies Tagged;
  if (value instanceof Error) return { [TAG]: 'error', v: errorFields(value) } satisfies Tagged;
  if (Array.isArray(value)) return value.map((x) => encode(x) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const e = encode(v);
    if (e !== undefined) out[k] = e;
  }
  return out;
}

/** The inverse of encode. */
export function decode(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decode);
  const o = value as Record<string, unknown>;
  const tag = o[TAG];
  if (typeof tag === 'string' && Object.keys(o).length <= 2) {
    switch (tag) {
      case 'date':
        return new Date(String(o.v));
      case 'bytes':
        return new Uint8Array(Buffer.from(String(o.v), 'base64'));
      case 'url':
        return new URL(String(o.v));
      case 'error':
        return rebuildError(o.v);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = decode(v);
  return out;
}

/** The AI SDK marks its errors with registered symbols (`Symbol.for('vercel.ai.error.…')`); isInstance checks them. */
const MARKERS = '$markers';

function errorFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: err.name, message: err.message };
  const markers = Object.getOwnPropertySymbols(err)
    .filter((s) => (err as unknown as Record<symbol, unknown>)[s] === true)
    .map((s) => Symbol.keyFor(s))
    .filter((k): k is string => k !== undefined);
  if (markers.length > 0) fields[MARKERS] = markers;
  for (const [k, v] of Object.entries(err)) {
    if (k === 'cause' || k === 'requestBodyValues' || k === 'responseHeaders') continue;
    const e = encode(v);
    if (e !== undefined) fields[k] = e;
  }
  return fields;
}

/** An error read back from the journal: same name, message and data fields (statusCode, isRetryable, …). */
function rebuildError(v: unknown): Error {
  const fields = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const err = new Error(typeof fields.message === 'string' ? fields.message : 'error');
  for (const [k, x] of Object.entries(fields)) {
    if (k === MARKERS && Array.isArray(x)) for (const m of x) (err as unknown as Record<symbol, unknown>)[Symbol.for(String(m))] = true;
    else if (k !== 'message') (err as unknown as Record<string, unknown>)[k] = decode(x);
  }
  Object.defineProperty(err, 'replayed', { value: true, enumerable: false });
  return err;
}

/** JSON with sorted keys: the same value always gives the same text, whatever order its fields were built in. */
export function sortKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sortKeys);
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) out[k] = sortKeys(o[k]);
  return out;
}

/** The value of journaled JSON text; undefined for null or for text that does not parse (a view shows nothing then). */
export function jsonOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
