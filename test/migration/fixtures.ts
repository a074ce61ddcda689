// Where the v1 journal fixtures live, and how a PostgreSQL fixture (a plain pg_dump) is restored into a private server.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';
import type { PgServer } from '../pg/server';

export const FIXTURE_DIR = path.join(ROOT, 'test', 'fixtures', 'journals', 'v1');
export const SQLITE_FIXTURE = path.join(FIXTURE_DIR, 'journal.sqlite');
export const SQLITE_GOLDEN = path.join(FIXTURE_DIR, 'journal.sqlite.golden.json');
export const PG_DUMP = path.join(FIXTURE_DIR, 'journal.pg.sql');
export const PG_GOLDEN = path.join(FIXTURE_DIR, 'journal.pg.golden.json');

/** A PostgreSQL client program (pg_dump, psql) of the installed server, as scripts/pg-server.mjs finds them. */
export function pgTool(name: string): string {
  if (process.env.LOGBOOK_PG_BIN) return path.join(process.env.LOGBOOK_PG_BIN, name);
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base) ? fs.readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const p = path.join(base, v, 'bin', name);
    if (fs.existsSync(p)) return p;
  }
  return name;
}

/** Restores the committed dump into a new database `name` of `server`; its connection string. */
export function restorePgDump(server: PgServer, name: string): string {
  const url = server.createDatabase(name);
  const r = spawnSync(
    pgTool('psql'),
    ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', '-d', name, '-f', PG_DUMP],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `restoring ${PG_DUMP} failed: ${r.stderr}`);
  return url;
}
