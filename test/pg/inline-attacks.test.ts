// Attacks on the inlined one-query batch (store/pg/inline.ts) against a real server: values, types, the fence, errors, secrets.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client } from 'pg';
import { openStore } from '../../src/runtime/store';
import { acquireRun, createRun } from '../../src/runtime/store/lease';
import { RunWriter } from '../../src/runtime/store/writer';
import { beginSession, currentNode, hostField, type Owner } from '../../src/runtime/store/owner';
import { dbOf } from '../../src/runtime/store/db';
import { ErrorCodes, LogbookError, errorRecord } from '../../src/runtime/errors';
import { inlineParams } from '../../src/runtime/store/pg/inline';
import { usePgServer } from './server';

const deadOwner = (): Owner => ({
  token: `token-${Math.random()}`,
  pid: 4_000_000 + Math.floor(Math.random() * 100_000),
  pidStart: '1',
  host: hostField(os.hostname(), currentNode()),
  label: 'dead inline attacks',
});

/** Text a value could use to leave its literal, or that the simple protocol treats specially. */
const NASTY = [
  "o'brien",
  "''; DROP TABLE events; --",
  'back\\slash\\',
  "\\'; DROP TABLE events; --",
  "E'\\x41'",
  '$1 $2 $$ $lbfence$ $$;',
  '-- a comment',
  '/* open comment',
  '*/',
  'é 😀 \u{10FFFF} \u2028',
  '{"json":"te\\"xt","n":[1,-0,1e21]}',
  'x'.repeat(100_000),
  ';COMMIT;',
];

function isLeaseLost(err: unknown): boolean {
  return err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST;
}

describe('PostgreSQL: attacks on the inlined batch', function () {
  this.timeout(120_000);
  const pg = usePgServer();

  it('types every value as its parameter would be typed: the same rows, or the same refusal, on both paths', async () => {
    const url = pg.server.createDatabase('inline_types');
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      const cases: Array<[string, unknown[]]> = [
        ['INSERT INTO t (k, txt) VALUES ($1, $2)', [1, 1e21]],
        ['INSERT INTO t (k, txt) VALUES ($1, $2)', [2, 1e-7]],
        ['INSERT INTO t (k, txt) VALUES ($1, $2)', [3, 0.1 + 0.2]],
        ['INSERT INTO t (k, i) VALUES ($1, $2)', [4, 1.5]],
        ['INSERT INTO t (k, i) VALUES ($1, $2)', [5, -0]],
        ['INSERT INTO t (k, b) VALUES ($1, $2)', [6, 2 ** 53 + 2]],
        ['INSERT INTO t (k, b) VALUES ($1, $2)', [7, 9223372036854775807n]],
        ['INSERT INTO t (k, b) VALUES ($1, $2)', [8, -9223372036854775808n]],
        ['INSERT INTO t (k, n) VALUES ($1, $2)', [9, Number('123456789.123456789')]],
        ['INSERT INTO t (k, f) VALUES ($1, $2)', [10, -1.5e-300]],
        ['INSERT INTO t (k, txt) VALUES ($1, CASE WHEN $2::text IS NULL THEN $3 ELSE $4 END)', [11, null, 'x', 7]],
        ['INSERT INTO t (k, i) VALUES ($1, 1 -$2)', [12, -5]],
        ['UPDATE t SET txt = $1 WHERE txt = $2', ['hit', 42]],
        ['INSERT INTO t (k, i) VALUES ($1, $2)', [13, '123']],
        ['UPDATE t SET txt = $1 WHERE i = $2', ['int-hit', '123']],
        ...NASTY.map((v, n): [string, unknown[]] => ['INSERT INTO t (k, txt) VALUES ($1, $2)', [100 + n, v]]),
      ];
      for (const scs of ['on', 'off']) {
        await c.query(`SET standard_conforming_strings = ${scs}`);
        await c.query('DROP TABLE IF EXISTS t; CREATE TABLE t (k integer PRIMARY KEY, txt text, i integer, b bigint, n numeric, f double precision)');
        await c.query("INSERT INTO t (k, txt) VALUES (0, '42')");
        const outcome = async (run: () => Promise<unknown>): Promise<string> => {
          await c.query('SAVEPOINT s');
          try {
            await run();
            await c.query('RELEASE SAVEPOINT s');
            return 'ok';
          } catch (err) {
            await c.query('ROLLBACK TO SAVEPOINT s');
            return `error ${String((err as { code?: unknown }).code)}`;
          }
        };
        const contents = async (): Promise<string> => JSON.stringify((await c.query('SELECT k, txt, i, b::text, n::text, f FROM t ORDER BY k')).rows);
        await c.query('BEGIN');
        const byParams: string[] = [];
        for (const [sql, params] of cases) byParams.push(await outcome(() => c.query(sql, params)));
        const paramRows = await contents();
        await c.query('ROLLBACK');
        await c.query('BEGIN');
        const inlined: string[] = [];
        for (const [sql, params] of cases) {
          const text = inlineParams(sql, params, (v) => c.escapeLiteral(v));
          assert.ok(text !== undefined, sql);
          inlined.push(await outcome(() => c.query(text)));
        }
        const inlineRows = await contents();
        await c.query('ROLLBACK');
        assert.deepEqual(inlined, byParams, `standard_conforming_strings ${scs}: the statements' outcomes`);
        assert.equal(inlineRows, paramRows, `standard_conforming_strings ${scs}: the rows written`);
      }
    } finally {
      await c.end();
    }
  });

  it("journals hostile values as given, with standard_conforming_strings off, and a run id holding the fence's tag", () => {
    const url = pg.server.createDatabase('inline_values');
    pg.server.psql('ALTER DATABASE inline_values SET standard_conforming_strings = off');
    pg.server.psql('ALTER DATABASE inline_values SET escape_string_warning = off');
    const store = openStore(url);
    try {
      for (const id of ['plain', 'a$lbfence$b', "r'$lbfence$;--"]) {
        const lease = createRun(dbOf(store.db), store.reader, { id, agent: NASTY[1]!, script: 's.ts', input: null }, deadOwner());
        const w = new RunWriter(store.db, lease, 1);
        NASTY.forEach((v, n) => {
          w.actionStarted(
            { id: `${v.slice(0, 40)}:${n}`, stepIdx: n, type: v.slice(0, 60), version: 1, effect: 'non-idempotent', args: JSON.stringify({ v }) },
            false,
          );
          w.stepStarted(n, v, false);
          w.actionFailed(n, `${v.slice(0, 40)}:${n}`, { message: v });
        });
        for (const [n, v] of NASTY.entries()) {
          const a = store.reader.action(id, `${v.slice(0, 40)}:${n}`);
          assert.equal(a?.args, JSON.stringify({ v }), `run ${id}: value ${n} read back as written`);
          assert.equal(a?.type, v.slice(0, 60));
        }
        w.release();
      }
      assert.equal(pg.server.psql('SELECT count(*) FROM events', 'inline_values') !== '0', true);
    } finally {
      store.close();
    }
  });

  it('rolls a failed batch back whole and keeps the connection for the next transaction', () => {
    const url = pg.server.createDatabase('inline_errors');
    const store = openStore(url);
    try {
      const db = dbOf(store.db);
      db.exec('CREATE TABLE atk (k integer PRIMARY KEY, v text)');
      const tx = db.transaction((rows: Array<[number, string]>) => {
        for (const [k, v] of rows) db.prepare('INSERT INTO atk (k, v) VALUES (?, ?)').run(k, v);
      });
      assert.throws(
        () =>
          tx([
            [1, 'a'],
            [2, 'b'],
            [1, 'dup'],
            [3, 'c'],
          ]),
        (e: unknown) => (e as { code?: unknown }).code === '23505',
      );
      assert.equal(pg.server.psql('SELECT count(*) FROM atk', 'inline_errors'), '0', 'nothing of the failed transaction');
      tx([
        [1, 'a'],
        [2, 'b'],
      ]);
      assert.equal(pg.server.psql("SELECT string_agg(v, ',' ORDER BY k) FROM atk", 'inline_errors'), 'a,b');
    } finally {
      store.close();
    }
  });

  it("keeps the environment's secrets out of the server log when a fenced batch fails there", () => {
    const secret = 'sk-atk-' + 'Q9'.repeat(12);
    process.env.LOGBOOK_ATK_API_KEY = secret;
    const url = pg.server.createDatabase('inline_secrets');
    const store = openStore(url);
    try {
      const lease = createRun(dbOf(store.db), store.reader, { id: 'sec', agent: 'a', script: 's.ts', input: null }, deadOwner());
      const w = new RunWriter(store.db, lease, 1);
      w.actionStarted({ id: 'call:1', stepIdx: 0, type: 'http.post', version: 1, effect: 'non-idempotent', args: '{"marker":"atk-marker"}' }, false);
      acquireRun(store.db, store.reader, 'sec', beginSession('taker'), { status: 'running', newAttempt: true, purpose: 'resume' });
      const before = fs.statSync(pg.server.log).size;
      let err: unknown;
      try {
        w.actionFailed(0, 'call:1', errorRecord(new Error(`401 for key ${secret} (atk-marker-2)`)));
      } catch (e) {
        err = e;
      }
      assert.ok(isLeaseLost(err), String(err));
      assert.ok(!String((err as Error).message).includes(secret));
      const log = fs.readFileSync(pg.server.log, 'utf8').slice(before);
      // The control: the failed batch's text did reach the log; the secret in it did not.
      assert.match(log, /atk-marker-2/);
      assert.ok(!log.includes(secret), 'the secret is not in the server log');
      w.release();
    } finally {
      delete process.env.LOGBOOK_ATK_API_KEY;
      store.close();
    }
  });
  it('a connection killed while its one-query batch waits writes nothing, and the next transaction runs on a new connection', async () => {
    const url = pg.server.createDatabase('inline_kill');
    const store = openStore(url);
    try {
      const lease = createRun(dbOf(store.db), store.reader, { id: 'kill', agent: 'a', script: 's.ts', input: null }, deadOwner());
      const w = new RunWriter(store.db, lease, 1);
      w.actionStarted({ id: 'first:1', stepIdx: 0, type: 't', version: 1, effect: 'non-idempotent', args: '{}' }, false);
      // A real other session holds the run's row, so the batch waits inside the server at its fence; once it waits
      // there, that session ends the batch's backend (this thread is blocked in the write meanwhile).
      const killer = spawn(
        process.execPath,
        [
          '-e',
          `const { Client } = require('pg');
          (async () => {
            const c = new Client({ connectionString: process.argv[1] });
            await c.connect();
            await c.query('BEGIN');
            await c.query("SELECT 1 FROM runs WHERE id = 'kill' FOR UPDATE");
            console.log('locked');
            for (;;) {
              const r = await c.query("SELECT pg_terminate_backend(pid) AS k FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%logbook_fence(%' AND pid <> pg_backend_pid()");
              if (r.rows.some((x) => x.k)) break;
              await new Promise((res) => setTimeout(res, 50));
            }
            await c.query('ROLLBACK');
            await c.end();
            console.log('killed');
          })().catch((e) => { console.error(e); process.exit(1); });`,
          url,
        ],
        { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      killer.stdout.on('data', (d: Buffer) => (out += d.toString()));
      while (!out.includes('locked')) await once(killer.stdout, 'data');
      let err: unknown;
      try {
        w.actionStarted({ id: 'killed:2', stepIdx: 1, type: 't', version: 1, effect: 'non-idempotent', args: '{"half":"written?"}' }, false);
      } catch (e) {
        err = e;
      }
      const [code] = (await once(killer, 'exit')) as [number];
      assert.equal(code, 0);
      assert.match(out, /killed/);
      assert.ok(err instanceof LogbookError && err.code === ErrorCodes.DB_UNREACHABLE, String(err));
      assert.equal(store.reader.action('kill', 'killed:2'), undefined, 'nothing of the killed batch');
      assert.equal(pg.server.psql("SELECT count(*) FROM actions WHERE id = 'killed:2'", 'inline_kill'), '0');
      // The writer stops at a storage failure (the run stays resumable); the journal's next transaction reconnects.
      const db = dbOf(store.db);
      db.transaction(() => {
        db.prepare('UPDATE runs SET agent = ? WHERE id = ?').run('after', 'kill');
        db.prepare('UPDATE runs SET script = ? WHERE id = ?').run('after.ts', 'kill');
      })();
      assert.equal(pg.server.psql("SELECT agent || ' ' || script FROM runs WHERE id = 'kill'", 'inline_kill'), 'after after.ts');
    } finally {
      store.close();
    }
  });
  it('journals text exactly under a database whose client_encoding is SJIS, where a character can swallow an escaping backslash', () => {
    const url = pg.server.createDatabase('inline_sjis');
    pg.server.psql("ALTER DATABASE inline_sjis SET client_encoding = 'SJIS'");
    const store = openStore(url);
    try {
      const lease = createRun(dbOf(store.db), store.reader, { id: 'sjis', agent: 'a', script: 's.ts', input: null }, deadOwner());
      const w = new RunWriter(store.db, lease, 1);
      // U+0101 is C4 81 in UTF-8, and 81 5C is one SJIS character: read as SJIS, the literal's doubled backslash
      // would lose its first half and the quote after it would be escaped instead of closing the literal. pg asks for
      // UTF8 in its startup packet, which outranks the database's setting (and a URL's options): this keeps it so.
      const payloads = ["\u0101\\'; SELECT 1; --", 'caf\u00e9 \u{1F600}'];
      payloads.forEach((type, n) => w.actionStarted({ id: `s:${n}`, stepIdx: n, type, version: 1, effect: 'non-idempotent', args: '{}' }, false));
      payloads.forEach((type, n) => assert.equal(store.reader.action('sjis', `s:${n}`)?.type, type));
      // As the server holds it (psql reads in UTF-8 here): the text itself, not a mangled reading of its bytes.
      const held = pg.server.psql("SET client_encoding = 'UTF8'; SELECT type FROM actions WHERE id = 's:1'", 'inline_sjis');
      assert.equal(held.split('\n').pop(), payloads[1]);
      w.release();
    } finally {
      store.close();
    }
  });
});
