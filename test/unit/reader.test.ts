// The journal reader process behind the sidebar: real journals written by the CLI, a real child process, real SIGKILL.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReaderClient } from '../../src/extension/readerClient';
import { TreeModel } from '../../src/extension/tree/treeModel';
import type { ActionNode, MoreNode, Node, RunNode, StepNode } from '../../src/extension/tree/nodes';
import type { ChangedNotice } from '../../src/reader/readerProtocol';
import { FIXTURES, ROOT, cli, cliAsync, tmpDir } from '../helpers';

const AGENT = path.join(FIXTURES, 'ext', 'desk-agent.ts');
const READER = path.join(ROOT, 'dist', 'readerMain.js');

function startReader(): { client: ReaderClient; notices: ChangedNotice[]; logs: string[] } {
  const logs: string[] = [];
  const client = new ReaderClient({ node: process.execPath, script: READER, cwd: ROOT, log: (_l, line) => logs.push(line) });
  const notices: ChangedNotice[] = [];
  client.onChanged((n) => notices.push(n));
  return { client, notices, logs };
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('journal reader process', function () {
  this.timeout(60_000);
  let client: ReaderClient | undefined;
  afterEach(() => client?.dispose());

  it('reads an absent journal as empty, then notices when a run creates it', async () => {
    const dir = tmpDir();
    const r = startReader();
    client = r.client;
    const db = path.join(dir, 'journal.db');
    assert.deepEqual(await client.open(db), { exists: false, file: db });
    assert.deepEqual(await client.request('runs', { offset: 0, limit: 10 }), { total: 0, runs: [] });
    assert.equal(cli(dir, ['run', AGENT, '--run-id', 'first', '--input', '{"items":2}']).status, 0);
    await until('a structure notice', () => r.notices.find((n) => n.structure));
    const page = await client.request('runs', { offset: 0, limit: 10 });
    assert.equal(page.total, 1);
    assert.deepEqual(
      page.runs.map((x) => [x.id, x.agent, x.status, x.stepCount, x.actionCount, x.inDoubt]),
      [['first', 'desk-agent', 'completed', 2, 2, 0]],
    );
  });

  it('serves the tree: runs → steps → actions → details, with the same node objects each time', async () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', AGENT, '--run-id', 'done', '--input', '{"items":2}']).status, 0);
    client = startReader().client;
    await client.open(path.join(dir, 'journal.db'));
    const model = new TreeModel(client);
    const [run] = (await model.children(undefined)) as RunNode[];
    assert.equal(run!.kind, 'run');
    assert.equal(run!.run.status, 'completed');
    const steps = (await model.children(run)) as StepNode[];
    assert.deepEqual(
      steps.map((s) => [s.step.name, s.step.status, s.step.actionCount]),
      [
        ['notify user 0', 'completed', 1],
        ['notify user 1', 'completed', 1],
      ],
    );
    const [action] = (await model.children(steps[0])) as ActionNode[];
    assert.deepEqual(
      [action!.action.type, action!.action.status, action!.action.effect, action!.action.id],
      ['notice.send', 'committed', 'non-idempotent', 'notice:done:user0'],
    );
    const details = await model.children(action);
    const byName = Object.fromEntries(details.map((d) => [d.kind === 'detail' ? d.name : d.kind, d.kind === 'detail' ? d.value : '']));
    assert.equal(byName['idempotency key'], 'notice:done:user0');
    assert.deepEqual(JSON.parse(byName.args!), { to: 'user0', hold: false });
    assert.deepEqual(JSON.parse(byName.result!), { sent: 'user0' });
    // Stable identity: VS Code's TreeView.reveal needs the very objects getChildren returned.
    const again = await model.children(undefined);
    assert.equal(again[0], run);
    assert.equal((await model.children(run))[1], steps[1]);
    assert.equal(model.getParent(action!), steps[0]);
    const cp = await client.request('checkpoint', { runId: 'done', stepIdx: 1 });
    assert.deepEqual(JSON.parse(cp!.json).result, { sent: 'user1' });
  });

  it('pages large runs: "load more" nodes, each page on demand', async () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', AGENT, '--run-id', 'big', '--input', '{"items":150}']).status, 0);
    client = startReader().client;
    await client.open(path.join(dir, 'journal.db'));
    const model = new TreeModel(client);
    const [run] = (await model.children(undefined)) as RunNode[];
    let kids = await model.children(run);
    assert.equal(kids.length, 101);
    const more = kids[100] as MoreNode;
    assert.equal(more.kind, 'more');
    assert.equal(more.remaining, 50);
    const changed: Array<Node | undefined>[] = [];
    model.onChange((n) => changed.push(n));
    model.loadMore(more);
    assert.deepEqual(changed, [[run]]);
    kids = await model.children(run);
    assert.equal(kids.length, 150);
    assert.ok(kids.every((k) => k.kind === 'step'));
    assert.equal((kids[149] as StepNode).step.name, 'notify user 149');
    const located = await model.locate('big', 140, 'notice:big:user140');
    assert.equal(located?.kind, 'action');
  });

  it('follows a run while it writes, and shows it interrupted with the action in doubt after SIGKILL', async () => {
    const dir = tmpDir();
    const r = startReader();
    client = r.client;
    await client.open(path.join(dir, 'journal.db'));
    // Item 2's effect holds until a file appears, so the kill lands between `started` and `committed`.
    const child = cliAsync(dir, ['run', AGENT, '--run-id', 'live', '--input', '{"items":4,"holdAt":2}']);
    try {
      const model = new TreeModel(client);
      await until('the run to appear', () => r.notices.some((n) => n.structure));
      await until('item 2 in flight', async () => {
        const a = await client!.request('actions', { runId: 'live', stepIdx: 2, afterSeq: 0, limit: 10 });
        return a.actions[0]?.status === 'in-flight';
      });
      const [run] = (await model.children(undefined)) as RunNode[];
      assert.equal(run!.run.status, 'running');
      assert.ok(run!.run.leaseLive);
      assert.equal(run!.run.ownerPid, child.pid);
      const seen = r.notices.length;
      child.kill('SIGKILL');
      await new Promise((res) => child.once('exit', res));
      // Nothing is written by a killed process: the reader notices the lease holder is gone.
      const n = await until('a notice after the kill', () => r.notices.slice(seen).find((x) => x.runs.includes('live')));
      const changed: Node[][] = [];
      model.onChange((nodes) => changed.push(nodes.filter((x): x is Node => x !== undefined)));
      await model.apply(n);
      assert.equal(changed[0]?.[0], run, 'the same run node is updated in place');
      assert.equal(run!.run.status, 'interrupted');
      assert.equal(run!.run.inDoubt, 1);
      const steps = (await model.children(run)) as StepNode[];
      assert.deepEqual(
        steps.map((s) => s.step.status),
        ['completed', 'completed', 'interrupted'],
      );
      const [a] = (await model.children(steps[2])) as ActionNode[];
      assert.equal(a!.action.status, 'in-doubt');
    } finally {
      child.kill('SIGKILL');
    }
    // Resume: the in-doubt effect is verified (it never happened) and runs again; the timeline shows both attempts.
    fs.writeFileSync(path.join(dir, 'release'), '');
    assert.equal(cli(dir, ['resume', 'live']).status, 0);
    await until('completed', async () => (await client!.request('run', { runId: 'live' }))?.status === 'completed');
    const t = await client.request('timeline', { runId: 'live' });
    assert.deepEqual(
      t!.attempts.map((x) => [x.attempt, x.outcome]),
      [
        [1, 'interrupted'],
        [2, 'completed'],
      ],
    );
    assert.ok(t!.marks.some((m) => m.kind === 'crash' && m.attempt === 1));
    assert.ok(t!.items.some((i) => i.kind === 'action' && i.attempt === 1 && i.status === 'in-doubt'));
    assert.ok(t!.marks.some((m) => m.kind === 'reconciled' && m.attempt === 2));
  });

  it('summarises the latest run of a script per step pattern and action type', async () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', AGENT, '--run-id', 's1', '--input', '{"items":3}']).status, 0);
    client = startReader().client;
    await client.open(path.join(dir, 'journal.db'));
    const s = await client.request('scriptStatus', {
      script: AGENT,
      stepPatterns: [
        { id: 'n', regex: '^notify user .*$' },
        { id: 'c', regex: '^charge card$' },
      ],
      actionTypes: ['notice.send'],
    });
    assert.equal(s.run?.id, 's1');
    assert.deepEqual(s.steps, { n: { completed: 3 } });
    assert.deepEqual(s.actions, { 'notice.send': { committed: 3 } });
  });

  it('answers a malformed request with an error naming what was wrong, and keeps serving', async () => {
    const child = spawn(process.execPath, [READER], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
    child.stdin.write('{"id":7,"method":"steps","params":{"runId":"x","from":-1,"limit":10}}\n');
    child.stdin.write('{"id":8,"method":"nope","params":{}}\n');
    child.stdin.write('{"id":9,"method":"runs","params":{"offset":0,"limit":5}}\n');
    await until('three answers', () => lines.length >= 3);
    child.stdin.end();
    const [a, b, c] = lines.map((l) => JSON.parse(l));
    assert.deepEqual([a.id, a.ok], [7, false]);
    // The reader bundles zod/mini without zod's global locale: the English text comes from the map passed per parse.
    assert.match(a.error.message, /Too small: expected number to be >=0[\s\S]*from/);
    assert.deepEqual([b.id, b.ok], [8, false]);
    assert.match(b.error.message, /method/);
    assert.deepEqual(c, { id: 9, ok: true, result: { total: 0, runs: [] } });
  });

  it('says which executable is missing when logbook.runtimeExecutable is wrong', async () => {
    const logs: string[] = [];
    client = new ReaderClient({ node: '/no/such/node', script: READER, cwd: ROOT, log: (_l, line) => logs.push(line) });
    await assert.rejects(client.request('runs', { offset: 0, limit: 1 }), /could not start "\/no\/such\/node".*runtimeExecutable/);
  });
  it('shows sleeps: a sleep step with its wake time, a run waiting in its process and one released sleeping, until when; which runs cancel takes', async () => {
    const dir = tmpDir();
    const sleeper = path.join(FIXTURES, 'sleep', 'sleeper.ts');
    const db = path.join(dir, 'journal.db');
    // A foreground run in a one-hour sleep: running (its process holds it), waiting until the journaled wake time.
    const fg = cliAsync(dir, ['run', sleeper, '--run-id', 'fg', '--input', '{"sleep":"1h"}']);
    const fgExit = new Promise((r) => fg.on('exit', r));
    // A run released by a worker: sleeping, no process holds it.
    assert.equal(cli(dir, ['run', '--detach', sleeper, '--run-id', 'rel', '--input', '{"sleep":"1h"}']).status, 0);
    const worker = spawn(
      process.execPath,
      [path.join(ROOT, 'dist', 'cli.js'), 'worker', '--scripts', path.dirname(sleeper), '--poll-ms', '100', '--journal', db],
      {
        cwd: dir,
        env: { ...process.env, LOGBOOK_STATE_DIR: dir, LOGBOOK_SLEEP_RELEASE_MS: '1000' },
        stdio: 'ignore',
      },
    );
    const workerExit = new Promise((r) => worker.on('exit', r));
    client = startReader().client;
    try {
      await client.open(db);
      const c = client;
      // Recorded sleeping, then its lease released (afterwards, by the attempt's end): wait for both.
      const rel = await until('the released run asleep', async () => {
        const r = await c.request('run', { runId: 'rel' });
        return r?.status === 'sleeping' && !r.leaseLive ? r : undefined;
      });
      const fgRun = await until('the foreground run waiting in its sleep', async () => {
        const r = await c.request('run', { runId: 'fg' });
        return r?.wakeAt !== null && r?.wakeAt !== undefined ? r : undefined;
      });
      const steps = await c.request('steps', { runId: 'fg', from: 0, limit: 10 });
      const nap = steps.steps.find((x) => x.name === 'nap');
      assert.ok(nap?.wakeAt && nap.sleepMs === 3_600_000, JSON.stringify(steps.steps));
      assert.equal(fgRun.status, 'running');
      assert.equal(fgRun.wakeAt, nap.wakeAt, 'a live run waits until its sleep step’s journaled wake time');
      assert.ok(rel.wakeAt !== null && rel.wakeAt > Date.now() + 3_500_000, String(rel.wakeAt));
      assert.equal(steps.steps.find((x) => x.name === 'before')?.wakeAt, null, 'a step that is not a sleep has no wake time');
      assert.deepEqual([fgRun.canCancel, rel.canCancel, fgRun.leaseLive, rel.leaseLive], [true, true, true, false]);
      // Cancelled, neither sleeps any more, and cancel no longer takes them.
      assert.equal(cli(dir, ['cancel', 'rel']).status, 0);
      assert.equal(cli(dir, ['cancel', 'fg', '--reason', 'test over']).status, 0);
      await fgExit;
      for (const id of ['fg', 'rel']) {
        const r = await c.request('run', { runId: id });
        assert.deepEqual([r?.status, r?.wakeAt, r?.canCancel], ['cancelled', null, false], id);
      }
      assert.equal((await c.request('run', { runId: 'fg' }))?.cancel?.reason, 'test over');
      assert.equal((await c.request('run', { runId: 'rel' }))?.cancel?.reason, null);
      assert.equal(fgRun.cancel, null, 'no cancel asked before');
    } finally {
      fg.kill('SIGKILL');
      worker.kill('SIGTERM');
      await workerExit;
    }
  });
});
