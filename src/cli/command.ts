// What every CLI command module shares: its output lines (Io), its shape (CommandModule), and where the journal is.

import { DEFAULT_DB, resolveTarget } from '../runtime/store';
import { defaultStateDir } from '../shared/journalTarget';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** A command that lives in its own module (plan, rehearse, delete); cli/commandModules.ts lists them. */
export interface CommandModule {
  readonly name: string;
  readonly usage: string;
  run(args: string[], io: Io): Promise<number>;
}

/** The journal: --db, else $LOGBOOK_DB, else .logbook/journal.db under the working directory (a postgres:// URL as given). */
export function dbPath(flag: unknown): string {
  return resolveTarget(typeof flag === 'string' ? flag : (process.env.LOGBOOK_DB ?? DEFAULT_DB));
}

/** Scripts' providers keep their state beside the journal (a server's journal: .logbook here) unless told otherwise. */
export function setStateDir(db: string): void {
  process.env.LOGBOOK_STATE_DIR ??= defaultStateDir(db);
}
