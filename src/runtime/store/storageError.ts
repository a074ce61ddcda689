// SQLite's own failures (locked, full, read-only, damaged) as Logbook errors: never the script's failure, each with its remedy.

import { ErrorCodes, LogbookError, describe, isStorageCode, type ErrorCode } from '../errors';

/** The codes of journal and storage failures: the run stops resumable and no declared policy fires on them. */
export function isStorageError(err: unknown): err is LogbookError {
  return err instanceof LogbookError && isStorageCode(err.code);
}

/** better-sqlite3's SqliteError and Node's fs errors carry the failure in `code`. */
function codeOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Maps a storage failure met while using the journal at `file` to its Logbook error, or undefined when `err` is not
 * one (a Logbook error that already is one is returned as it is). `during` says what was being done. With
 * `unchanged`, the failure was of a command that writes in one transaction (creating a run, sending an event): it
 * changed nothing, and the remedy is to give the command again, not to resume a run.
 */
export function storageError(err: unknown, file: string, during = 'writing the journal', unchanged = false): LogbookError | undefined {
  if (isStorageError(err)) return err;
  const code = codeOf(err);
  if (code === undefined) return undefined;
  // After a failed fsync the last commit may not be on disk, so only what the script was told is promised kept.
  const keep = unchanged
    ? 'Nothing was changed: the command writes in one transaction, and it did not commit.'
    : /^SQLITE_IOERR_(DIR_)?FSYNC$/.test(code)
      ? 'The last commit may not have reached the disk, but the run stopped before the script was told it was recorded: nothing the script was told is lost, and the run stays resumable.'
      : 'Nothing journaled was lost: the run stays resumable, and its in-doubt actions are still recorded.';
  const again = unchanged ? 'give the command again' : 'run `logbook resume <run-id>`';
  const make = (c: ErrorCode, problem: string, remedy: string): LogbookError =>
    new LogbookError(c, `${problem} (${describe(err)}, ${code}) while ${during}. ${keep}`, remedy, { file, sqlite: code });
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return make(
      ErrorCodes.DB_BUSY,
      `The journal ${file} stayed locked by another connection longer than the busy timeout`,
      `Find the process holding it (e.g. a \`sqlite3\` shell with an open transaction, or a backup tool) and end it, then ${again}.`,
    );
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') {
    return make(
      ErrorCodes.DB_DISK_FULL,
      `The disk holding the journal ${file} is full`,
      `Free space on that disk (do not delete the journal or its -wal file), then ${again}.`,
    );
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') {
    return make(ErrorCodes.DB_READONLY, `The journal ${file} (or its folder) cannot be written`, readonlyRemedy());
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_IOERR') || code === 'EIO') {
    return make(
      ErrorCodes.DB_IO,
      `The journal ${file} could not be read or written: the disk reported an I/O error or a page is damaged`,
      `Stop, and copy ${file} with its -wal and -shm files somewhere safe (it holds the run's in-doubt state: do not delete or replace it); check it with \`sqlite3 ${file} "PRAGMA integrity_check"\` and repair it (sqlite3's .recover) or fix the disk, then ${again}.`,
    );
  }
  return undefined;
}

export function readonlyRemedy(): string {
  return 'Make the journal file and its folder writable for this user (e.g. `chmod u+w`, or remount the volume read-write), or run as its owner; do not move or delete the journal (it holds in-doubt state). Where only the file is read-only, `logbook ls` and `logbook show` can still read it.';
}
