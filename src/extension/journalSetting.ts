// Which journal the settings name, and why one is refused: pure, so it is tested without VS Code.

import * as path from 'node:path';
import { credentialKey, isPostgresUrl, urlHasPassword, urlPassword, urlUser, withUser, withoutPassword } from '../shared/pgUrl';
import { journalTargetProblem } from '../shared/journalTarget';
import { deprecationLine } from '../shared/journalNames';
import { SETTINGS, paletteName } from './ids';

export const DEFAULT_DB = path.join('.logbook', 'journal.db');

export interface JournalSetting {
  /**
   * The journal: an absolute SQLite path, or a postgres:// URL without a password; undefined when no folder is open
   * for a relative path, or when the setting is refused (see `journalProblem`).
   */
  readonly journal: string | undefined;
  /** Why the journal setting is refused (a password in it), said to the person instead of opening anything. */
  readonly journalProblem: string | undefined;
  /** The password $LOGBOOK_JOURNAL of the editor's environment carried, when the journal came from there. */
  readonly envPassword: string | undefined;
}

/**
 * Which of the journal's two settings is read: `logbook.journal`, else the deprecated `logbook.databasePath` (with the
 * line that says so); `name` is the one to quote when its value is refused.
 */
export function pickJournalSetting(
  current: string | undefined,
  old: string | undefined,
): { value: string | undefined; name: string; deprecation: string | undefined } {
  const currentName = `${SETTINGS.section}.${SETTINGS.journal}`;
  if (current !== undefined || old === undefined) return { value: current, name: currentName, deprecation: undefined };
  const oldName = `${SETTINGS.section}.${SETTINGS.legacyJournal}`;
  return { value: old, name: oldName, deprecation: deprecationLine(`The setting ${oldName}`, currentName) };
}

/**
 * The journal `logbook.journal` names (`set`: its value in user, workspace or folder settings, if any); with
 * none, a postgres:// $LOGBOOK_JOURNAL of the editor's environment (a file path there stays the CLI's business: the
 * sidebar keeps the workspace's file). A password is allowed in the environment, a place for credentials, but
 * refused in settings files, which are often committed.
 */
export function resolveJournalSetting(
  set: string | undefined,
  envDb: string | undefined,
  root: string | undefined,
  setting = `${SETTINGS.section}.${SETTINGS.journal}`,
): JournalSetting {
  // A target that is not what it looks like (postgress://…, a PostgreSQL URL that does not parse) is refused here,
  // where the setting is read: nothing opens it, and no file is made at a path spelled like a URL.
  const refused = (where: string, target: string): JournalSetting | undefined => {
    const p = journalTargetProblem(target);
    return p ? { journal: undefined, envPassword: undefined, journalProblem: `${where}: ${p.problem} ${p.remedy}` } : undefined;
  };
  if (set) {
    const r = refused(`The setting ${setting}`, set);
    if (r) return r;
  } else if (envDb) {
    const r = refused('$LOGBOOK_JOURNAL (or $LOGBOOK_DB) of the environment VS Code started in', envDb);
    if (r) return r;
  }
  const fromEnv = !set && envDb && isPostgresUrl(envDb) ? envDb : undefined;
  const db = set || fromEnv || DEFAULT_DB;
  if (isPostgresUrl(db)) {
    if (fromEnv) return { journal: withoutPassword(db), journalProblem: undefined, envPassword: urlPassword(db) };
    if (urlHasPassword(db)) {
      return {
        journal: undefined,
        envPassword: undefined,
        journalProblem: `The setting ${setting} holds a PostgreSQL URL with a password; settings files are often committed, so Agent Logbook does not use it. Remove the password from the URL (${withoutPassword(db)}) and run "${paletteName('setJournalPassword')}", or set PGPASSWORD in the environment VS Code starts with.`,
      };
    }
    return { journal: db, journalProblem: undefined, envPassword: undefined };
  }
  const expanded = db.replace(/\$\{workspaceFolder\}/g, root ?? '');
  return { journal: path.isAbsolute(expanded) ? expanded : root ? path.join(root, expanded) : undefined, journalProblem: undefined, envPassword: undefined };
}

/** Who connects to the journal: the reader process (as the read-only role, when one is set) or the writers. */
export type JournalUse = 'reader' | 'writer';

/** The journal as `use` connects to it: the reader as `readerRole` when one is set. Never holds a password. */
export function journalFor(s: JournalSetting, readerRole: string | undefined, use: JournalUse): string | undefined {
  const db = s.journal;
  if (db === undefined || !isPostgresUrl(db) || use === 'writer' || !readerRole) return db;
  return withUser(db, readerRole);
}

/**
 * PGPASSWORD for a child process that connects to `target`: the stored password of its role (`stored` looks one up
 * by credentialKey), else the one $LOGBOOK_JOURNAL carried (for its own user only). With neither, nothing: the child
 * inherits the editor's PGPASSWORD, or the pg client reads ~/.pgpass.
 */
export async function passwordEnv(
  s: JournalSetting,
  target: string | undefined,
  stored: (key: string) => PromiseLike<string | undefined>,
): Promise<Record<string, string>> {
  if (target === undefined || !isPostgresUrl(target)) return {};
  const secret = await stored(credentialKey(target));
  if (secret !== undefined) return { PGPASSWORD: secret };
  const main = s.journal;
  if (s.envPassword !== undefined && main !== undefined && urlUser(main) === urlUser(target)) return { PGPASSWORD: s.envPassword };
  return {};
}
