// The journal has one name (--journal, $LOGBOOK_JOURNAL, logbook.journal, launch "journal"); the 0.x names still work
// and warn once, and a refused combination changes nothing.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, EXAMPLES, ROOT, tmpDir } from '../helpers';
import { currentJournalFlag, journalFromEnv } from '../../src/shared/journalNames';
import { launchJsonSchema, resolveLaunch } from '../../src/adapter/launchConfig';
import { openJournal } from '../../src/runtime/journal';

function logbook(dir: string, args: string[], env: Record<string, string | undefined>) {
  const base: NodeJS.ProcessEnv = { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' };
  delete base.LOGBOOK_JOURNAL;
  delete base.LOGBOOK_DB;
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', env: { ...base, ...env }, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, warnings: r.stderr.split('\n').filter((l) => l.includes('deprecated')) };
}

describe('deprecated names of the journal', () => {
  let dir = '';
  let journal = '';
  before(() => {
    dir = tmpDir('logbook-names-');
    journal = path.join(dir, 'j.db');
    const r = logbook(
      dir,
      ['run', path.join(EXAMPLES, 'email-campaign.ts'), '--input', '{"recipients":1}', '--run-id', 'r1', '--journal', journal, '--json'],
      {},
    );
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.warnings, []);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--db still names the journal, and says once that it is --journal now', () => {
    const r = logbook(dir, ['ls', '--db', journal, '--json'], {});
    assert.equal(r.status, 0);
    assert.deepEqual(
      (JSON.parse(r.stdout) as { id: string }[]).map((x) => x.id),
      ['r1'],
    );
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0] ?? '', /--db is deprecated.*Write --journal instead\.$/);
  });

  it('the journal named twice (--journal and --db) is refused before anything is opened', () => {
    const other = path.join(dir, 'other.db');
    const r = logbook(dir, ['ls', '--journal', journal, '--db', other], {});
    assert.equal(r.status, 2);
    assert.equal(fs.existsSync(other), false, 'neither journal was opened or created');
  });

  it('$LOGBOOK_DB still names the journal and warns once; $LOGBOOK_JOURNAL wins over it, silently', () => {
    const old = logbook(dir, ['show', 'r1', '--json'], { LOGBOOK_DB: journal });
    assert.equal(old.status, 0);
    assert.equal(old.warnings.length, 1);
    assert.match(old.warnings[0] ?? '', /\$LOGBOOK_DB is deprecated.*\$LOGBOOK_JOURNAL/);
    const both = logbook(dir, ['show', 'r1', '--json'], { LOGBOOK_JOURNAL: journal, LOGBOOK_DB: path.join(dir, 'elsewhere.db') });
    assert.equal(both.status, 0);
    assert.deepEqual(both.warnings, []);
    assert.equal(fs.existsSync(path.join(dir, 'elsewhere.db')), false, 'the old variable was not opened');
  });

  it("rewrites the flag only before `--` (what follows is the script's), and warns once per process", () => {
    const said: string[] = [];
    assert.deepEqual(
      currentJournalFlag(['ls', '--db=x.db', '--', '--db', 'y'], (l) => said.push(l)),
      ['ls', '--journal=x.db', '--', '--db', 'y'],
    );
    currentJournalFlag(['ls', '--db', 'x.db'], (l) => said.push(l));
    assert.equal(said.length <= 1, true, 'at most one warning for the flag in a process');
    assert.equal(
      journalFromEnv({ LOGBOOK_JOURNAL: '' }, () => assert.fail('no warning')),
      undefined,
    );
  });

  it('a launch configuration\'s "database" is read as "journal" with a warning; both at once are refused', () => {
    const program = path.join(EXAMPLES, 'email-campaign.ts');
    const base = { program, runtimeExecutable: 'node', runtimeArgs: [], stopOnEntry: false, stopOnReplay: false };
    const old = resolveLaunch({ ...base, database: 'old.db' }, dir, {});
    assert.equal(old.runner.journal, path.join(dir, 'old.db'));
    assert.equal(old.warnings.length, 1);
    assert.match(old.warnings[0] ?? '', /"database" is deprecated.*Write "journal" instead\.$/);
    assert.deepEqual(resolveLaunch({ ...base, journal: 'new.db' }, dir, {}).warnings, []);
    assert.deepEqual(
      resolveLaunch({ ...base, journal: 'new.db' }, dir, { LOGBOOK_DB: 'unused.db' }).warnings,
      [],
      'an old variable the launch does not use is not warned about',
    );
    const fromEnv = resolveLaunch({ ...base, env: { LOGBOOK_DB: 'env.db' } }, dir, {});
    assert.equal(fromEnv.runner.journal, path.join(dir, 'env.db'));
    assert.match(fromEnv.warnings.join('\n'), /\$LOGBOOK_DB in "env"\/"envFile" is deprecated.*Write \$LOGBOOK_JOURNAL instead\.$/);
    assert.throws(
      () => resolveLaunch({ ...base, journal: 'a.db', database: 'b.db' }, dir, {}),
      /"journal" and its deprecated name "database" are both set.*remove "database"/,
    );
    const schema = launchJsonSchema().properties as Record<string, { deprecationMessage?: string }>;
    assert.match(schema.database?.deprecationMessage ?? '', /journal/);
    assert.equal(schema.journal?.deprecationMessage, undefined);
  });

  it('openJournal\'s "file" is read as "journal", warning once through log; both at once are refused', () => {
    const said: string[] = [];
    const old = openJournal({ file: journal, log: (l) => said.push(l) });
    assert.equal(old.target, journal);
    assert.equal(old.file, old.target);
    assert.deepEqual(
      old.runs().map((r) => r.id),
      ['r1'],
    );
    openJournal({ file: journal, log: (l) => said.push(l) });
    assert.equal(said.filter((l) => l.includes('deprecated')).length, 1, said.join('\n'));
    assert.deepEqual(openJournal({ journal, log: () => assert.fail('no warning') }).runs().length, 1);
    assert.throws(() => openJournal({ journal, file: journal }), /both "journal" and its deprecated name "file" are set.*remove "file"/);
  });

  it('the manifest contributes logbook.journal and marks logbook.databasePath deprecated', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { markdownDeprecationMessage?: string; default?: unknown }> } };
    };
    const props = pkg.contributes.configuration.properties;
    assert.equal(props['logbook.journal']?.default, '.logbook/journal.db');
    assert.match(props['logbook.databasePath']?.markdownDeprecationMessage ?? '', /logbook\.journal/);
  });
});
