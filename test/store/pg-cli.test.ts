// The README's demo flow through the real CLI against a PostgreSQL journal: run, SIGKILL mid-action, show, resume, show.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, EXAMPLES, tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';

describe('CLI on a PostgreSQL journal', function () {
  this.timeout(180_000);
  const pg = usePgServer();
  let dir: string;
  before(() => (dir = tmpDir('logbook-pg-cli-')));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** `logbook <args>` with the journal given by $LOGBOOK_JOURNAL or --journal (both forms are exercised). */
  const logbook = (url: string, args: string[], via: 'flag' | 'env' = 'flag') =>
    spawnSync(process.execPath, [CLI, ...args, ...(via === 'flag' ? ['--journal', url] : [])], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...(via === 'env' ? { LOGBOOK_JOURNAL: url } : {}) },
      timeout: 120_000,
    });

  it('runs the email campaign, is killed after email 30 was sent, and resumes without a duplicate', () => {
    const url = pg.server.createDatabase().replace('postgres@', 'postgres:unused-secret@');
    const empty = logbook(url, ['ls']);
    assert.equal(empty.status, 0, empty.stderr);
    assert.match(empty.stdout, /^No journal at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ yet\. Start a run/);
    const run = logbook(url, ['run', path.join(EXAMPLES, 'email-campaign.ts'), '--run-id', 'demo', '--crash-at', 'email.send#30@after-execute']);
    assert.equal(run.signal, 'SIGKILL', `${run.stdout}\n${run.stderr}`);

    const crashed = logbook(url, ['show', 'demo', '--json'], 'env');
    assert.equal(crashed.status, 0, crashed.stderr);
    const before = JSON.parse(crashed.stdout) as { run: { status: string }; actions: Array<{ status: string }> };
    assert.equal(before.run.status, 'interrupted', 'a killed holder on this machine is seen as gone at once (its pid)');
    assert.equal(before.actions.filter((a) => a.status === 'committed').length, 29);
    assert.equal(before.actions.filter((a) => a.status === 'started').length, 1, 'email 30 is in doubt');

    const ls = logbook(url, ['ls']);
    assert.equal(ls.status, 0, ls.stderr);
    assert.match(ls.stdout, /demo/);

    const resumed = logbook(url, ['resume', 'demo'], 'env');
    assert.equal(resumed.status, 0, `${resumed.stdout}\n${resumed.stderr}`);
    const after = JSON.parse(logbook(url, ['show', 'demo', '--json']).stdout) as { run: { status: string }; actions: Array<{ status: string }> };
    assert.equal(after.run.status, 'completed');
    assert.equal(after.actions.filter((a) => a.status === 'committed').length, 50);

    const outbox = JSON.parse(fs.readFileSync(path.join(dir, 'email-outbox.json'), 'utf8')) as { sent: Array<{ key: string }>; calls: number };
    assert.equal(outbox.sent.length, 50);
    assert.equal(new Set(outbox.sent.map((s) => s.key)).size, 50, 'no email twice');
    for (const r of [empty, run, crashed, resumed]) assert.doesNotMatch(`${r.stdout}${r.stderr}`, /unused-secret/, 'the password is never printed');
  });

  it('a server that is not there fails with LB_DB_UNREACHABLE and exit 5', () => {
    const url = pg.server.createDatabase().replace(/:(\d+)\//, ':1/');
    const r = logbook(url, ['ls']);
    assert.equal(r.status, 5, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /LB_DB_UNREACHABLE/);
  });
});
