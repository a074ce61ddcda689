// A PostgreSQL database of its own for one case: a worker claims every run of its journal it may, so a case's workers must see only its runs.

import { Client } from 'pg';

export const isPgUrl = (db: string): boolean => /^postgres(ql)?:\/\//.test(db);

/** Runs `sql` on the database of `url`, on a connection of its own. */
export async function onServer(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Creates database `name` on the server of `url` (whose role may create databases); its connection string. */
export async function createDatabase(url: string, name: string): Promise<string> {
  await onServer(url, `CREATE DATABASE "${name}"`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Drops it, ending any session a killed process left (WITH FORCE). */
export async function dropDatabase(url: string, name: string): Promise<void> {
  await onServer(url, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
