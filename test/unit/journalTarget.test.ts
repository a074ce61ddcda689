// Issue 19 case 5: the one decision of which journal targets are refused (shared/journalTarget.ts), and its three
// askers: the store (LB_USAGE), the launch configuration and the extension's setting.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { journalTargetProblem, maskTarget } from '../../src/shared/journalTarget';
import { openStore, resolveTarget } from '../../src/runtime/store';
import { LogbookError } from '../../src/runtime/errors';
import { resolveLaunch } from '../../src/adapter/launchConfig';
import { resolveJournalSetting } from '../../src/extension/journalSetting';
import { FIXTURES, tmpDir } from '../helpers';

describe('journal targets (shared/journalTarget)', () => {
  it("refuses a URL whose scheme is not PostgreSQL's, and a PostgreSQL URL that does not parse", () => {
    for (const t of ['postgress://u:p@h/db', 'postgre://h/db', 'mysql://h/db', 'file:///tmp/j.db', 'sqlite://j.db', 'Postgres+ssl://h/db']) {
      assert.match(journalTargetProblem(t)?.problem ?? '', /looks like a URL/, t);
    }
    for (const t of ['postgres://u:a/b@h/db', 'postgres://u:a#b@h/db', 'postgres://u:a?b@h/db', 'postgres://u:12/b@h/db', 'postgres://h:port/db']) {
      assert.match(journalTargetProblem(t)?.problem ?? '', /cannot be used.*percent-encoded/, t);
    }
    for (const t of [
      'postgres://h/db',
      'postgresql://u:a%2Fb@h:5433/db?sslmode=require',
      'postgres://u:p@ss@h/db',
      'postgres://u@/db',
      'POSTGRES://h/db',
      '.logbook/journal.db',
      '/tmp/x.db',
      'C://dir/j.db',
      'a/b://c',
      'journal.db',
    ]) {
      assert.equal(journalTargetProblem(t), undefined, t);
    }
  });

  it('masks the whole password, however it is written', () => {
    assert.equal(maskTarget('postgress://ann:hunter2@h/db'), 'postgress://ann:***@h/db');
    assert.equal(maskTarget('postgres://ann:hu/nt#er@2@h/db'), 'postgres://ann:***@h/db');
    assert.equal(maskTarget('mysql://h/db?password=hunter2&x=1'), 'mysql://h/db?password=***&x=1');
    for (const t of [
      'postgress://ann:hunter2@h/db',
      'postgres://ann:hun/ter2@h/db',
      'postgres://ann:hun#ter2@h/db',
      'x-y://ann:hunter2@h/db?password=hunter2',
    ]) {
      assert.doesNotMatch(journalTargetProblem(t)?.problem ?? 'x', /hun|ter2/, t);
    }
  });

  it('the store refuses it with LB_USAGE before creating anything', () => {
    const dir = tmpDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const t of ['postgress://ann:hunter2@h/db', 'postgres://ann:hun/ter2@h/db']) {
        for (const open of [() => resolveTarget(t), () => openStore(t)]) {
          assert.throws(open, (err: unknown) => err instanceof LogbookError && err.code === 'LB_USAGE' && !/hunter2|hun\/ter2/.test(err.message));
        }
      }
      assert.deepEqual(fs.readdirSync(dir), []);
    } finally {
      process.chdir(cwd);
    }
  });

  it('a launch configuration is refused naming the attribute, or $LOGBOOK_JOURNAL when it came from there', () => {
    const dir = tmpDir();
    const program = path.join(FIXTURES, 'knobs.ts');
    assert.throws(
      () =>
        resolveLaunch(
          { program, journal: 'postgress://ann:hunter2@h/db', runtimeExecutable: 'node', runtimeArgs: [], stopOnEntry: false, stopOnReplay: false },
          dir,
          {},
        ),
      (err: unknown) =>
        err instanceof LogbookError &&
        err.code === 'LB_BAD_LAUNCH_CONFIG' &&
        /attribute "journal": The journal postgress:\/\/ann:\*\*\*@h\/db looks like a URL/.test(err.message) &&
        !err.message.includes('hunter2'),
    );
    assert.throws(
      () =>
        resolveLaunch({ program, runtimeExecutable: 'node', runtimeArgs: [], stopOnEntry: false, stopOnReplay: false }, dir, {
          LOGBOOK_JOURNAL: 'postgres://ann:hun/ter2@h/db',
        }),
      (err: unknown) =>
        err instanceof LogbookError &&
        err.code === 'LB_BAD_LAUNCH_CONFIG' &&
        /\$LOGBOOK_JOURNAL \(or \$LOGBOOK_DB\): The PostgreSQL URL .* cannot be used/.test(err.message) &&
        !err.message.includes('ter2'),
    );
    assert.equal(
      resolveLaunch({ program, journal: 'j.db', runtimeExecutable: 'node', runtimeArgs: [], stopOnEntry: false, stopOnReplay: false }, dir, {}).runner.journal,
      path.join(dir, 'j.db'),
    );
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it("the extension's setting (and a postgress:// $LOGBOOK_JOURNAL) is refused where it is read, with no journal named", () => {
    const root = path.join(path.sep, 'ws');
    const set = resolveJournalSetting('postgress://ann:hunter2@h/db', undefined, root);
    assert.equal(set.journal, undefined);
    assert.match(set.journalProblem ?? '', /logbook\.journal: The journal postgress:\/\/ann:\*\*\*@h\/db looks like a URL/);
    const env = resolveJournalSetting(undefined, 'postgress://ann:hunter2@h/db', root);
    assert.equal(env.journal, undefined);
    assert.match(env.journalProblem ?? '', /\$LOGBOOK_JOURNAL .*looks like a URL/);
    const bad = resolveJournalSetting('postgres://ann@h:port/db', undefined, root);
    assert.match(bad.journalProblem ?? '', /percent-encoded/);
    for (const r of [set, env, bad]) assert.doesNotMatch(r.journalProblem ?? '', /hunter2/);
    assert.equal(
      resolveJournalSetting(undefined, '/elsewhere/j.db', root).journalProblem,
      undefined,
      "a file path in $LOGBOOK_JOURNAL is still the CLI's business",
    );
  });
});
