// PostgreSQL failures as Logbook errors: a server that cannot be reached, refuses the role, or is full is storage (exit 5).

import { ErrorCodes, LogbookError, type ErrorCode } from '../../errors';
import type { PgErrorMsg } from './threadProtocol';

const KEEP = 'Nothing journaled was lost: the run stays resumable, and its in-doubt actions are still recorded.';

/** A PostgreSQL error kept as itself (SQLSTATE in `code`) when it is not a storage failure, e.g. a unique violation. */
export class PgError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly detail: string | undefined,
  ) {
    super(message);
    this.name = 'PgError';
  }
}

function storageCode(e: PgErrorMsg): ErrorCode | undefined {
  const c = e.code ?? '';
  if (e.connection) return ErrorCodes.DB_UNREACHABLE;
  if (c === '28P01' || c === '28000' || c === '3D000') return ErrorCodes.DB_AUTH;
  // pg's own words when the server asks for a password and none was given (no SQLSTATE: it never reached the server).
  if (/password must be a string|no password was provided/i.test(e.message)) return ErrorCodes.DB_AUTH;
  if (c === '53100') return ErrorCodes.DB_DISK_FULL;
  if (c === '42501' || c === '25006') return ErrorCodes.DB_READONLY;
  if (c === '40001' || c === '40P01' || c === '55P03' || c === '53300') return ErrorCodes.DB_BUSY;
  if (c === 'XX001' || c === 'XX002' || c === '58030') return ErrorCodes.DB_IO;
  return undefined;
}

const REMEDY: Partial<Record<ErrorCode, (where: string) => string>> = {
  [ErrorCodes.DB_UNREACHABLE]: (where) =>
    `Check that the PostgreSQL server at ${where} is running and reachable from this machine (host, port, firewall), then run the command again (\`logbook resume <run-id>\` for a run it stopped).`,
  [ErrorCodes.DB_AUTH]: (where) =>
    `Check the role, password and database name in the connection string for ${where} (or $PGPASSWORD / ~/.pgpass), and that the database exists (\`createdb\`).`,
  [ErrorCodes.DB_DISK_FULL]: () => "Free space on the server's data disk, then run `logbook resume <run-id>`.",
  [ErrorCodes.DB_READONLY]: () =>
    "Use a role that may write the journal's tables (a read-only role can only list and show runs), or a server that is not a read-only standby.",
  [ErrorCodes.DB_BUSY]: () => 'Another transaction held the rows this one needed; run the command again (`logbook resume <run-id>` for a run it stopped).',
  [ErrorCodes.DB_IO]: () => 'The server reported damaged data: check its log and its disk, then run `logbook resume <run-id>`.',
};

/** The Logbook error for a failure reported by the thread while `during` on the journal `where` (a redacted URL). */
export function pgFailure(e: PgErrorMsg, where: string, during: string): Error {
  const code = storageCode(e);
  if (code === undefined) return new PgError(e.message, e.code, e.detail);
  const remedy = REMEDY[code]?.(where) ?? 'Run the command again.';
  return new LogbookError(code, `The PostgreSQL journal ${where} failed while ${during}: ${e.message}${e.code ? ` (${e.code})` : ''}. ${KEEP}`, remedy, {
    db: where,
    pg: e.code ?? null,
  });
}
