// The sidebar's reader process on a PostgreSQL journal: a run written by another process shows up live through
// LISTEN, through polling when LISTEN is off, and again after its LISTEN connection is killed.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReaderClient } from '../../src/extension/readerClient';
import type { ChangedNotice } from '../../src/reader/readerProtocol';
import { CLI, FIXTURES, ROOT, tmpDir } from '../helpers';
import { usePgServer } from './server';

const AGENT = path.join(FIXTURES, 'ext', 'desk-agent.ts');
const READER = path.join(ROOT, 'dist', 'readerMain.js');
const LISTENER = "application_name = 'logbook-reader-listen'";
/** No polling at all, neither while LISTEN is up nor while it is down: only a notification can make the reader look. */
const NO_POLLING = { LOGBOOK_READER_SAFETY_POLL_MS: '0', LOGBOOK_READER_POLL_MS: '0' };

async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('journal reader process on PostgreSQL', function () {
  this.timeout(180_000);
  const pg = usePgServer();
  let client: ReaderClient | undefined;
  let writer: ChildProcess | undefined;
  afterEach(() => {
    client?.dispose();
    client = undefined;
    if (writer && writer.exitCode === null) writer.kill('SIGKILL');
    writer = undefined;
  });

  /** A run of the desk agent by the CLI (another process) that holds inside step 1 until `release` appears. */
  async function heldRun(url: string, dir: string, runId: string): Promise<void> {
    const child = spawn(process.execPath, [CLI, 'run', AGENT, '--journal', url, '--run-id', runId, '--input', '{"items":3,"holdAt":1}'], {
      cwd: dir,
      env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    writer = child;
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until('the run to hold in step 1', () => {
      if (child.exitCode !== null) assert.fail(`the writer exited with ${child.exitCode}: ${stderr}`);
      try {
        return pg.server.psql(`SELECT COUNT(*) FROM steps WHERE run_id = '${runId}'`, new URL(url).pathname.slice(1)) === '2';
      } catch {
        return false; // the schema is not there yet
      }
    });
  }

  function startReader(env: Record<string, string>): { client: ReaderClient; notices: ChangedNotice[] } {
    const notices: ChangedNotice[] = [];
    const c = new ReaderClient({ node: process.execPath, script: READER, cwd: ROOT, log: () => undefined, env: Promise.resolve(env) });
    c.onChanged((n) => notices.push(n));
    return { client: c, notices };
  }

  /**
   * Releases the held run and waits for the reader to report it. Only a read of the journal by sequence (a poll, which
   * LISTEN or the poll timer triggers) reports the newer events' seq; a lease check (its holder exiting) reports the
   * old one. So a notice naming the run at a seq past the run's held state proves the journal was read again.
   */
  async function seesRunFinish(r: { client: ReaderClient; notices: ChangedNotice[] }, url: string, dir: string, runId: string): Promise<void> {
    const heldSeq = Number(pg.server.psql('SELECT MAX(seq) FROM events', new URL(url).pathname.slice(1)));
    const before = await r.client.request('run', { runId });
    assert.equal(before?.status, 'running');
    assert.equal(before?.stepCount, 2);
    const steps = await r.client.request('steps', { runId, from: 0, limit: 10 });
    assert.deepEqual(
      steps.steps.map((s) => s.status),
      ['completed', 'in-progress'],
    );
    const seen = r.notices.length;
    fs.writeFileSync(path.join(dir, 'release'), '');
    await until('a change notice naming the run, read by sequence', () => r.notices.slice(seen).some((n) => n.runs.includes(runId) && n.seq > heldSeq));
    const after = await until('the run completed, as the reader reports it', async () => {
      const run = await r.client.request('run', { runId });
      return run?.status === 'completed' ? run : undefined;
    });
    assert.equal(after.stepCount, 3);
  }

  it('sees a run another process writes update live through LISTEN (no polling at all)', async () => {
    const url = pg.server.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const dir = tmpDir();
    await heldRun(url, dir, 'listened');
    const r = startReader(NO_POLLING);
    client = r.client;
    assert.deepEqual(await client.open(url), { exists: true, file: url });
    await until('the reader to LISTEN', () => pg.server.psql(`SELECT COUNT(*) FROM pg_stat_activity WHERE ${LISTENER}`, db) === '1');
    await seesRunFinish(r, url, dir, 'listened');

    // Every view of the tree reads the same from PostgreSQL as from a file.
    const acts = await client.request('actions', { runId: 'listened', stepIdx: 1, afterSeq: 0, limit: 10 });
    assert.deepEqual(
      acts.actions.map((x) => [x.id, x.status]),
      [['notice:listened:user1', 'committed']],
    );
    assert.equal((await client.request('action', { runId: 'listened', actionId: 'notice:listened:user1' }))?.result, '{"sent":"user1"}');
    assert.deepEqual(JSON.parse((await client.request('checkpoint', { runId: 'listened', stepIdx: 2 }))?.json ?? 'null'), {
      run: 'listened',
      step: 2,
      name: 'notify user 2',
      status: 'completed',
      result: { sent: 'user2' },
      error: null,
    });
    assert.deepEqual(
      (await client.request('timeline', { runId: 'listened' }))?.attempts.map((x) => x.attempt),
      [1],
    );
    const script = await client.request('scriptStatus', {
      script: AGENT,
      stepPatterns: [{ id: 'notify', regex: '^notify user' }],
      actionTypes: ['notice.send'],
    });
    assert.equal(script.run?.id, 'listened');
    assert.deepEqual(script.steps, { notify: { completed: 3 } });
    assert.deepEqual(script.actions, { 'notice.send': { committed: 3 } });
  });

  it('falls back to polling the newest event when LISTEN is off', async () => {
    const url = pg.server.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const dir = tmpDir();
    await heldRun(url, dir, 'polled');
    const r = startReader({ LOGBOOK_READER_LISTEN: '0', LOGBOOK_READER_POLL_MS: '100' });
    client = r.client;
    assert.equal((await client.open(url)).exists, true);
    await seesRunFinish(r, url, dir, 'polled');
    assert.equal(pg.server.psql(`SELECT COUNT(*) FROM pg_stat_activity WHERE ${LISTENER}`, db), '0', 'no LISTEN connection was opened');
  });

  it('reconnects its LISTEN connection after the server drops it, and is live again', async () => {
    const url = pg.server.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const dir = tmpDir();
    await heldRun(url, dir, 'reconnected');
    const r = startReader(NO_POLLING);
    client = r.client;
    await client.open(url);
    const first = await until('the reader to LISTEN', () => pg.server.psql(`SELECT pid FROM pg_stat_activity WHERE ${LISTENER}`, db) || undefined);
    assert.equal(pg.server.psql(`SELECT pg_terminate_backend(${first})`, db), 't');
    const second = await until('a new LISTEN connection', () => {
      const pid = pg.server.psql(`SELECT pid FROM pg_stat_activity WHERE ${LISTENER}`, db);
      return pid && pid !== first ? pid : undefined;
    });
    assert.notEqual(second, first);
    await seesRunFinish(r, url, dir, 'reconnected');
  });

  it('reads an empty database as an empty journal, then shows the first run once one creates the schema', async () => {
    const url = pg.server.createDatabase();
    const dir = tmpDir();
    const r = startReader({});
    client = r.client;
    assert.deepEqual(await client.open(url), { exists: false, file: url });
    assert.deepEqual(await client.request('runs', { offset: 0, limit: 10 }), { total: 0, runs: [] });
    await heldRun(url, dir, 'first');
    await until('a structure notice', () => r.notices.find((n) => n.structure));
    const page = await client.request('runs', { offset: 0, limit: 10 });
    assert.deepEqual(
      page.runs.map((x) => [x.id, x.agent]),
      [['first', 'desk-agent']],
    );
    fs.writeFileSync(path.join(dir, 'release'), '');
  });

  it('goes on after the server restarts (crash and recovery): the store reopens and LISTEN reconnects', async () => {
    const url = pg.server.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const dir = tmpDir();
    await heldRun(url, dir, 'before-restart');
    writer?.kill('SIGKILL');
    const r = startReader(NO_POLLING);
    client = r.client;
    await client.open(url);
    const first = await until('the reader to LISTEN', () => pg.server.psql(`SELECT pid FROM pg_stat_activity WHERE ${LISTENER}`, db) || undefined);
    pg.server.restartImmediate();
    const second = await until('LISTEN again after the restart', () => {
      const pid = pg.server.psql(`SELECT pid FROM pg_stat_activity WHERE ${LISTENER}`, db);
      return pid && pid !== first ? pid : undefined;
    });
    assert.notEqual(second, first);
    // A run written after the restart reaches the reader through the new LISTEN connection alone.
    const seen = r.notices.length;
    const lastSeq = Number(pg.server.psql('SELECT MAX(seq) FROM events', db));
    await heldRun(url, tmpDir(), 'after-restart');
    // Read by sequence (a lease check would name the run too, but at the old seq).
    await until('a notice naming the new run', () => r.notices.slice(seen).some((n) => n.runs.includes('after-restart') && n.seq > lastSeq));
    const page = await until('both runs listed', async () => {
      const p = await client?.request('runs', { offset: 0, limit: 10 });
      return p && p.total === 2 ? p : undefined;
    });
    assert.deepEqual(page.runs.map((x) => x.id).sort(), ['after-restart', 'before-restart']);
  });

  it('answers with the storage error while the server is down, and serves the journal again once it is back', async () => {
    const url = pg.server.createDatabase();
    const dir = tmpDir();
    await heldRun(url, dir, 'outage');
    writer?.kill('SIGKILL');
    const r = startReader(NO_POLLING);
    client = r.client;
    await client.open(url);
    assert.equal((await client.request('runs', { offset: 0, limit: 10 })).total, 1);
    pg.server.stop('fast');
    try {
      await assert.rejects(client.request('runs', { offset: 0, limit: 10 }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'LB_DB_UNREACHABLE', e.message);
        return true;
      });
    } finally {
      pg.server.start();
    }
    const page = await until('the journal served again', async () => {
      try {
        return await client?.request('runs', { offset: 0, limit: 10 });
      } catch {
        return undefined;
      }
    });
    assert.deepEqual(
      page.runs.map((x) => [x.id, x.status]),
      [['outage', 'interrupted']],
    );
  });
});
