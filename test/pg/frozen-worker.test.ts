// Issue 19 case 4 on a real PostgreSQL server: worker A frozen for real (SIGSTOP) inside execute past its lease, worker
// B takes the run over, verifies (absent) and executes; woken (SIGCONT), A learns from its own monotonic clock, before
// any overdue timer or message could tell it, that its lease is gone. Also the window no process can close: frozen
// between its check and its send, A sends anyway, and the example card processor refuses the repeated key.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { usePgServer } from './server';
import { cliSync, ledger, startWorker, stopWorker, waitFor, withStore, type Env, type Worker } from './workers';

const FROZEN_SCRIPTS = path.join(FIXTURES, 'frozen');

function env(url: string): Env {
  const dir = tmpDir('logbook-frozen-');
  return { db: url, dir, ledger: path.join(dir, 'ledger.log') };
}

function attemptEvents(e: Env, runId: string, attempt: number): number {
  return withStore(e, (s) => s.reader.events(runId, 0, 100_000).filter((x) => x.attempt === attempt).length);
}

/** A freezes inside execute, B takes over and finishes, A wakes: what A printed about it. */
async function freezeAndWake(e: Env, runId: string, mode: 'signal' | 'window'): Promise<string> {
  const extra = { FROZEN_DIR: e.dir };
  const a = startWorker(e, `a-${mode}`, [], FROZEN_SCRIPTS, extra);
  let b: Worker | undefined;
  try {
    await a.waitLine(/claims runs of frozen/);
    const q = cliSync(e, ['run', '--detach', path.join(FROZEN_SCRIPTS, 'capture.ts'), '--run-id', runId, '--input', JSON.stringify({ mode })]);
    assert.equal(q.status, 0, q.stderr);
    await waitFor('worker a inside execute', () => fs.existsSync(path.join(e.dir, `in-execute.${a.child.pid}`)), 60_000, 20);
    a.child.kill('SIGSTOP');
    const writtenByA = attemptEvents(e, runId, 1);
    b = startWorker(e, `b-${mode}`, [], FROZEN_SCRIPTS, extra);
    // B claims once A's lease expired, verifies (nothing there) and is inside its own execute: open the gate for it.
    await waitFor('worker b inside execute', () => fs.existsSync(path.join(e.dir, `in-execute.${b?.child.pid}`)), 60_000, 20);
    fs.writeFileSync(path.join(e.dir, 'gate'), '');
    await b.waitLine(new RegExp(`${runId} completed`));
    a.child.kill('SIGCONT');
    const line = await a.waitLine(new RegExp(`${runId} lost its lease`), 30_000);
    assert.equal(attemptEvents(e, runId, 1), writtenByA, 'woken, worker a wrote nothing to the run');
    assert.equal((await stopWorker(a)).code, 0);
    assert.equal((await stopWorker(b)).code, 0);
    return line;
  } finally {
    a.child.kill('SIGCONT');
    a.child.kill('SIGKILL');
    b?.child.kill('SIGKILL');
  }
}

describe('a worker frozen inside execute past its lease (PostgreSQL, SIGSTOP/SIGCONT)', function () {
  this.timeout(240_000);
  const pg = usePgServer();

  it("woken, it finds ctx.signal aborted before its send: the provider recorded exactly one send (worker b's)", async () => {
    const e = env(pg.server.createDatabase());
    const runId = 'frozen-signal';
    const line = await freezeAndWake(e, runId, 'signal');
    assert.deepEqual(ledger(e), [`capture:${runId}`], 'one request reached the provider');
    assert.match(line, /this process cannot prove it still holds the lease|another process took it over/);
    assert.match(
      line,
      new RegExp(`the execute of frozen\\.capture capture:${runId} was already running and was told by ctx\\.signal`),
      'its log names the execute in flight instead of claiming it started nothing',
    );
    withStore(e, (s) => {
      assert.equal(s.reader.run(runId)?.status, 'completed');
      assert.equal(s.reader.action(runId, `capture:${runId}`)?.reconciliation, 'verified-absent');
    });
  });

  it('frozen between its check and its send, it sends anyway: the card processor refuses the repeated key, one capture', async () => {
    const e = env(pg.server.createDatabase());
    const runId = 'frozen-window';
    await freezeAndWake(e, runId, 'window');
    assert.deepEqual(ledger(e), [`capture:${runId}`, `capture:${runId}`], 'both requests reached the provider: the window no process can close');
    const cards = JSON.parse(fs.readFileSync(path.join(e.dir, 'cards.json'), 'utf8')) as { captures: Array<{ key: string }>; refused: Array<{ key: string }> };
    assert.deepEqual(
      cards.captures.map((c) => c.key),
      [`capture:${runId}`],
      'the card was captured once',
    );
    assert.deepEqual(
      cards.refused.map((c) => c.key),
      [`capture:${runId}`],
      'the repeat was refused by its idempotency key',
    );
    withStore(e, (s) => assert.equal(s.reader.run(runId)?.status, 'completed'));
  });
});
