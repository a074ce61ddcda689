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

function startServer(dir: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(EXAMPLES, 'api-server.ts')], {
    cwd: ROOT, // tsx maps `agent-logbook` to the source through tsconfig.json's paths, as the repository's examples do
    env: { ...process.env, PORT: '0', LOGBOOK_DB: path.join(dir, 'journal.db'), LOGBOOK_STATE_DIR: dir },
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
      assert.ok(second.lines.some((l) => l.includes('resuming 1 interrupted run(s): campaign-1')), second.lines.join('\n'));
      const keys = sent(dir).map((s) => s.key);
      assert.equal(keys.length, recipients);
      assert.equal(new Set(keys).size, recipients, 'no email sent twice');

      const listed = await json(`${second.url}/runs`);
      assert.deepEqual(listed.body.map((r: { id: string; status: string }) => [r.id, r.status]), [['campaign-1', 'completed']]);
      const again = await post(`${second.url}/runs/campaign-1/resume`, { wait: true });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'LB_RUN_NOT_RESUMABLE');
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.on('exit', r));
    }
  });
});
