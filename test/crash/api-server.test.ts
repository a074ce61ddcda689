// examples/api-server.ts as a user runs it: HTTP starts a campaign, the server is SIGKILLed mid-send, and the
// restarted server resumes the interrupted run at boot; the provider ends with every email exactly once.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, ROOT, tmpDir } from '../helpers';

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly lines: string[];
}

function startServer(dir: string, env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(EXAMPLES, 'api-server.ts')], {
    cwd: ROOT, // tsx maps `agent-logbook` to the source through tsconfig.json's paths, as the repository's examples do
    env: { ...process.env, PORT: '0', LOGBOOK_JOURNAL: path.join(dir, 'journal.db'), LOGBOOK_STATE_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m?.[1]) resolve({ child, url: m[1], lines });
      }
    });
    child.on('exit', (code, signal) => reject(new Error(`api-server exited (${signal ?? code}) before listening:\n${lines.join('\n')}`)));
  });
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

const post = (url: string, body: unknown) => json(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function sent(dir: string): Array<{ key: string }> {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, 'email-outbox.json'), 'utf8')) as { sent: Array<{ key: string }> }).sent;
  } catch {
    return [];
  }
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function outboxCalls(dir: string): number {
  return (JSON.parse(fs.readFileSync(path.join(dir, 'email-outbox.json'), 'utf8')) as { calls: number }).calls;
}

describe('examples/api-server.ts: a host killed mid-run resumes the run at its next boot', () => {
  it('starts a campaign over HTTP, is SIGKILLed while sending, and on restart finishes it with no email sent twice', async () => {
    const dir = tmpDir();
    const recipients = 300;
    const first = await startServer(dir);
    const exited = new Promise((r) => first.child.on('exit', (code, signal) => r(signal ?? code)));
    try {
      const started = await post(`${first.url}/runs`, { agent: 'email-campaign', input: { recipients }, runId: 'campaign-1' });
      assert.deepEqual([started.status, started.body], [202, { runId: 'campaign-1' }]);
      // The test kills the host; Logbook itself never kills a process that did not ask for a crash.
      await until('the first emails', () => (sent(dir).length >= 5 ? true : undefined));
    } finally {
      first.child.kill('SIGKILL');
    }
    assert.equal(await exited, 'SIGKILL');
    const before = sent(dir).length;
    assert.ok(before >= 5 && before < recipients, `killed mid-send (${before} of ${recipients} sent)`);

    const second = await startServer(dir);
    try {
      const run = await until('the resumed run to complete', async () => {
        const r = await json(`${second.url}/runs/campaign-1`);
        return r.body.status === 'completed' ? r.body : undefined;
      });
      assert.equal(run.attempt, 2);
      assert.deepEqual(run.output, { sent: recipients });
      assert.ok(
        second.lines.some((l) => l.includes('resuming 1 interrupted run(s): campaign-1')),
        second.lines.join('\n'),
      );
      const keys = sent(dir).map((s) => s.key);
      assert.equal(keys.length, recipients);
      assert.equal(new Set(keys).size, recipients, 'no email sent twice');

      const listed = await json(`${second.url}/runs`);
      assert.deepEqual(
        listed.body.map((r: { id: string; status: string }) => [r.id, r.status]),
        [['campaign-1', 'completed']],
      );
      const again = await post(`${second.url}/runs/campaign-1/resume`, { wait: true });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'LB_RUN_NOT_RESUMABLE');
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.on('exit', r));
    }
  });

  it('one driver per run: requests to resume or compensate a run being driven, or racing the boot recovery, get 409 LB_LEASE_HELD', async () => {
    const dir = tmpDir();
    const recipients = 200;
    // Each email spends a moment on the network, as a real provider's does: the server answers requests meanwhile.
    const network = { OUTBOX_LATENCY_MS: '3' };
    const held = (r: { status: number; body: { code?: string; error?: string } }, what: string): void => {
      assert.equal(r.status, 409, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'LB_LEASE_HELD', `${what}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error ?? '', /Run campaign-2 is being driven by pid \d+ on .+ \(api-server\) session [0-9a-f]{8}/, what);
    };
    const first = await startServer(dir, network);
    const exited = new Promise((r) => first.child.on('exit', (code, signal) => r(signal ?? code)));
    try {
      assert.equal((await post(`${first.url}/runs`, { agent: 'email-campaign', input: { recipients }, runId: 'campaign-2' })).status, 202);
      await until('the first emails', () => (sent(dir).length >= 3 ? true : undefined));
      // Two resumes at once and a compensation, while the start still drives the run in the same process.
      const [a, b, c] = await Promise.all([
        post(`${first.url}/runs/campaign-2/resume`, {}),
        post(`${first.url}/runs/campaign-2/resume`, {}),
        post(`${first.url}/runs/campaign-2/compensate`, {}),
      ]);
      held(a, 'first resume');
      held(b, 'second resume');
      held(c, 'compensate');
      const run = (await json(`${first.url}/runs/campaign-2`)).body as { status: string; attempt: number };
      assert.deepEqual([run.status, run.attempt], ['running', 1], 'still the first attempt: nothing took it over');
    } finally {
      first.child.kill('SIGKILL');
    }
    assert.equal(await exited, 'SIGKILL');

    // The boot recovery takes the interrupted run before the server reads any request: a resume racing it is refused.
    const second = await startServer(dir, network);
    try {
      held(await post(`${second.url}/runs/campaign-2/resume`, {}), 'resume racing the boot recovery');
      const run = await until('the recovered run to complete', async () => {
        const r = await json(`${second.url}/runs/campaign-2`);
        return r.body.status === 'completed' ? r.body : undefined;
      });
      assert.equal(run.attempt, 2, 'one resume: the boot recovery');
      const keys = sent(dir).map((s) => s.key);
      assert.equal(new Set(keys).size, recipients, 'every email sent');
      assert.equal(outboxCalls(dir), recipients, 'and the provider was asked once per email: no effect ran twice');
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.on('exit', r));
    }
  });
});
