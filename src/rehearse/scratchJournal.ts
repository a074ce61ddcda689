// Where a rehearsal's scratch journals live: a SQLite file in each scratch folder, or a PostgreSQL schema of its own per folder.

import * as path from 'node:path';
import { createScratchSchema, dropScratchSchemas, isPostgresUrl, openStore } from '../runtime/store';

/**
 * A scratch folder's journal. With a PostgreSQL server (`--journal postgres://…`) every folder gets a schema of its own in
 * that database, named after the rehearsal and the folder, chosen by the connection's search_path: campaigns run in
 * parallel with the same run id and never see each other's journals.
 */
export function journalOf(dir: string, db: string | null = null): string {
  if (db === null) return path.join(dir, 'journal.db');
  const sep = db.includes('?') ? '&' : '?';
  return `${db}${sep}options=${encodeURIComponent(`-c search_path=${schemaOf(dir)}`)}`;
}

function schemaOf(dir: string): string {
  return `${prefixOf(path.dirname(dir))}${clean(path.basename(dir))}`;
}

/** Every schema of one rehearsal (its root folder) starts with this. */
function prefixOf(root: string): string {
  return `logbook_${clean(path.basename(root))}_`;
}

const clean = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, '_');

/** Creates the scratch folder's schema and its journal's tables, so reading it before the first run finds it empty. */
export function createScratch(dir: string, db: string | null): void {
  if (db === null) return;
  createScratchSchema(db, schemaOf(dir));
  openStore(journalOf(dir, db)).close();
}

/** Drops every schema the rehearsal rooted at `root` created. */
export function dropScratch(root: string, db: string | null): void {
  if (db === null) return;
  dropScratchSchemas(db, prefixOf(root));
}

/** Whether a --journal given to rehearse is a server to rehearse on (a file path is refused: each campaign has its own file). */
export function rehearsalDb(flag: string | undefined): string | null {
  return flag !== undefined && isPostgresUrl(flag) ? flag : null;
}
