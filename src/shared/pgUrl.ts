// What the extension and the reader must know of a postgres:// journal target: its user, whether it carries a password.
// It sits in shared/ beside journalTarget.ts because the extension host may not import the runtime.

import { isPostgresUrl } from './journalTarget';

export { isPostgresUrl };

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** Whether the URL carries a password, in its user part or as a `password=` parameter. */
export function urlHasPassword(url: string): boolean {
  const u = parse(url);
  if (!u) return /:[^@/]*@/.test(url.replace(/^postgres(?:ql)?:\/\//i, '')) || /[?&]password=/i.test(url);
  return u.password !== '' || u.searchParams.has('password');
}

/** The URL's password (decoded), if it has one. */
export function urlPassword(url: string): string | undefined {
  const u = parse(url);
  if (!u) return undefined;
  if (u.password !== '') return decodeURIComponent(u.password);
  return u.searchParams.get('password') ?? undefined;
}

/** The URL without any password: what may be printed, put on a command line or kept in settings. */
export function withoutPassword(url: string): string {
  const u = parse(url);
  // Unparsable (a # or / in the password): the password runs to the last @, as redactUrl reads it.
  if (!u)
    return url
      .replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[\s\S]*@/i, '$1@')
      .replace(/([?&])password=[^&]*&?/gi, '$1')
      .replace(/[?&]$/, '');
  u.password = '';
  u.searchParams.delete('password');
  return u.toString();
}

/** The same server and database as `url`, as `user`: how the reader connects with a read-only role. */
export function withUser(url: string, user: string): string {
  const u = parse(url);
  if (!u) return url;
  u.username = encodeURIComponent(user);
  u.password = '';
  return u.toString();
}

/** The user the URL names, else $PGUSER, else undefined (libpq's default is the OS user). */
export function urlUser(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const u = parse(url);
  const name = u && u.username !== '' ? decodeURIComponent(u.username) : undefined;
  return name ?? env.PGUSER;
}

/** One key per role on one server and database: where a password is kept (the password itself never in it). */
export function credentialKey(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const u = parse(url);
  if (!u) return `postgres:${url}`;
  const user = urlUser(url, env) ?? '';
  return `postgres://${encodeURIComponent(user)}@${u.hostname}:${u.port || '5432'}${u.pathname}`;
}
