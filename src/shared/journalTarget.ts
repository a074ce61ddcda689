// A journal target as people write it (--db, $LOGBOOK_DB, a setting): a PostgreSQL connection string or a SQLite file path.

import * as path from 'node:path';

/** A `postgres://` or `postgresql://` URL selects PostgreSQL; anything else is a SQLite file path. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target);
}

/**
 * A target safe to print: a connection string's password (in the authority or a `password=` parameter) becomes ***.
 * The user part ends at the last `@` of the authority, as the `pg` client (WHATWG URL) parses it; in a URL that does
 * not parse at all (a `#` or `/` in the password), at the last `@` of the string, so nothing of the password shows.
 */
export function redactUrl(target: string): string {
  const m = /^(postgres(?:ql)?:\/\/)([\s\S]*)$/i.exec(target);
  let out = target;
  if (m?.[1] !== undefined && m[2] !== undefined) {
    const rest = m[2];
    const delimiter = rest.search(/[/?#]/);
    const authority = URL.canParse(target) && delimiter >= 0 ? rest.slice(0, delimiter) : rest;
    const at = authority.lastIndexOf('@');
    const colon = authority.indexOf(':');
    if (at >= 0 && colon >= 0 && colon < at) out = `${m[1]}${rest.slice(0, colon + 1)}***${rest.slice(at)}`;
  }
  return out.replace(/([?&]password=)[^&#]*/gi, '$1***');
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
