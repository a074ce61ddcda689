// The same journal operations written through the inlined one-query path and statement by statement leave the same rows.

import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import { openStore } from '../../src/runtime/store';
import { acquireRun, createRun } from '../../src/runtime/store/lease';
import { RunWriter } from '../../src/runtime/store/writer';
import { beginSession, currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { dbOf } from '../../src/runtime/store/db';
import { SqlJournal } from '../../src/runtime/store/sqlJournal';
import { PgDb } from '../../src/runtime/store/pg/pgDb';
import { usePgServer, type PgServer } from './server';

const owner = (): Owner => ({
  token: `token-${Math.random()}`,
  pid: 4_000_000 + Math.floor(Math.random() * 100_000),
  pidStart: '1',
  host: hostField(os.hostname(), currentNode()),
  label: 'differential',
});

const VALUES = ["o'brien", 'back\\slash', '$1 $$ $lbfence$', '-- x /* y', 'é 😀 \ud800 lone', '-0', '1e21', '123', ''];

/** Every writer operation, with hostile text and awkward numbers, against the journal `store`. */
function scenario(store: SqlJournal): void {
  for (const [r, id] of ['plain', 'r$lbfence$x'].entries()) {
    const lease = createRun(dbOf(store.db), store.reader, { id, agent: VALUES[0]!, script: VALUES[1]!, input: JSON.stringify(VALUES) }, owner());
    const w = new RunWriter(store.db, lease, 1);
    VALUES.forEach((v, n) => {
      const a = {
        id: `a:${v}:${n}`,
        stepIdx: n,
        type: `t.${v}`,
        version: n - 3,
        effect: 'non-idempotent' as const,
        args: JSON.stringify({ v, n: -n, f: n / 7, big: 2 ** 53 - n }),
      };
      w.stepStarted(n, v, false);
      w.actionStarted(a, false);
      w.actionExecuting(n, a.id);
      if (n % 3 === 0) w.actionCommitted(n, a.id, JSON.stringify({ v }));
      else if (n % 3 === 1) w.actionFailed(n, a.id, { message: v, code: -n });
      else w.actionInDoubt(n, a.id, { message: v });
      w.note(`note.${v}`, { v, x: 1e21, y: -0, z: 0.1 + 0.2 }, n, a.id);
      w.stepCompleted(n, JSON.stringify(v));
    });
    if (r === 0) {
      w.runStatus('completed', { output: JSON.stringify(VALUES) });
      w.release();
    } else {
      // Taken over: the stale writer's last transaction is fenced off on both paths alike.
      acquireRun(store.db, store.reader, id, beginSession('taker'), { status: 'running', newAttempt: true, purpose: 'resume' });
      assert.throws(() => w.note('lost', { v: VALUES[2] }));
    }
  }
}

/** Every table's rows, with the columns that hold clocks, owners and tokens (different on every run) left out. */
function contents(server: PgServer, database: string): string {
  const cols = server
    .psql(
      "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
      database,
    )
    .split('\n')
    .map((l) => l.split('.') as [string, string]);
  const volatile = /^at$|_at$|expires|token|owner|pid|host|label|session|time|clock|heartbeat/;
  const tables = [...new Set(cols.map(([t]) => t))].filter((t) => t !== 'logbook_schema');
  return tables
    .map((t) => {
      const keep = cols.filter(([tt, c]) => tt === t && !volatile.test(c)).map(([, c]) => `"${c}"`);
      const list = keep.join(', ');
      return `${t}: ${server.psql(`SELECT json_agg(x ORDER BY x::text) FROM (SELECT ${list} FROM "${t}") x`, database)}`;
    })
    .join('\n')
    .replace(/session [0-9a-f]+/g, 'session *');
}

describe('PostgreSQL: inlined and statement-by-statement batches write the same journal', function () {
  this.timeout(120_000);
  const pg = usePgServer();

  it('leaves identical rows after every writer operation, hostile values and a lost fence included', () => {
    const dbs: string[] = [];
    for (const inline of [true, false]) {
      const name = inline ? 'diff_inline' : 'diff_statements';
      const url = pg.server.createDatabase(name);
      openStore(url).close(); // migrates
      const store = new SqlJournal(new PgDb(url, { inline }));
      try {
        scenario(store);
      } finally {
        store.close();
      }
      dbs.push(contents(pg.server, name));
    }
    assert.ok(dbs[0]!.includes('$lbfence$') && dbs[0]!.length > 2000, 'the scenario wrote its rows');
    const [a, b] = dbs.map((d) => d.split('\n'));
    assert.deepEqual(a!.filter((l, i) => l !== b![i]).slice(0, 3), [], 'the first rows that differ');
    assert.equal(dbs[0], dbs[1]);
  });
});
