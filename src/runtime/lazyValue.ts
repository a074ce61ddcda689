// A large checkpoint returned by replay without parsing it: a view that parses the journaled text when first used.

import { inspect } from 'node:util';
import { LogbookError } from './errors';
import { fromJournalJson, journalInvalid, type JournalPlace } from './json';

/**
 * Replayed checkpoints at least this long (bytes of JSON) are returned as lazy views: a resume of a run whose steps
 * each checkpoint a large state parses only the ones the script reads (usually the latest), as LangGraph loads only
 * its latest checkpoint. Shorter ones are parsed at once: a view costs more than parsing them.
 */
export const LAZY_ABOVE_BYTES = 64 * 1024;

/**
 * The journaled JSON object (`lead` "{") or array ("[") that `read` returns, as a Proxy of an empty object or array
 * that reads and parses it, and takes its properties, on first use of any kind (a read, a key listing, a write,
 * JSON.stringify, util.inspect), and from then on is that value. A value that cannot be read back, or is not JSON, is
 * LB_JOURNAL_INVALID (or the storage error) at that first use, handed to `damaged` first (the session stops the run as
 * a journal failure, not the script's), then thrown. What a view cannot do is what no Proxy can: be structured-cloned
 * (structuredClone, postMessage) as it is: `{ ...value }` or `JSON.parse(JSON.stringify(value))` copies it. It reads
 * the journal it came from, which must still be open when it is first used.
 */
export function lazyJournalValue(lead: '{' | '[', read: () => string, place: () => JournalPlace, damaged: (err: LogbookError) => void): object {
  const target: object = lead === '[' ? [] : {};
  let pending = true;
  const load = (): void => {
    if (!pending) return;
    let value: unknown;
    try {
      value = fromJournalJson(read(), place);
      if (typeof value !== 'object' || value === null || Array.isArray(value) !== (lead === '['))
        throw journalInvalid(place(), 'changed since it was replayed');
    } catch (err) {
      if (err instanceof LogbookError) damaged(err);
      throw err;
    }
    pending = false;
    Reflect.deleteProperty(target, inspect.custom);
    // Copied property by property (a "__proto__" key of the JSON stays an own property, as JSON.parse made it).
    for (const key of Reflect.ownKeys(value)) {
      const d = Reflect.getOwnPropertyDescriptor(value, key);
      if (d) Reflect.defineProperty(target, key, d);
    }
  };
  // util.inspect looks at a Proxy's target without its traps: the target shows the value itself, loaded.
  Object.defineProperty(target, inspect.custom, {
    configurable: true,
    enumerable: false,
    value: () => {
      load();
      return target;
    },
  });
  return new Proxy(target, {
    get: (t, key, receiver) => {
      // settledWith's own look at `then` (JSON holds no function, so the answer is "no thenable" either way).
      if (key === 'then' && receiver === settling) return undefined;
      load();
      return Reflect.get(t, key, receiver) as unknown;
    },
    set: (t, key, value, receiver) => (load(), Reflect.set(t, key, value, receiver)),
    has: (t, key) => (load(), Reflect.has(t, key)),
    deleteProperty: (t, key) => (load(), Reflect.deleteProperty(t, key)),
    ownKeys: (t) => (load(), Reflect.ownKeys(t)),
    getOwnPropertyDescriptor: (t, key) => (load(), Reflect.getOwnPropertyDescriptor(t, key)),
    defineProperty: (t, key, d) => (load(), Reflect.defineProperty(t, key, d)),
    setPrototypeOf: (t, proto) => (load(), Reflect.setPrototypeOf(t, proto)),
    preventExtensions: (t) => (load(), Reflect.preventExtensions(t)),
  });
}

let settling: unknown;

/**
 * A promise fulfilled with `value`. Settling a promise reads `then` of the value (is it a thenable?): that read, made
 * here, does not load a lazy view, so replay can hand one to the script through run.step's promise untouched.
 */
export function settledWith<T>(value: T): Promise<T> {
  settling = value;
  try {
    return Promise.resolve(value);
  } finally {
    settling = undefined;
  }
}
