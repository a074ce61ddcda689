// A transaction's batch inlined into one PostgreSQL query: exact literals only, everything else left to the statement-by-statement path.

import { strict as assert } from 'node:assert';
import { Client } from 'pg';
import { inlineBatch, inlineParams } from '../../src/runtime/store/pg/inline';

// pg's own escaping, as the PG thread uses it (no connection needed).
const client = new Client();
const esc = (s: string): string => client.escapeLiteral(s);
const stmt = (sql: string, params: unknown[], extra: { fence?: boolean; array?: boolean } = {}) => ({
  sql,
  params,
  array: extra.array ?? false,
  ...(extra.fence ? { fence: true } : {}),
});

describe('PostgreSQL batch inlining (store/pg/inline.ts)', () => {
  it('inlines text, numbers and NULL as literals, and leaves $n inside quotes alone', () => {
    assert.equal(
      inlineParams("UPDATE t SET a = $1, b = $2, c = $3 WHERE d = '$1' AND e = $4", ["it's", 42, null, 12345678901234], esc),
      "UPDATE t SET a = 'it''s', b = '42', c = NULL WHERE d = '$1' AND e = '12345678901234'",
    );
    assert.equal(inlineParams('SELECT $1', ['a\\b'], esc), "SELECT  E'a\\\\b'");
    assert.equal(inlineParams('SELECT $10, $1', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], esc), "SELECT '10', '1'");
    // Numbers quoted, as pg sends them: typed by where they stand, and after a minus never a comment (`--5`).
    assert.equal(inlineParams('SELECT 1 -$1, $2', [-5, 'a -- b'], esc), "SELECT 1 -'-5', 'a -- b'");
    assert.equal(inlineParams('SELECT -$1, $2', [-7n, 1e21], esc), "SELECT -'-7', '1e+21'");
  });

  it('refuses what has no exact literal: NUL in text, NaN, a buffer, a missing parameter, an open quote', () => {
    assert.equal(inlineParams('SELECT $1', ['a\u0000b'], esc), undefined);
    assert.equal(inlineParams('SELECT $1', [Number.NaN], esc), undefined);
    assert.equal(inlineParams('SELECT $1', [Buffer.from('x')], esc), undefined);
    assert.equal(inlineParams('SELECT $2', ['x'], esc), undefined);
    assert.equal(inlineParams("SELECT 'open", [], esc), undefined);
  });

  it('joins a batch into one query, the fence (a function that raises its own SQLSTATE) a statement like the others', () => {
    const q = inlineBatch(
      [
        stmt('BEGIN', []),
        stmt('SELECT logbook_fence($1, $2, $3, $4, $5)', [1, 30000, 'r', 't', 2], { fence: true }),
        stmt('INSERT INTO e VALUES ($1)', ['v']),
        stmt('COMMIT', []),
      ],
      esc,
    );
    assert.equal(q, "BEGIN;\nSELECT logbook_fence('1', '30000', 'r', 't', '2');\nINSERT INTO e VALUES ('v');\nCOMMIT");
  });

  it('leaves to the statement-by-statement path a single statement, rows wanted as arrays, comments, or any statement it cannot inline', () => {
    assert.equal(inlineBatch([stmt('SELECT 1', [])], esc), undefined);
    assert.equal(inlineBatch([stmt('BEGIN', []), stmt('SELECT a FROM t', [], { array: true })], esc), undefined);
    assert.equal(inlineBatch([stmt('BEGIN', []), stmt('SELECT 1 -- why', [])], esc), undefined);
    assert.equal(
      inlineBatch([stmt('BEGIN', []), stmt('INSERT INTO t VALUES ($1)', ['-- not a comment'])], esc),
      "BEGIN;\nINSERT INTO t VALUES ('-- not a comment')",
    );
    assert.equal(inlineBatch([stmt('BEGIN', []), stmt('INSERT INTO t VALUES ($1)', ['a\u0000'])], esc), undefined);
    // Dollar quotes in a value stay inside its quoted literal, in the fence as anywhere.
    assert.equal(
      inlineBatch([stmt('BEGIN', []), stmt('SELECT logbook_fence($1, $2)', ['a$fn$b', '$$'], { fence: true })], esc),
      "BEGIN;\nSELECT logbook_fence('a$fn$b', '$$')",
    );
  });
});
