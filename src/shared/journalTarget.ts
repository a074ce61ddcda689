// A journal target as people write it (--journal, $LOGBOOK_JOURNAL, a setting): a PostgreSQL connection string or a SQLite file
// path, and the one decision of which targets are refused before anything is opened or written.

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

/**
 * `word://`: a scheme of two or more characters (so a Windows drive, `C://dir`, stays a path). Only PostgreSQL's
 * schemes name a server; any other is a mistake to report, never a file name to create.
 */
const URL_SHAPED = /^([A-Za-z][A-Za-z0-9+.-]+):\/\//;

/**
 * Masks the password of any URL-shaped target, even one that does not parse: everything between the user name's `:`
 * and the last `@` (a raw `/`, `#` or `@` in a password must not leave part of it showing), and `password=` values.
 */
export function maskTarget(target: string): string {
  return target.replace(/^([A-Za-z][A-Za-z0-9+.-]+:\/\/[^:@/?#]*:)[\s\S]*@/, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

export interface TargetProblem {
  readonly problem: string;
  readonly remedy: string;
}

/** Why a PostgreSQL URL cannot be used as written, as the pg client would read it; undefined when it parses. */
function pgUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    try {
      // The pg client's own fallback: a URL with no host (`postgres://user@/db`, a socket) parses with a dummy one.
      u = new URL(url.replace('@/', '@___DUMMY___/'));
    } catch {
      return 'it does not parse as a URL';
    }
  }
  // `postgres://u:12/3@h/db` parses as host u, port 12 and a database named `3@h/db`: a `/` in the password was not encoded.
  // (Neither the port nor the database name is shown: they hold the password.)
  if (u.pathname.includes('@') || u.hash.includes('@'))
    return `it would be read as server ${u.hostname || '(none)'}, with the rest taken for a port and a database name`;
  return undefined;
}

/**
 * Why a journal target is refused, or undefined when it is usable: a URL whose scheme is not PostgreSQL's (it would
 * otherwise become a SQLite file at a path made of the URL, password and all), or a PostgreSQL URL that does not parse.
 * The words never contain the password. Everything that opens a journal asks this before touching the disk.
 */
export function journalTargetProblem(target: string): TargetProblem | undefined {
  if (isPostgresUrl(target)) {
    const why = pgUrlProblem(target);
    if (why === undefined) return undefined;
    return {
      problem: `The PostgreSQL URL ${maskTarget(target)} cannot be used: ${why}. A character such as / # ? @ or : in the user name or the password must be percent-encoded. Nothing was opened or written.`,
      remedy:
        'Percent-encode the password (encodeURIComponent in JavaScript: / is %2F, # is %23, ? is %3F, @ is %40, : is %3A), or leave it out of the URL and set PGPASSWORD.',
    };
  }
  const scheme = URL_SHAPED.exec(target)?.[1];
  if (scheme === undefined) return undefined;
  const near = /^p(?:ost)?g/i.test(scheme) ? ` Did you mean postgres://?` : '';
  return {
    problem: `The journal ${maskTarget(target)} looks like a URL, but ${scheme}:// is not a PostgreSQL scheme (postgres:// or postgresql://), so it is neither a server nor a file name. Nothing was opened or written.${near}`,
    remedy: 'Write a PostgreSQL journal as postgres://user@host:port/database, or give a SQLite journal as a file path (e.g. .logbook/journal.db).',
  };
}

/** A connection string stays as it is; a path is resolved against `base`. Ask journalTargetProblem first. */
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
