// The extension's journal setting: a postgres:// URL without a password is used, one with a password is refused
// (naming where credentials go), and a postgres:// $LOGBOOK_JOURNAL of the editor's environment may carry one.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { journalFor, passwordEnv, pickJournalSetting, resolveJournalSetting } from '../../src/extension/journalSetting';

describe('the journal setting (extension)', () => {
  const root = path.join(path.sep, 'ws');

  it('resolves a file path against the workspace folder, as before', () => {
    assert.deepEqual(resolveJournalSetting(undefined, undefined, root), {
      journal: path.join(root, '.logbook', 'journal.db'),
      journalProblem: undefined,
      envPassword: undefined,
    });
    assert.equal(resolveJournalSetting('${workspaceFolder}/j.db', undefined, root).journal, path.join(root, 'j.db'));
    assert.equal(resolveJournalSetting('j.db', undefined, undefined).journal, undefined);
    // A file path in $LOGBOOK_JOURNAL is the CLI's business: the sidebar keeps the workspace's journal.
    assert.equal(resolveJournalSetting(undefined, '/elsewhere/j.db', root).journal, path.join(root, '.logbook', 'journal.db'));
  });

  it('takes a postgres:// URL without a password as it is', () => {
    assert.deepEqual(resolveJournalSetting('postgres://ann@db.example:5433/logbook', undefined, root), {
      journal: 'postgres://ann@db.example:5433/logbook',
      journalProblem: undefined,
      envPassword: undefined,
    });
  });

  it('refuses a URL with a password in the settings, says where the password goes, and does not repeat it', () => {
    for (const url of ['postgres://ann:hunter2@db.example/logbook', 'postgresql://ann@db.example/logbook?password=hunter2&sslmode=require']) {
      const r = resolveJournalSetting(url, 'postgres://bob:other@h/db', root);
      assert.equal(r.journal, undefined);
      assert.match(r.journalProblem ?? '', /logbook\.journal holds a PostgreSQL URL with a password/);
      assert.match(r.journalProblem ?? '', /Agent Logbook: Set Journal Password/);
      assert.match(r.journalProblem ?? '', /PGPASSWORD/);
      assert.doesNotMatch(r.journalProblem ?? '', /hunter2/);
    }
  });

  it('with no setting, uses a postgres:// $LOGBOOK_JOURNAL, keeping its password out of the target', () => {
    assert.deepEqual(resolveJournalSetting(undefined, 'postgres://ann:s%40cret@db.example/logbook', root), {
      journal: 'postgres://ann@db.example/logbook',
      journalProblem: undefined,
      envPassword: 's@cret',
    });
    assert.equal(resolveJournalSetting('', 'postgres://ann@db.example/logbook', root).journal, 'postgres://ann@db.example/logbook');
    // An explicit setting wins over the environment.
    assert.equal(resolveJournalSetting('.logbook/mine.db', 'postgres://ann@db.example/logbook', root).journal, path.join(root, '.logbook', 'mine.db'));
  });

  it("connects the reader as the read-only role and the writers as the URL's user", () => {
    const s = resolveJournalSetting('postgres://ann@db.example:5433/logbook?sslmode=require', undefined, root);
    assert.equal(journalFor(s, 'viewer', 'reader'), 'postgres://viewer@db.example:5433/logbook?sslmode=require');
    assert.equal(journalFor(s, 'viewer', 'writer'), 'postgres://ann@db.example:5433/logbook?sslmode=require');
    assert.equal(journalFor(s, undefined, 'reader'), 'postgres://ann@db.example:5433/logbook?sslmode=require');
    const file = resolveJournalSetting(undefined, undefined, root);
    assert.equal(journalFor(file, 'viewer', 'reader'), file.journal, 'a SQLite journal has no roles');
  });

  it("hands each child the password of its own role: stored first, else $LOGBOOK_JOURNAL's for its user, else none", async () => {
    const stored = new Map([['postgres://viewer@db.example:5432/logbook', 'v-pw']]);
    const lookup = (key: string): Promise<string | undefined> => Promise.resolve(stored.get(key));
    const fromEnv = resolveJournalSetting(undefined, 'postgres://ann:env-pw@db.example/logbook', root);
    assert.deepEqual(await passwordEnv(fromEnv, journalFor(fromEnv, 'viewer', 'reader'), lookup), { PGPASSWORD: 'v-pw' });
    assert.deepEqual(await passwordEnv(fromEnv, journalFor(fromEnv, 'viewer', 'writer'), lookup), { PGPASSWORD: 'env-pw' });
    // The environment's password is ann's: another role gets none of it (its child inherits PGPASSWORD or ~/.pgpass).
    assert.deepEqual(await passwordEnv(fromEnv, journalFor(fromEnv, 'auditor', 'reader'), lookup), {});
    stored.set('postgres://ann@db.example:5432/logbook', 'stored-pw');
    assert.deepEqual(await passwordEnv(fromEnv, journalFor(fromEnv, undefined, 'writer'), lookup), { PGPASSWORD: 'stored-pw' });
    assert.deepEqual(await passwordEnv(resolveJournalSetting(undefined, undefined, root), path.join(root, 'j.db'), lookup), {});
  });
});

describe('the deprecated journal setting (logbook.databasePath)', () => {
  it('is read only when logbook.journal is not set, with a line that names the new setting', () => {
    assert.deepEqual(pickJournalSetting('a.db', 'b.db'), { value: 'a.db', name: 'logbook.journal', deprecation: undefined });
    assert.deepEqual(pickJournalSetting(undefined, undefined), { value: undefined, name: 'logbook.journal', deprecation: undefined });
    const old = pickJournalSetting(undefined, 'b.db');
    assert.equal(old.value, 'b.db');
    assert.equal(old.name, 'logbook.databasePath');
    assert.match(old.deprecation ?? '', /logbook\.databasePath is deprecated.*Write logbook\.journal instead\.$/);
    assert.match(resolveJournalSetting('postgres://a:pw@h/db', undefined, '/ws', old.name).journalProblem ?? '', /^The setting logbook\.databasePath holds/);
  });
});
