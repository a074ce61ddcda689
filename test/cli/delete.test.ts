// `logbook delete`: removes a finished run's rows, refuses a run whose process is alive, and names a missing run.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, cli, cliAsync, cliJson, tmpDir } from '../helpers';

describe('logbook delete', () => {
  const script = path.join(EXAMPLES, 'email-campaign.ts');

  it('deletes a run with its steps, actions and events, leaving other runs alone', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', script, '--run-id', 'keep', '--input', '{"recipients":2}']).status, 0);
    assert.equal(cli(dir, ['run', script, '--run-id', 'gone', '--input', '{"recipients":3}']).status, 0);
    const r = cliJson(dir, ['delete', 'gone']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json, { deleted: 'gone', steps: 4, actions: 3, events: r.json.events });
    assert.ok(r.json.events > 0);
    const ls = cliJson(dir, ['ls']).json as Array<{ id: string }>;
    assert.deepEqual(
      ls.map((x) => x.id),
      ['keep'],
    );
    const again = cli(dir, ['delete', 'gone']);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /LB_RUN_NOT_FOUND/);
  });

  it('refuses to delete a run that a live process is driving', async () => {
    const dir = tmpDir();
    // The fixture holds its first effect until a file appears: the CLI keeps the lease live meanwhile.
    const child = cliAsync(dir, ['run', path.join(FIXTURES, 'ext', 'desk-agent.ts'), '--run-id', 'busy', '--input', '{"items":1,"holdAt":0}']);
    try {
      for (let i = 0; !cli(dir, ['ls', '--json']).stdout.includes('"busy"'); i++) {
        if (i > 400) assert.fail('the run never appeared');
        await new Promise((r) => setTimeout(r, 25));
      }
      const r = cli(dir, ['delete', 'busy']);
      assert.equal(r.status, 4, r.stdout);
      assert.match(r.stderr, /LB_LEASE_HELD/);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    // Once its process is gone the run can be deleted.
    assert.equal(cli(dir, ['delete', 'busy']).status, 0);
  });
});
