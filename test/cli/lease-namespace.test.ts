// Issue 10 §3.7: two PID namespaces on one hostname (two containers sharing a volume) never take over each other's
// live run; a holder whose pid cannot be asked about is trusted until its lease expires. Real namespaces via
// `unshare --pid --fork --mount-proc` where this machine allows it (root), else leases written as another namespace's.

import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, FIXTURES, cli, cliAsync, show, tmpDir } from '../helpers';
import { currentNode, hostField, holderOnThisNode, leaseIsLive } from '../../src/runtime/store/owner';

const knobs = path.join(FIXTURES, 'knobs.ts');
const unshare = ['--pid', '--fork', '--kill-child', '--mount-proc'];
const canUnshare = spawnSync('unshare', [...unshare, 'true']).status === 0;

/** `logbook <args>` in a new PID namespace (same hostname, same files), waited for or not. */
function inNamespace(dir: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn('unshare', [...unshare, process.execPath, CLI, ...args, '--journal', path.join(dir, 'journal.db')], {
    cwd: dir,
    env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collect(child: ChildProcess): Promise<{ status: number | null; out: string }> {
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((res) => child.once('exit', (status) => res({ status, out })));
}

async function waitFor(file: string): Promise<void> {
  for (let i = 0; i < 600 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(fs.existsSync(file), `${file} appeared`);
}

/** What a holder in another container writes: this hostname, another pid namespace, a pid that means nothing here. */
function leaseFromAnotherNamespace(dir: string, runId: string, expiresIn: number): void {
  const db = new Database(path.join(dir, 'journal.db'));
  try {
    const node = (currentNode() ?? 'boot=unknown pidns=1').replace(/pidns=\d+/, 'pidns=4026999999');
    db.prepare(
      "UPDATE runs SET status = 'running', lease_token = 'other-container', lease_owner = 'pid 7 on this host (cli)', lease_pid = 7, lease_pid_start = '1', lease_host = ?, lease_expires = ? WHERE id = ?",
    ).run(hostField(os.hostname(), node), Date.now() + expiresIn, runId);
  } finally {
    db.close();
  }
}

describe('cli: leases across PID namespaces (issue 10 §3.7)', () => {
  it('the lease records the boot id and pid namespace; only a holder of this node is asked about by pid', () => {
    const here = currentNode();
    if (fs.existsSync('/proc/self/ns/pid')) assert.match(here ?? '', /^boot=[0-9a-f-]{36} pidns=\d+$/);
    const host = os.hostname();
    assert.equal(holderOnThisNode(hostField(host, here)), true);
    assert.equal(holderOnThisNode(hostField(host, 'boot=x pidns=1')), false, 'same hostname, another namespace');
    assert.equal(holderOnThisNode(hostField('elsewhere', here)), false);
    const gone = { lease_token: 't', lease_pid: 999_999_999, lease_pid_start: '1', lease_host: hostField(host, 'boot=x pidns=1') };
    assert.equal(leaseIsLive({ ...gone, lease_expires: Date.now() + 60_000 }, Date.now()), true, 'a pid that cannot be asked about is not presumed dead');
    assert.equal(leaseIsLive({ ...gone, lease_expires: Date.now() - 1 }, Date.now()), false, 'once the lease expired, it is');
    assert.equal(
      leaseIsLive({ ...gone, lease_host: hostField(host, here), lease_expires: Date.now() + 60_000 }, Date.now()),
      false,
      'on this node a dead pid is known dead',
    );
  });

  it('a resume in another PID namespace on the same hostname does not take over a live run', async () => {
    const dir = tmpDir();
    const holder = cliAsync(dir, ['run', knobs, '--run-id', 'held'], { KNOB_HOLD: '1' });
    const done = collect(holder);
    try {
      await waitFor(path.join(dir, 'holding'));
      if (canUnshare) {
        const r = await collect(inNamespace(dir, ['resume', 'held']));
        assert.equal(r.status, 4, r.out);
        assert.match(r.out, new RegExp(`\\[LB_LEASE_HELD\\] Run held is being driven by pid ${holder.pid} on `));
        const seen = await collect(inNamespace(dir, ['show', 'held', '--json']));
        assert.equal(
          (JSON.parse(seen.out) as { run: { status: string } }).run.status,
          'running',
          'seen from the other namespace it is running, not interrupted',
        );
      } else {
        leaseFromAnotherNamespace(dir, 'held', 60_000);
        const r = cli(dir, ['resume', 'held']);
        assert.equal(r.status, 4, r.stdout + r.stderr);
        assert.match(r.stderr, /\[LB_LEASE_HELD\]/);
      }
      assert.deepEqual(
        JSON.parse(fs.readFileSync(path.join(dir, 'knobs-world.json'), 'utf8')).done,
        ['act:held:first', 'act:held:second'],
        'nothing ran twice',
      );
    } finally {
      fs.writeFileSync(path.join(dir, 'release'), '');
    }
    const end = await done;
    if (canUnshare) assert.equal(end.status, 0, end.out);
    else holder.kill('SIGKILL');
  });

  it('a holder in another namespace that died is waited for until its lease expires, then taken over', async () => {
    const dir = tmpDir();
    if (canUnshare) {
      const holder = inNamespace(dir, ['run', knobs, '--run-id', 'ns'], { KNOB_HOLD: '1' });
      const done = collect(holder);
      await waitFor(path.join(dir, 'holding'));
      const r = cli(dir, ['resume', 'ns']);
      assert.equal(r.status, 4, 'alive in its namespace: refused');
      assert.match(r.stderr, /\[LB_LEASE_HELD\]/);
      holder.kill('SIGKILL'); // --kill-child: the namespace's init, the CLI, gets SIGKILL too
      await done;
    } else {
      assert.equal(cli(dir, ['run', knobs, '--run-id', 'ns', '--crash-at', 'second@step:before']).signal, 'SIGKILL');
      leaseFromAnotherNamespace(dir, 'ns', 60_000);
    }
    const early = cli(dir, ['resume', 'ns']);
    assert.equal(early.status, 4, 'its pid cannot be asked about from here: not presumed dead while the lease lasts');
    assert.match(early.stderr, /\[LB_LEASE_HELD\]/);
    assert.equal(show(dir, 'ns').run.status, 'running');
    // The holder's heartbeat stopped; let its lease run out (as 30 s without a heartbeat would).
    const db = new Database(path.join(dir, 'journal.db'));
    db.prepare("UPDATE runs SET lease_expires = ? WHERE id = 'ns'").run(Date.now() - 1);
    db.close();
    assert.equal(show(dir, 'ns').run.status, 'interrupted');
    fs.writeFileSync(path.join(dir, 'release'), '');
    const r = cli(dir, ['resume', 'ns'], { KNOB_HOLD: '1' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });
});
