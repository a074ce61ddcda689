// Passwords for a PostgreSQL journal: kept in VS Code's SecretStorage (or the editor's environment), handed to child processes as PGPASSWORD only.

import * as vscode from 'vscode';
import { credentialKey, isPostgresUrl, urlUser } from '../shared/pgUrl';
import type { LogbookConfig } from './config';
import { SETTINGS } from './ids';
import { journalFor, passwordEnv, type JournalUse } from './journalSetting';

const SECRET_PREFIX = 'logbook.journalPassword:';

export interface SetPasswordOptions {
  /** The password to store ('' deletes it); without one, an input box asks. */
  readonly password?: string;
  /** Which role's password: the journal URL's user (default) or `logbook.readerRole`. */
  readonly role?: 'writer' | 'reader';
}

export class Credentials {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** Fires when a stored password changes: the reader reconnects with it. */
  get onDidChange(): vscode.Event<vscode.SecretStorageChangeEvent> {
    return this.secrets.onDidChange;
  }

  /** The journal as `use` connects to it (see journalFor): never holds a password. */
  target(c: LogbookConfig, use: JournalUse): string | undefined {
    return journalFor(c, c.readerRole, use);
  }

  /** PGPASSWORD for a child process that connects to `target` (see passwordEnv). */
  env(c: LogbookConfig, target: string | undefined): Promise<Record<string, string>> {
    return passwordEnv(c, target, (key) => this.secrets.get(SECRET_PREFIX + key));
  }

  /** The setJournalPassword command: stores (or with '' deletes) the password of the journal's role or the reader's. */
  async setPassword(c: LogbookConfig, opts: SetPasswordOptions = {}): Promise<'stored' | 'deleted' | undefined> {
    const db = c.journal;
    if (db === undefined || !isPostgresUrl(db)) {
      const why = c.journalProblem ?? `The journal is a SQLite file (${db ?? 'no folder open'}): it needs no password.`;
      void vscode.window.showInformationMessage(
        `${why} A password is for a PostgreSQL journal: set ${SETTINGS.section}.${SETTINGS.journal} to postgres://user@host:port/database (without the password) first.`,
      );
      return undefined;
    }
    let role = opts.role;
    if (role === undefined && c.readerRole && c.readerRole !== urlUser(db)) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: urlUser(db) ?? '(default user)', description: 'runs, resumes, decisions', role: 'writer' as const },
          { label: c.readerRole, description: `the sidebar's read-only role (${SETTINGS.section}.${SETTINGS.readerRole})`, role: 'reader' as const },
        ],
        { placeHolder: 'Whose password?' },
      );
      if (!pick) return undefined;
      role = pick.role;
    }
    const target = this.target(c, role === 'reader' ? 'reader' : 'writer') ?? db;
    const who = `${urlUser(target) ?? 'the default user'} on ${new URL(target).host || 'the local socket'}${new URL(target).pathname}`;
    const password =
      opts.password ??
      (await vscode.window.showInputBox({
        password: true,
        ignoreFocusOut: true,
        prompt: `Password of ${who} (kept in VS Code's secret storage; empty deletes it)`,
      }));
    if (password === undefined) return undefined;
    const key = SECRET_PREFIX + credentialKey(target);
    if (password === '') {
      await this.secrets.delete(key);
      return 'deleted';
    }
    await this.secrets.store(key, password);
    return 'stored';
  }
}
