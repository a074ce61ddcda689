// A SQLite journal at the latest schema put back to schema 9, every row kept: the file an older Logbook would have left, for tests of migrations 10 and 11 on journals in use.

import { foldRows } from '../helpers';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { LATEST_VERSION } from '../../src/runtime/store/migrations';
import { journalAt } from './journalAt';

/** The tables migrations 10 and 11 rebuilt: WITHOUT ROWID tables at schema 9, and events with AUTOINCREMENT. */
export const REBUILT_SINCE_9 = ['steps', 'actions', 'graph_checkpoints', 'graph_blobs', 'graph_writes', 'events'] as const;

export interface SchemaRow {
  readonly type: string;
  readonly name: string;
  readonly tbl_name: string;
  readonly sql: string | null;
}

/** sqlite_master's rows for the tables migrations 10 and 11 rebuilt (their indexes too), by name: rootpage left out. */
export function rebuiltSchema(db: Database.Database): SchemaRow[] {
  return db
    .prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name IN (${REBUILT_SINCE_9.map(() => '?').join(', ')}) ORDER BY name`)
    .all(...REBUILT_SINCE_9) as SchemaRow[];
}

let schema9: { tables: SchemaRow[]; indexes: SchemaRow[] } | undefined;

/** Schema 9's own DDL for those tables, read from a scratch journal the migrations built (once per process). */
function schema9Ddl(): { tables: SchemaRow[]; indexes: SchemaRow[] } {
  if (schema9) return schema9;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-schema9-'));
  try {
    const db = journalAt(path.join(dir, 'j.db'), 9);
    try {
      const rows = rebuiltSchema(db);
      // Auto-indexes (sql NULL) come with their table's CREATE; only the explicit indexes are made again.
      schema9 = { tables: rows.filter((r) => r.type === 'table'), indexes: rows.filter((r) => r.type === 'index' && r.sql !== null) };
      return schema9;
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * Rewrites `steps`, `actions`, `events` and the graph tables of the journal `file`, at the latest schema, into their
 * schema-9 definitions, copying every row, and sets user_version to 9, in one immediate transaction. No process may
 * hold the file open for writing: a connection opened at the latest schema would go on writing as if it still were.
 *
 * The latest table is renamed out of the way and schema 9's CREATE is run under the real name: renaming the new
 * table into place instead would have SQLite rewrite its CREATE (the name quoted), and sqlite_master would no longer
 * be what schema 9 left.
 */
export function putBackToSchema9(file: string): void {
  // Schema 9 has no log to fold from: its rows must say everything, as an older Logbook left them.
  const peek = new Database(file, { readonly: true });
  const at = peek.pragma('user_version', { simple: true }) as number;
  peek.close();
  if (at === LATEST_VERSION) foldRows(file);
  const ddl = schema9Ddl();
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    db.transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version !== LATEST_VERSION) throw new Error(`putBackToSchema9: ${file} is at schema ${version}, not ${LATEST_VERSION}`);
      for (const t of ddl.tables) {
        const old = `${t.name}_v10`;
        const latest = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t.name) as string[];
        db.exec(`ALTER TABLE ${quote(t.name)} RENAME TO ${quote(old)}`);
        db.exec(t.sql ?? '');
        // Format 2's columns (events.fold) are not schema 9's: its rows are folded, so nothing else is lost.
        const at9 = new Set(db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t.name) as string[]);
        const columns = latest
          .filter((c) => at9.has(c))
          .map(quote)
          .join(', ');
        db.exec(`INSERT INTO ${quote(t.name)} (${columns}) SELECT ${columns} FROM ${quote(old)}`);
        // Its indexes go with it, which frees their names for schema 9's.
        db.exec(`DROP TABLE ${quote(old)}`);
      }
      for (const i of ddl.indexes) db.exec(i.sql ?? '');
      if ((db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('runs') as string[]).includes('folded_seq'))
        db.exec('ALTER TABLE runs DROP COLUMN folded_seq');
      db.pragma('user_version = 9');
    }).immediate();
  } finally {
    db.close();
  }
}
