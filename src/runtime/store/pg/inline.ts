// A transaction's batch as one simple-protocol query: its parameters inlined as literals (its fence raises in the server), so the batch is one round trip instead of one per statement.
//
// The extended protocol (a statement with $n parameters) takes one round trip per statement; the simple protocol
// takes a whole string of statements in one, and the server stops at the first that fails. What may be inlined is
// what has an exact literal: text without NUL (the simple protocol is NUL-terminated), finite numbers, bigints and
// NULL. Anything else, or a statement whose rows are wanted as arrays, leaves the batch to the statement-by-statement
// path (inlineBatch returns undefined), so nothing is ever sent differently from what it means.

import type { PgStatementMsg } from './threadProtocol';

/** The SQLSTATE the fence (logbook_fence, PG migration 9) raises when the lease is not held (five upper-case letters: a class of its own). */
export const FENCE_SQLSTATE = 'LBFNC';

function literal(v: unknown, escapeLiteral: (s: string) => string): string | undefined {
  if (v === null) return 'NULL';
  // A number as a quoted literal, the text pg sends for it as a parameter: an untyped literal takes its type from where
  // it stands exactly as an untyped parameter does, where a bare 1.5 would be numeric (rounded into an integer column
  // instead of refused), 1e21 would reach a text column as 1000000000000000000000, and 42 = a text column would not
  // even parse. Quoted, a negative number cannot make a comment after a minus (`--5`) either.
  if (typeof v === 'number') return Number.isFinite(v) ? `'${String(v)}'` : undefined;
  if (typeof v === 'bigint') return `'${String(v)}'`;
  if (typeof v === 'string') return v.includes('\u0000') ? undefined : escapeLiteral(v);
  return undefined;
}

/** `sql` with each $n outside quotes replaced by its parameter's literal; undefined if one has none. */
export function inlineParams(sql: string, params: readonly unknown[], escapeLiteral: (s: string) => string): string | undefined {
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      out += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
      continue;
    }
    const m = ch === '$' ? /^\$(\d+)/.exec(sql.slice(i)) : null;
    if (!m) {
      out += ch;
      continue;
    }
    const n = Number(m[1]);
    if (n < 1 || n > params.length) return undefined;
    const lit = literal(params[n - 1], escapeLiteral);
    if (lit === undefined) return undefined;
    out += lit;
    i += m[0].length - 1;
  }
  return quote === undefined ? out : undefined;
}

/**
 * The batch as one query string, or undefined when it must go statement by statement. Its fence (PgDb.fence) raises
 * FENCE_SQLSTATE itself when the lease is not held, which aborts everything after it in the string, as the
 * statement-by-statement path stops sending after it.
 */
export function inlineBatch(items: readonly PgStatementMsg[], escapeLiteral: (s: string) => string): string | undefined {
  if (items.length < 2) return undefined;
  const parts: string[] = [];
  for (const item of items) {
    if (item.array) return undefined;
    // A comment in the statement would swallow the separator after it. The values cannot add one: text is quoted, and
    // numbers are quoted too.
    if (/--|\/\*/.test(item.sql)) return undefined;
    const sql = inlineParams(item.sql, item.params, escapeLiteral);
    if (sql === undefined) return undefined;
    parts.push(sql);
  }
  return parts.join(';\n');
}
