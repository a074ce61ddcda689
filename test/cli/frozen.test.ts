// Issue 19 case 4 on SQLite: a `logbook run` frozen for real (SIGSTOP) inside execute, past its lease, wakes up knowing
// it by its own monotonic clock, before the overdue timers could tell it: ctx.signal reads aborted (or assertLease
// throws) before the send, the run stops resumable with LB_LEASE_LOST naming the execute that was running, and a
// resume sends once.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, cli, cliAsync, show, tmpDir } from '../helpers';

const FROZEN = path.join(FIXTURES, 'frozen', 'capture.ts');
// Short, so the test is quick; long enough that a loaded machine still renews in time (a renewal every third of it).
const TTL_MS = 2000;

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ledger = (file: string): string[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
    : [];

describe('cli: a run frozen past its lease inside execute (issue 19 case 4, SQLite)', function () {
  this.timeout(120_000);

  for (const mode of ['signal', 'assert'] as const) {
    it(`woken, ${mode === 'signal' ? 'ctx.signal.aborted reads true' : 'ctx.assertLease() throws'} before the send: nothing sent, LB_LEASE_LOST, resumable, and a resume sends once`, async () => {
      const dir = tmpDir();
      const env = { FROZEN_DIR: dir, LEDGER_FILE: path.join(dir, 'ledger.log'), LOGBOOK_LEASE_TTL_MS: String(TTL_MS) };
      const runId = `frozen-${mode}`;
      const a = cliAsync(dir, ['run', FROZEN, '--run-id', runId, '--input', JSON.stringify({ mode })], env);
      let out = '';
      a.stdout.on('data', (d: Buffer) => (out += d.toString()));
      a.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => a.on('exit', (code) => resolve(code)));
      try {
        await until('the run to be inside execute', () => fs.existsSync(path.join(dir, `in-execute.${a.pid}`)));
        a.kill('SIGSTOP');
        // Frozen for longer than the lease lasts; then the gate opens before it wakes, so its first timer sends.
        const frozenAt = process.hrtime.bigint();
        await until('a lease length to pass', () => Number(process.hrtime.bigint() - frozenAt) / 1e6 > TTL_MS * 1.5);
        fs.writeFileSync(path.join(dir, 'gate'), '');
        a.kill('SIGCONT');
        const code = await exited;
        assert.equal(code, 4, `exit 4 (busy), not a failure of the script:\n${out}`);
      } finally {
        a.kill('SIGCONT');
        a.kill('SIGKILL');
      }
      assert.deepEqual(ledger(env.LEDGER_FILE), [], `woken past its lease, the run sent nothing:\n${out}`);
      assert.match(out, /\[LB_LEASE_LOST\] Run frozen-\w+ is no longer held by this process \(epoch 1\): this process cannot prove it still holds the lease/);
      assert.match(
        out,
        new RegExp(`the execute of frozen\\.capture capture:${runId} was already running and was told by ctx\\.signal`),
        'it names the execute that was in flight, not "started no new effect" alone',
      );
      assert.doesNotMatch(out, /No effect was running/);
      const stopped = show(dir, runId);
      assert.equal(stopped.run.status, 'interrupted', 'resumable: the lease was handed back, no status written');
      assert.equal(stopped.run.attempt, 1);

      const resumed = cli(dir, ['resume', runId], env);
      assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
      assert.match(resumed.stdout, /completed/);
      assert.deepEqual(ledger(env.LEDGER_FILE), [`capture:${runId}`], 'sent exactly once, by the resume (verify found nothing)');
    });
  }

  it('examples/card-capture.ts: captures once, also across a crash right after the capture (verify finds it)', () => {
    const dir = tmpDir();
    const script = path.join(EXAMPLES, 'card-capture.ts');
    const first = cli(dir, ['run', script, '--run-id', 'cap', '--crash-at', 'card.capture#1@after-execute']);
    assert.equal(first.signal, 'SIGKILL', first.stdout + first.stderr);
    const resumed = cli(dir, ['resume', 'cap']);
    assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
    assert.match(resumed.stdout, /reconciled card\.capture capture:cap:order-1: verified/);
    const cards = JSON.parse(fs.readFileSync(path.join(dir, 'cards.json'), 'utf8')) as { captures: Array<{ key: string }>; refused: unknown[] };
    assert.deepEqual(
      cards.captures.map((c) => c.key),
      ['capture:cap:order-1'],
    );
    assert.deepEqual(cards.refused, []);
  });
});
