// What every CLI command module shares: where the journal is (its shape and output lines are shared/terminal's).

import { DEFAULT_DB, resolveTarget } from '../runtime/store';
import { journalFromEnv } from '../shared/journalNames';
import { defaultStateDir } from '../shared/journalTarget';

export type { CommandModule, Io } from '../shared/terminal';

/** The journal: --journal, else $LOGBOOK_JOURNAL (or the deprecated $LOGBOOK_DB), else .logbook/journal.db under the working directory (a postgres:// URL as given). */
export function dbPath(flag: unknown): string {
  return resolveTarget(typeof flag === 'string' ? flag : (journalFromEnv(process.env, (l) => process.stderr.write(`${l}\n`)) ?? DEFAULT_DB));
}

/** Scripts' providers keep their state beside the journal (a server's journal: .logbook here) unless told otherwise. */
export function setStateDir(db: string): void {
  process.env.LOGBOOK_STATE_DIR ??= defaultStateDir(db);
}
