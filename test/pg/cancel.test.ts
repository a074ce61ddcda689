// `logbook cancel` and journal.cancel on a real PostgreSQL server: the live run hears the cancel from its lease heartbeat.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, tmpDir } from '../helpers';
import { usePgServer } from './server';
import { openStore } from '../../src/runtime/store';

const SCRIPT = path.join(FIXTURES, 'cancel-target.ts');

interface Exit {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function logbook(url: string, dir: string, args: string[]): Promise<Exit> {
  const child = spawn(process.execPath, [CLI, ...args, '--journal', url], {
    cwd: dir,
    env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', LOGBOOK_LEASE_TTL_MS: '1500' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, stdout, stderr })));
}

async function waitForFile(file: string): Promise<void> {
  for (let i = 0; i < 2400 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(fs.existsSync(file), `never saw ${file}`);
}

const ledger = (dir: string): string[] => {
  const f = path.join(dir, 'cancel-ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

function runOf(url: string, runId: string): { status: string; cancel: string | null; kinds: string[] } {
  const s = openStore(url, { readonly: true });
  try {
    const row = s.reader.run(runId) ?? assert.fail('no run');
    return { status: row.status, cancel: row.cancel_requested ?? null, kinds: s.reader.events(runId, 0, 1000).map((e) => e.kind) };
  } finally {
    s.close();
  }
}

describe('cancel on PostgreSQL', function () {
  this.timeout(180_000);
  const pg = usePgServer();

  it('an action in flight commits, the run stops at its next boundary and --compensate undoes it; a queued run is cancelled at once; a finished one refused', async () => {
    const url = pg.server.createDatabase();
    const dir = tmpDir('logbook-pg-cancel-');
    const run = logbook(url, dir, ['run', SCRIPT, '--run-id', 'r']);
    await waitForFile(path.join(dir, 'booking'));
    const cancel = await logbook(url, dir, ['cancel', 'r', '--compensate', '--reason', 'stop']);
    assert.equal(cancel.status, 0, cancel.stdout + cancel.stderr);
    const ran = await run;
    // Compensated in its own process after it stopped: a run compensated exits 0, as `logbook compensate` does.
    assert.equal(ran.status, 0, ran.stdout + ran.stderr);
    assert.match(ran.stderr + ran.stdout, /was cancelled \(stop\)/);
    const r = runOf(url, 'r');
    assert.equal(r.status, 'compensated');
    assert.ok(r.kinds.indexOf('run.cancel-requested') < r.kinds.indexOf('run.cancelled'), r.kinds.join(' '));
    assert.deepEqual(ledger(dir), ['book book:r:h1', 'unbook compensate:book:r:h1']);

    const q = await logbook(url, dir, ['run', '--detach', SCRIPT, '--run-id', 'q']);
    assert.equal(q.status, 0, q.stderr);
    assert.equal((await logbook(url, dir, ['cancel', 'q'])).status, 0);
    assert.equal(runOf(url, 'q').status, 'cancelled');
    const refused = await logbook(url, dir, ['cancel', 'q']);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /LB_RUN_NOT_CANCELLABLE/);
  });
});
