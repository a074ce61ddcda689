// Who may take over a run: a live holder on this host blocks it, a reused PID does not, a lease on another host expires.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { processStartTime } from '../../src/runtime/store/owner';
import { cli, FIXTURES, show, tmpDir } from '../helpers';

const KNOBS = path.join(FIXTURES, 'knobs.ts');

/**
 * A run left `running` by a SIGKILL before its first step, its lease then handed to `holder`. Without `host`, the
 * lease keeps the host column the killed CLI wrote: this machine, as the runtime itself names it.
 */
function crashedRunHeldBy(dir: string, holder: { pid: number; pidStart: string | null; host?: string; expires: number }): void {
  const r = cli(dir, ['run', KNOBS, '--run-id', 'r', '--crash-at', 'first#1@before']);
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const db = new Database(path.join(dir, 'journal.db'));
  try {
    db.prepare(
      "UPDATE runs SET lease_token = 'another-driver', lease_owner = 'the other driver', lease_pid = ?, lease_pid_start = ?, lease_host = COALESCE(?, lease_host), lease_expires = ? WHERE id = 'r'",
    ).run(holder.pid, holder.pidStart, holder.host ?? null, holder.expires);
  } finally {
    db.close();
  }
}

describe('cli: leases', function () {
  this.timeout(120_000);

  it('a live holder on this host blocks resume (exit 4); the same PID with another start time is a reused PID, not the holder', async () => {
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const pid = sleeper.pid ?? assert.fail('no pid');
      const start = processStartTime(pid);
      assert.ok(start, 'the start time of a live process is readable');
      const dir = tmpDir();
      crashedRunHeldBy(dir, { pid, pidStart: start, expires: Date.now() + 60_000 });
      const held = cli(dir, ['resume', 'r']);
      assert.equal(held.status, 4, held.stdout + held.stderr);
      assert.match(held.stderr, /LB_LEASE_HELD.*the other driver/);
      assert.equal(show(dir, 'r').run.status, 'running', 'nothing changed');

      // Same PID number, another start time: the holder died and its PID was given to an unrelated process.
      const dir2 = tmpDir();
      crashedRunHeldBy(dir2, { pid, pidStart: String(Number(start) + 1), expires: Date.now() + 60_000 });
      const taken = cli(dir2, ['resume', 'r']);
      assert.equal(taken.status, 0, taken.stdout + taken.stderr);
      assert.equal(show(dir2, 'r').run.status, 'completed');
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
    }
  });

  it('a holder on another host is trusted until its lease expires, then resume takes over', () => {
    const dir = tmpDir();
    crashedRunHeldBy(dir, { pid: 1, pidStart: '1', host: 'another-host.example', expires: Date.now() + 60_000 });
    const held = cli(dir, ['resume', 'r']);
    assert.equal(held.status, 4, held.stdout + held.stderr);
    assert.match(held.stderr, /LB_LEASE_HELD/);

    const db = new Database(path.join(dir, 'journal.db'));
    try {
      db.prepare("UPDATE runs SET lease_expires = ? WHERE id = 'r'").run(Date.now() - 1000);
    } finally {
      db.close();
    }
    const taken = cli(dir, ['resume', 'r']);
    assert.equal(taken.status, 0, taken.stdout + taken.stderr);
    assert.equal(show(dir, 'r').run.status, 'completed');
  });
});
