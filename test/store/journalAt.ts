// Journals as an older Logbook left them, and the error a call throws, for the store's migration and reader tests.

import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/runtime/store/migrations';

/** A journal at schema `version`, built by the migrations as data (what an older Logbook left). */
export function journalAt(file: string, version: number): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const m of MIGRATIONS.filter((x) => x.version <= version)) {
    db.exec(m.sql);
    db.pragma(`user_version = ${m.version}`);
  }
  return db;
}

/** The code and message `fn` throws, or undefined: two reads can be compared error for error. */
export function errorOf(fn: () => unknown): { code?: unknown; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return { code: (err as { code?: unknown }).code, message: (err as Error).message };
  }
}
