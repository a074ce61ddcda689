// `logbook rehearse --journal postgres://…`: the campaigns' journals live on a real PostgreSQL server, a schema each.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLI, EXAMPLES, tmpDir } from '../helpers';
import { usePgServer } from './server';

describe('logbook rehearse on PostgreSQL', function () {
  this.timeout(300_000);
  const pg = usePgServer();

  it('runs its campaigns against the server, one schema per campaign, and every invariant holds', () => {
    const url = pg.server.createDatabase();
    const database = url.slice(url.lastIndexOf('/') + 1);
    const cwd = tmpDir('logbook-rehearse-pg-');
    const report = path.join(cwd, 'report.json');
    const rehearse = (extra: string[]): ReturnType<typeof spawnSync> =>
      spawnSync(
        process.execPath,
        [
          CLI,
          'rehearse',
          path.join(EXAMPLES, 'email-campaign.ts'),
          '--input',
          '{"recipients":2}',
          '--random',
          '4',
          '--seed',
          'pg',
          '--jobs',
          '2',
          '--journal',
          url,
          '--report',
          report,
          ...extra,
        ],
        {
          cwd,
          encoding: 'utf8',
          env: { ...process.env, NO_COLOR: '1' },
          timeout: 280_000,
        },
      );
    const r = rehearse(['--keep']);
    assert.equal(r.status, 0, `rehearse failed:\n${String(r.stdout)}\n${String(r.stderr)}`);
    const rep = JSON.parse(fs.readFileSync(report, 'utf8')) as {
      ok: boolean;
      campaigns: Array<{ finished: boolean; sameOutput: boolean; duplicates: unknown[] }>;
    };
    assert.equal(rep.ok, true);
    assert.equal(rep.campaigns.length, 4);
    for (const c of rep.campaigns) {
      assert.equal(c.finished, true);
      assert.equal(c.sameOutput, true);
      assert.deepEqual(c.duplicates, []);
    }
    // The journals were the server's: a schema per campaign (and one for the uncrashed run), each holding the run.
    const schemas = pg.server.psql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'logbook\\_%' ORDER BY 1", database).split('\n').filter(Boolean);
    assert.equal(schemas.length, 5, `schemas: ${schemas.join(', ')}`);
    for (const s of schemas)
      assert.equal(pg.server.psql(`SELECT status FROM ${s}.runs WHERE id = 'rehearsal'`, database), 'completed', `${s} holds the completed run`);
    const scratch = /scratch kept\s+(\S+)/.exec(String(r.stdout))?.[1];
    assert.ok(scratch && fs.existsSync(scratch), 'the scratch folder was kept');
    const files = fs.readdirSync(scratch, { recursive: true }).map(String);
    assert.ok(!files.some((f) => f.endsWith('journal.db')), `no SQLite journal was written: ${files.join(', ')}`);
    fs.rmSync(scratch, { recursive: true, force: true });

    // Without --keep, its schemas are dropped afterwards.
    for (const s of schemas) pg.server.psql(`DROP SCHEMA ${s} CASCADE`, database);
    const again = rehearse([]);
    assert.equal(again.status, 0, String(again.stderr));
    assert.equal(pg.server.psql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'logbook\\_%'", database), '0', 'no schema left behind');
  });

  it('refuses a file for --journal, and --depth above 1 on PostgreSQL, saying why', () => {
    const cwd = tmpDir('logbook-rehearse-pg-');
    const run = (extra: string[]) =>
      spawnSync(process.execPath, [CLI, 'rehearse', path.join(EXAMPLES, 'email-campaign.ts'), ...extra], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      });
    const file = run(['--journal', path.join(cwd, 'j.db')]);
    assert.equal(file.status, 2);
    assert.match(file.stderr, /--journal takes only a PostgreSQL server/);
    const deep = run(['--journal', 'postgres://nobody@127.0.0.1:1/x', '--depth', '2']);
    assert.equal(deep.status, 2);
    assert.match(deep.stderr, /--depth 1 on PostgreSQL/);
  });
});
