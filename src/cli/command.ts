// What every CLI command module shares: its output lines (Io), its shape (CommandModule), and where the journal is.

import * as path from 'node:path';
import { DEFAULT_DB } from '../runtime/store';

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

/** The journal file: --db, else $LOGBOOK_DB, else .logbook/journal.db under the working directory. */
export function dbPath(flag: unknown): string {
  return path.resolve(typeof flag === 'string' ? flag : (process.env.LOGBOOK_DB ?? DEFAULT_DB));
}

/** Scripts' providers keep their state beside the journal unless told otherwise. */
export function setStateDir(db: string): void {
  process.env.LOGBOOK_STATE_DIR ??= path.dirname(db);
}
