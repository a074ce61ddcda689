// A journal target as people write it (--db, $LOGBOOK_DB, a setting): a PostgreSQL connection string or a SQLite file path.

import * as path from 'node:path';

/** A `postgres://` or `postgresql://` URL selects PostgreSQL; anything else is a SQLite file path. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target);
}

/** A target safe to print: a connection string's password (in the authority or a `password=` parameter) becomes ***. */
export function redactUrl(target: string): string {
  return target.replace(/^(postgres(?:ql)?:\/\/[^:@/]*:)[^@/]*@/i, '$1***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}

/** A connection string stays as it is; a path is resolved against `base`. */
export function resolveTarget(target: string, base = process.cwd()): string {
  return isPostgresUrl(target) ? target : path.resolve(base, target);
}

/**
 * Where scripts' providers keep their state unless $LOGBOOK_STATE_DIR says otherwise: beside a journal file, or in
 * .logbook under the working directory for a server's journal (which has no folder of its own).
 */
export function defaultStateDir(target: string): string {
  return isPostgresUrl(target) ? path.resolve('.logbook') : path.dirname(target);
}
