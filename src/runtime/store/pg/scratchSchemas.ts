// Schemas of their own in one PostgreSQL database, for journals that must not see each other (a rehearsal's campaigns).

import { PgDb } from './pgDb';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function checked(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`internal: ${JSON.stringify(name)} is not a plain schema name`);
  return name;
}

/** Creates schema `name` in the database at `url` if it is not there. */
export function createSchema(url: string, name: string): void {
  const pg = new PgDb(url);
  try {
    pg.exec(`CREATE SCHEMA IF NOT EXISTS ${checked(name)}`);
  } finally {
    pg.close();
  }
}

/** Drops, with everything in them, the schemas whose names start with `prefix`. */
export function dropSchemasStartingWith(url: string, prefix: string): void {
  const pg = new PgDb(url);
  try {
    const like = `${checked(prefix).replace(/_/g, '\\_')}%`;
    const names = pg.prepare('SELECT nspname FROM pg_namespace WHERE nspname LIKE ?').pluck().all(like) as string[];
    for (const n of names) pg.exec(`DROP SCHEMA IF EXISTS ${checked(n)} CASCADE`);
  } finally {
    pg.close();
  }
}
