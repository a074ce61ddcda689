// Issue 10 §3 through the real CLI: scripts that never settle, exit mid-run or leave run.do unawaited (with a real
// SIGKILL), a verify that hangs, and a journal locked by another connection under onFailure: 'compensate'.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURES, cli, cliAsync, show, tmpDir } from '../helpers';

const script = path.join(FIXTURES, 'misbehaving.ts');

interface World {
  charged: string[];
  refunded: string[];
}
const world = (dir: string): World => JSON.parse(fs.readFileSync(path.join(dir, 'misbehaving-world.json'), 'utf8')) as World;
const actionsOf = (dir: string, runId: string): Array<{ id: string; status: string; executions: number }> => show(dir, runId).actions;

describe('cli: scripts that misbehave (issue 10 §3)', () => {
  it('a step awaiting a promise nothing settles: run and resume end with LB_NEVER_SETTLED and exit 1, not a silent 0', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', script, '--run-id', 'ns'], { MISBEHAVE: 'never-settles' });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /\[LB_NEVER_SETTLED\] Run ns stopped making progress: step "wait for webhook" awaits a promise that nothing can settle.*logbook resume ns/,
    );
    assert.equal(show(dir, 'ns').run.status, 'failed');
    assert.deepEqual(world(dir).refunded, [], 'a stuck script is not a business failure: the declared compensation did not fire');
    const again = cli(dir, ['resume', 'ns'], { MISBEHAVE: 'never-settles' });
    assert.equal(again.status, 1, again.stdout + again.stderr);
    assert.match(again.stdout, /LB_NEVER_SETTLED/);
    const fixed = cli(dir, ['resume', 'ns'], { MISBEHAVE: 'never-settles', MIS_FIXED: '1' });
    assert.equal(fixed.status, 0, fixed.stdout + fixed.stderr);
    assert.deepEqual(world(dir).charged, ['charge:ns:1', 'charge:ns:3']);
  });

  it('a verify that never answers times out (LB_VERIFY_TIMEOUT): the action stays in doubt, nothing runs, no compensation', () => {
    const dir = tmpDir();
    const k = cli(dir, ['run', script, '--run-id', 'vh', '--crash-at', 'mis.charge#1@after-execute']);
    assert.equal(k.signal, 'SIGKILL');
    const r = cli(dir, ['resume', 'vh'], { MISBEHAVE: 'verify-hangs', MIS_VERIFY_TIMEOUT_MS: '300' });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /\[LB_VERIFY_TIMEOUT\] verify of mis\.charge charge:vh:1 did not answer within 300 ms\. The action is still in doubt/);
    const a = actionsOf(dir, 'vh').find((x) => x.id === 'charge:vh:1');
    assert.equal(a?.status, 'started');
    // The call is counted with the write that settles it, which the kill took away: started says it may have run.
    assert.equal(a?.executions, 0);
    assert.deepEqual(world(dir), { charged: ['charge:vh:1'], refunded: [] });
    const ok = cli(dir, ['resume', 'vh']);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.deepEqual(world(dir).charged, ['charge:vh:1', 'charge:vh:3'], 'verify found the first charge: not charged twice');
  });

  it('process.exit(0) in a step: the CLI says so on stderr and exits 1; the run is resumable', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', script, '--run-id', 'ex'], { MISBEHAVE: 'exits' });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /\[LB_SCRIPT_EXITED\] The process exited with code 0 \(process\.exit called at .*misbehaving\.ts:\d+:\d+\)\) while run ex was in flight, in step "give up"\..*Do not call process\.exit\(\)/,
    );
    assert.equal(show(dir, 'ex').run.status, 'interrupted');
    const ok = cli(dir, ['resume', 'ex'], { MISBEHAVE: 'exits', MIS_FIXED: '1' });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.deepEqual(world(dir).charged, ['charge:ex:1', 'charge:ex:3']);
  });

  it('run.do not awaited: killed right after its step checkpointed, the action had committed first; resume leaves nothing in doubt', () => {
    const dir = tmpDir();
    const k = cli(dir, ['run', script, '--run-id', 'ua', '--crash-at', 'fire and forget@after-checkpoint'], { MISBEHAVE: 'unawaited', MIS_EXECUTE_MS: '300' });
    assert.equal(k.signal, 'SIGKILL', k.stdout + k.stderr);
    assert.equal(actionsOf(dir, 'ua').find((a) => a.id === 'charge:ua:2')?.status, 'committed', 'the step ended only after its action committed');
    const r = cli(dir, ['resume', 'ua'], { MISBEHAVE: 'unawaited', MIS_EXECUTE_MS: '300' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const s = show(dir, 'ua');
    assert.equal(s.run.status, 'completed');
    assert.deepEqual(
      s.actions.filter((a: { status: string }) => a.status !== 'committed'),
      [],
      'a completed run holds no in-doubt action',
    );
    assert.deepEqual(world(dir).charged, ['charge:ua:1', 'charge:ua:2', 'charge:ua:3']);
  });

  it('the journal locked by another connection past the busy timeout: LB_DB_BUSY, exit 5, no compensation, resumable', async () => {
    const dir = tmpDir();
    const child = cliAsync(dir, ['run', script, '--run-id', 'lk'], { MISBEHAVE: 'hold' });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const holding = path.join(dir, 'holding');
    for (let i = 0; i < 600 && !fs.existsSync(holding); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(fs.existsSync(holding), 'the run reached its hold');
    const other = new Database(path.join(dir, 'journal.db'));
    let code: number | null;
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      fs.writeFileSync(path.join(dir, 'release'), '');
      code = await exited;
      other.prepare('ROLLBACK').run();
    } finally {
      other.close();
      child.kill('SIGKILL');
    }
    assert.equal(code, 5, stdout);
    assert.match(stdout, /interrupted/);
    assert.match(
      stdout,
      /\[LB_DB_BUSY\] The journal .*journal\.db stayed locked by another connection longer than the busy timeout.*Nothing journaled was lost/,
    );
    const s = show(dir, 'lk');
    assert.equal(s.run.status, 'interrupted');
    assert.ok(
      s.steps.every((x: { status: string }) => x.status !== 'failed'),
      'the storage error was not recorded as a step failing',
    );
    assert.ok(
      s.actions.every((a: { compensation: string | null }) => a.compensation === null),
      'the declared compensation did not fire',
    );
    assert.deepEqual(world(dir), { charged: ['charge:lk:1'], refunded: [] });
    const ok = cli(dir, ['resume', 'lk'], { MISBEHAVE: 'hold' });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.deepEqual(world(dir), { charged: ['charge:lk:1', 'charge:lk:3'], refunded: [] });
  });

  it('a page found damaged mid-run: LB_DB_IO, exit 5, not taken as the script failing (no compensation)', async () => {
    const dir = tmpDir();
    const child = cliAsync(dir, ['run', script, '--run-id', 'cp'], { MISBEHAVE: 'hold' });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    try {
      const holding = path.join(dir, 'holding');
      for (let i = 0; i < 600 && !fs.existsSync(holding); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(fs.existsSync(holding), 'the run reached its hold');
      const file = path.join(dir, 'journal.db');
      const db = new Database(file);
      // Everything into the main file; the checkpoint also makes the running process drop its page cache.
      db.pragma('wal_checkpoint(TRUNCATE)');
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const pages = db.prepare("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'events' AND rootpage > 1").pluck().all() as number[];
      db.close();
      const fd = fs.openSync(file, 'r+');
      for (const p of pages) fs.writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (p - 1) * pageSize);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fs.writeFileSync(path.join(dir, 'release'), '');
      assert.equal(await exited, 5, out);
    } finally {
      child.kill('SIGKILL');
    }
    assert.match(
      out,
      /\[LB_DB_IO\] The journal .*journal\.db could not be read or written: the disk reported an I\/O error or a page is damaged.*do not delete or replace it.*integrity_check/s,
    );
    assert.doesNotMatch(out, /declared policy compensates|internal error/);
    assert.deepEqual(world(dir), { charged: ['charge:cp:1'], refunded: [] }, 'nothing refunded, nothing charged after the damage');
  });
});
