// The migration test: journals written by the format-v1 code (test/fixtures/journals/v1) open with today's code and read exactly as their goldens say.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../src/runtime/store';
import { LATEST_VERSION, MIGRATIONS, type Migration } from '../../src/runtime/store/migrations';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { fileHash, tmpDir } from '../helpers';
import { usePgServer, type PgServer } from '../pg/server';
import { journalView } from '../migration/view';
import { PG_GOLDEN, SQLITE_FIXTURE, SQLITE_GOLDEN, pgTool, restorePgDump } from '../migration/fixtures';

const golden = (file: string): unknown => JSON.parse(fs.readFileSync(file, 'utf8'));
/** The view as JSON would carry it (undefined members dropped), to compare with the golden read from disk. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

/**
 * Every value the golden holds, at its place: what a migration must keep. A member the golden lacks is what a later
 * migration added (a column, a field of `show --json`), and a journal written before it can only hold it empty (null, or
 * an empty list).
 */
function assertKept(actual: unknown, golden: unknown, at = '$'): void {
  if (Array.isArray(golden)) {
    assert.ok(Array.isArray(actual), `${at}: an array in the golden, ${JSON.stringify(actual)} now`);
    assert.equal(actual.length, golden.length, `${at}: ${golden.length} items in the golden, ${actual.length} now`);
    golden.forEach((g, i) => assertKept(actual[i], g, `${at}[${i}]`));
    return;
  }
  if (golden !== null && typeof golden === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${at}: an object in the golden, ${JSON.stringify(actual)} now`);
    const a = actual as Record<string, unknown>;
    for (const [k, g] of Object.entries(golden)) {
      assert.ok(k in a, `${at}.${k}: in the golden, missing now`);
      assertKept(a[k], g, `${at}.${k}`);
    }
    // Empty: null for a value, [] for a list (a run's inbox, schema version 7).
    for (const k of Object.keys(a))
      if (!(k in golden))
        assert.ok(
          a[k] === null || (Array.isArray(a[k]) && a[k].length === 0),
          `${at}.${k}: not in the golden, so it must be empty, not ${JSON.stringify(a[k])}`,
        );
    return;
  }
  assert.deepEqual(actual, golden, at);
}

function refusedAsTooNew(open: () => unknown): LogbookError {
  try {
    open();
  } catch (err) {
    assert.ok(err instanceof LogbookError && err.code === ErrorCodes.DB_TOO_NEW, String(err));
    return err;
  }
  assert.fail('a journal of a newer schema was opened');
}

function pgDump(server: PgServer, database: string): string {
  const r = spawnSync(pgTool('pg_dump'), ['--no-owner', '--no-privileges', '-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', database], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  assert.equal(r.status, 0, r.stderr);
  // The \restrict key is new in every dump; everything else is the database's content.
  return r.stdout.replace(/^\\(un)?restrict \S+$/gm, '');
}

describe('migration fixtures (journals written by format v1)', function () {
  this.timeout(120_000);

  describe('on SQLite', () => {
    it('opens the v1 journal with the current code (migrating it) and reads every run as the golden says', () => {
      const file = path.join(tmpDir('logbook-migrate-'), 'journal.db');
      fs.copyFileSync(SQLITE_FIXTURE, file);
      const store = openStore(file);
      try {
        assert.equal(store.schemaVersion(), LATEST_VERSION);
        assertKept(asJson(journalView(store)), golden(SQLITE_GOLDEN));
      } finally {
        store.close();
      }
    });

    it('control: a migration 11 that loses one event (the newest) fails the comparison', () => {
      const i = MIGRATIONS.findIndex((m) => m.version === 11);
      const real = MIGRATIONS[i] as Migration;
      const keep = 'FROM events_v10 ORDER BY seq;';
      assert.ok(real.sql.includes(keep), 'migration 11 copies the events');
      const lossy = real.sql.replace(keep, 'FROM events_v10 WHERE seq <> (SELECT MAX(seq) FROM events_v10) ORDER BY seq;');
      const file = path.join(tmpDir('logbook-migrate-'), 'journal.db');
      fs.copyFileSync(SQLITE_FIXTURE, file);
      Object.defineProperty(MIGRATIONS, i, { configurable: true, writable: true, value: { ...real, sql: lossy } });
      let store: ReturnType<typeof openStore> | undefined;
      try {
        store = openStore(file);
        const view = asJson(journalView(store));
        assert.throws(() => assertKept(view, golden(SQLITE_GOLDEN)), assert.AssertionError);
      } finally {
        store?.close();
        Object.defineProperty(MIGRATIONS, i, { configurable: true, writable: true, value: real });
      }
    });

    it('refuses, untouched, the fixture journal once it says it is of a schema newer than this code knows', () => {
      const file = path.join(tmpDir('logbook-migrate-'), 'journal.db');
      fs.copyFileSync(SQLITE_FIXTURE, file);
      const raw = new Database(file);
      raw.pragma(`user_version = ${LATEST_VERSION + 1}`);
      raw.pragma('journal_mode = DELETE');
      raw.close();
      const before = fileHash(file);
      const err = refusedAsTooNew(() => openStore(file));
      assert.match(err.message, /newer than this Logbook understands.*not modified/s);
      assert.equal(fileHash(file), before, 'the file is byte for byte what it was');
      assert.ok(!fs.existsSync(`${file}-wal`), 'no WAL was created');
    });
  });

  describe('on PostgreSQL', () => {
    const pg = usePgServer();

    it('restores the v1 dump, opens it with the current code (migrating it) and reads every run as the golden says', () => {
      const url = restorePgDump(pg.server, 'fixture_v1');
      const store = openStore(url);
      try {
        assert.equal(store.schemaVersion(), LATEST_VERSION);
        assertKept(asJson(journalView(store)), golden(PG_GOLDEN));
      } finally {
        store.close();
      }
    });

    it('refuses, untouched, the fixture database once it says it is of a schema newer than this code knows', () => {
      const url = restorePgDump(pg.server, 'fixture_newer');
      pg.server.psql(`INSERT INTO logbook_schema (version, name) VALUES (${LATEST_VERSION + 1}, 'from the future')`, 'fixture_newer');
      const before = pgDump(pg.server, 'fixture_newer');
      const err = refusedAsTooNew(() => openStore(url));
      assert.match(err.message, /newer than this Logbook understands.*not modified/s);
      assert.equal(pgDump(pg.server, 'fixture_newer'), before, 'the database holds what it held');
    });
  });
});
