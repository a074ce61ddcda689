// The sidebar on a shared PostgreSQL journal, in a real extension host: a private server (started and stopped here),
// password roles, the read-only reader role, a run written by another process seen live, an approval landing there.

import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode } from '../../src/extension/tree/nodes';
import {
  CLI,
  DapLog,
  NODE,
  ROOT,
  agentFile,
  api,
  release,
  runItem,
  shown,
  started,
  stateDir as hostStateDir,
  terminated,
  text,
  unrelease,
  until,
  workspace,
} from './helpers';

const WRITER = 'logbook_writer';
const VIEWER = 'logbook_viewer';
const WRITER_PW = 'w-secret-1';
const VIEWER_PW = 'v-secret-2';
const DB = 'vscode_journal';

interface Server {
  readonly dir: string;
  readonly port: number;
  readonly data: string;
}

/**
 * Starts a private server with scripts/pg-server.mjs on the Node the suite runs things with, in a folder of the system's
 * temp dir: the extension host's own TMPDIR is a private folder the server's `postgres` user cannot enter.
 */
function startServer(): Server {
  const script = `import(${JSON.stringify(path.join(ROOT, 'scripts', 'pg-server.mjs'))}).then((m) => m.startServer()).then((h) => console.log(JSON.stringify({ dir: h.dir, port: h.port, data: h.data })))`;
  const env = { ...process.env };
  for (const k of ['TMPDIR', 'TMP', 'TEMP']) delete env[k];
  const r = spawnSync(NODE, ['-e', script], { encoding: 'utf8', timeout: 300_000, env });
  if (r.status !== 0) throw new Error(`could not start PostgreSQL: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Server;
}

function stopServer(s: Server): void {
  spawnSync(NODE, [path.join(ROOT, 'scripts', 'pg-server.mjs'), 'stop', '--dir', s.dir], { encoding: 'utf8', timeout: 120_000 });
  fs.rmSync(s.dir, { recursive: true, force: true });
}

function psql(s: Server, sql: string, database = 'postgres'): string {
  // Where scripts/pg-server.mjs finds the binaries: $LOGBOOK_PG_BIN, else Debian's newest /usr/lib/postgresql/N/bin.
  const version = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0] : undefined;
  const bin = process.env.LOGBOOK_PG_BIN ?? (version ? path.join('/usr/lib/postgresql', version, 'bin') : '');
  const r = spawnSync(
    path.join(bin, 'psql'),
    ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(s.port), '-U', 'postgres', '-d', database, '-c', sql],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * Two password roles (the server's own users stay `trust`): a writer owning the journal's database, and a viewer
 * that may only read what the writer creates. A wrong or missing password fails for both.
 */
function setUpRoles(s: Server): void {
  const hba = path.join(s.data, 'pg_hba.conf');
  const rules = [WRITER, VIEWER].map((r) => `host all ${r} 127.0.0.1/32 scram-sha-256`).join('\n');
  fs.writeFileSync(hba, `${rules}\n${fs.readFileSync(hba, 'utf8')}`);
  psql(s, `CREATE ROLE ${WRITER} LOGIN PASSWORD '${WRITER_PW}'`);
  psql(s, `CREATE ROLE ${VIEWER} LOGIN PASSWORD '${VIEWER_PW}'`);
  psql(s, `CREATE DATABASE ${DB} OWNER ${WRITER}`);
  psql(s, `ALTER DEFAULT PRIVILEGES FOR ROLE ${WRITER} IN SCHEMA public GRANT SELECT ON TABLES TO ${VIEWER}`, DB);
  psql(s, 'SELECT pg_reload_conf()');
}

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('logbook');

describe('the sidebar on a PostgreSQL journal', function () {
  this.timeout(300_000);
  let server: Server | undefined;
  let url = '';
  const writers: ChildProcess[] = [];
  const states = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-vscode-pg-'));
  const stateDir = (runId: string): string => path.join(states, runId);
  let dap: DapLog | undefined;

  before(() => {
    dap = new DapLog();
    server = startServer();
    setUpRoles(server);
    url = `postgres://${WRITER}@127.0.0.1:${server.port}/${DB}`;
  });

  after(async () => {
    dap?.dispose();
    for (const w of writers) if (w.exitCode === null) w.kill('SIGKILL');
    await config().update('journal', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('readerRole', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('journal', '.logbook/journal.db', vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('logbook.setJournalPassword', { role: 'writer', password: '' }).then(undefined, () => undefined);
    if (server) stopServer(server);
    fs.rmSync(states, { recursive: true, force: true });
  });

  /**
   * `logbook run` of the workspace's agent by another process (the test's), with the writer's password in its
   * environment and provider state of its own (`stateDir(runId)/release` lets a held effect go on).
   */
  function runAgent(runId: string, input: object): ChildProcess {
    fs.mkdirSync(stateDir(runId), { recursive: true });
    const child = spawn(NODE, [CLI, 'run', agentFile(), '--journal', url, '--run-id', runId, '--input', JSON.stringify(input)], {
      cwd: workspace(),
      env: { ...process.env, PGPASSWORD: WRITER_PW, LOGBOOK_STATE_DIR: stateDir(runId), NO_COLOR: '1' },
      stdio: 'ignore',
    });
    writers.push(child);
    return child;
  }

  /**
   * The team's way: `logbook run --detach` queues the run and a `logbook worker` (another process, as on another
   * machine) claims and drives it, with the writer's password in its environment.
   */
  function workerRuns(runId: string, input: object): ChildProcess {
    fs.mkdirSync(stateDir(runId), { recursive: true });
    const folder = path.join(workspace(), 'worker-scripts');
    fs.mkdirSync(folder, { recursive: true });
    fs.copyFileSync(agentFile(), path.join(folder, 'agent.ts'));
    const env = { ...process.env, PGPASSWORD: WRITER_PW, LOGBOOK_STATE_DIR: stateDir(runId), NO_COLOR: '1' };
    const queued = spawnSync(
      NODE,
      [CLI, 'run', '--detach', path.join(folder, 'agent.ts'), '--journal', url, '--run-id', runId, '--input', JSON.stringify(input)],
      { cwd: workspace(), env, encoding: 'utf8' },
    );
    assert.equal(queued.status, 0, queued.stderr);
    const child = spawn(NODE, [CLI, 'worker', '--scripts', folder, '--journal', url, '--name', 'ext-test-worker', '--poll-ms', '100'], {
      cwd: workspace(),
      env,
      stdio: 'ignore',
    });
    writers.push(child);
    return child;
  }

  it('refuses a journal URL with a password in the settings, saying where the password goes', async () => {
    const a = await api();
    await config().update('journal', `postgres://${WRITER}:${WRITER_PW}@127.0.0.1:${server?.port ?? 0}/${DB}`, vscode.ConfigurationTarget.Workspace);
    const problem = await until('the refusal in the tree', async () => {
      const items = await shown(a);
      const msg = items.find((s) => s.node.kind === 'message');
      return msg && /password/.test(text(msg.item.label)) ? msg : undefined;
    });
    const tooltip = typeof problem.item.tooltip === 'string' ? problem.item.tooltip : (problem.item.tooltip?.value ?? '');
    assert.match(tooltip, /Set Journal Password/);
    assert.match(tooltip, /PGPASSWORD/);
    assert.doesNotMatch(text(problem.item.label), new RegExp(WRITER_PW));
    // Nor does a launch configuration get to carry one: the session does not start.
    const database = `postgres://${WRITER}:${WRITER_PW}@127.0.0.1:${server?.port ?? 0}/${DB}`;
    let begun = false;
    const sub = vscode.debug.onDidStartDebugSession(() => (begun = true));
    try {
      assert.equal(
        await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
          type: 'logbook',
          request: 'launch',
          name: 'pw in launch',
          program: agentFile(),
          journal: database,
        }),
        false,
      );
    } finally {
      sub.dispose();
    }
    assert.equal(begun, false);
  });

  it('browses the journal as the read-only role with passwords from secret storage, live while a worker drives a queued run', async () => {
    const a = await api();
    await config().update('journal', url, vscode.ConfigurationTarget.Workspace);
    await config().update('readerRole', VIEWER, vscode.ConfigurationTarget.Workspace);
    // No password stored yet: the server refuses the viewer, and the tree says where its password goes.
    const refused = await until('the refused login in the tree', async () => {
      a.model.refreshAll();
      const msg = (await shown(a)).find((s) => s.node.kind === 'message');
      const tip = msg && (typeof msg.item.tooltip === 'string' ? msg.item.tooltip : (msg.item.tooltip?.value ?? ''));
      return tip && /Set Journal Password/.test(tip) ? tip : undefined;
    });
    assert.match(refused, /logbook\.readerRole/);
    assert.equal(await vscode.commands.executeCommand('logbook.setJournalPassword', { role: 'writer', password: WRITER_PW }), 'stored');
    assert.equal(await vscode.commands.executeCommand('logbook.setJournalPassword', { role: 'reader', password: VIEWER_PW }), 'stored');

    const writer = workerRuns('pg-live', { items: 3, holdAt: 1 });
    const held = await until(
      'the run in the tree, claimed by the worker and holding in its second step',
      async () => {
        const x = await runItem(a, 'pg-live');
        if (!x || x.node.kind !== 'run') return undefined;
        return x.node.run.stepCount === 2 && x.node.run.status === 'running' ? x : undefined;
      },
      120_000,
    );
    assert.equal(held.node.kind === 'run' && held.node.run.leaseLive, true);
    assert.match(held.node.kind === 'run' ? (held.node.run.owner ?? '') : '', /ext-test-worker/, 'the tree says which worker holds the run');
    // The reader connects as the viewer (the read-only role), with no password on its command line.
    const readerPid = a.readerPid();
    assert.ok(readerPid);
    assert.doesNotMatch(fs.readFileSync(`/proc/${readerPid}/cmdline`, 'utf8'), /secret/);
    assert.equal(psql(server!, `SELECT COUNT(*) > 0 FROM pg_stat_activity WHERE usename = '${VIEWER}' AND datname = '${DB}'`), 't');
    // It follows the journal by LISTEN, on a connection of its own, as that role too.
    await until(
      'the reader to LISTEN as the viewer',
      () =>
        psql(server!, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'logbook-reader-listen' AND usename = '${VIEWER}'`) === '1' || undefined,
    );
    assert.throws(() => psql(server!, `SET ROLE ${VIEWER}; INSERT INTO runs (id) VALUES ('x')`, DB), /permission denied/);

    fs.writeFileSync(path.join(stateDir('pg-live'), 'release'), '');
    const done = await until(
      'the run completed in the tree, live',
      async () => {
        const x = await runItem(a, 'pg-live');
        return x?.node.kind === 'run' && x.node.run.status === 'completed' ? x : undefined;
      },
      120_000,
    );
    assert.equal(done.node.kind === 'run' && done.node.run.stepCount, 3);
    // A worker keeps claiming until told to stop: SIGTERM is its graceful stop (nothing held, exit 0).
    writer.kill('SIGTERM');
    await until('the worker to exit', () => writer.exitCode !== null || undefined);
    assert.equal(writer.exitCode, 0);
    const loaded = Object.keys(require.cache).filter((k) => /[\\/]node_modules[\\/]pg(?:-[a-z-]+)?[\\/]|better[-_]sqlite3/.test(k));
    assert.deepEqual(loaded, [], 'the extension host loaded no database driver');
  });

  it('approves a gated action from the tree, then compensates the run: both land in PostgreSQL, as the writer role', async () => {
    const a = await api();
    const writer = runAgent('pg-pay', { items: 1, pay: true });
    await until('the writer to stop at the gate', () => writer.exitCode !== null || undefined, 120_000);
    assert.equal(writer.exitCode, 3);
    const run = await until('awaiting approval in the tree', async () => {
      const x = await runItem(a, 'pg-pay');
      return x && /^awaiting approval/.test(String(x.item.description)) ? x : undefined;
    });
    // The charge the approval lets run records into the provider state of the CLI the extension starts (the suite's).
    fs.mkdirSync(hostStateDir(), { recursive: true });
    const steps = await shown(a, run.node);
    const [gate] = await shown(a, steps[1]!.node);
    const approved = await vscode.commands.executeCommand<{ code: number; json: { status: string }; stdout: string; stderr: string }>(
      'logbook.approveAction',
      gate!.node,
      { note: 'approved on postgres' },
    );
    assert.equal(approved.code, 0, `${approved.stdout}\n${approved.stderr}`);
    assert.equal(approved.json.status, 'completed');
    assert.equal(
      psql(server!, "SELECT approval || ' ' || COALESCE(approval_note, '') FROM actions WHERE run_id = 'pg-pay' AND type = 'payment.charge'", DB),
      'approved approved on postgres',
    );
    assert.equal(psql(server!, "SELECT status FROM runs WHERE id = 'pg-pay'", DB), 'completed');
    await until('completed in the tree', async () => /^completed/.test(String((await runItem(a, 'pg-pay'))?.item.description)));

    const comp = await vscode.commands.executeCommand<{ code: number; json: { status: string }; stdout: string; stderr: string }>(
      'logbook.compensateRun',
      'pg-pay',
      { confirm: false },
    );
    assert.equal(comp.code, 0, `${comp.stdout}\n${comp.stderr}`);
    assert.equal(psql(server!, "SELECT status FROM runs WHERE id = 'pg-pay'", DB), 'compensated');
    assert.equal(psql(server!, "SELECT string_agg(compensation, ',' ORDER BY seq) FROM actions WHERE run_id = 'pg-pay'", DB), 'committed,committed');
    await until('compensated in the tree', async () => /^compensated/.test(String((await runItem(a, 'pg-pay'))?.item.description)));
  });

  it('resumes a killed run in the debugger from the tree: the adapter and its runner reach PostgreSQL with the stored password', async () => {
    const a = await api();
    unrelease();
    const writer = runAgent('pg-kill', { items: 3, holdAt: 1 });
    await until(
      'the second notice in flight',
      async () => {
        const r = await runItem(a, 'pg-kill');
        if (!r) return undefined;
        const s1 = (await shown(a, r.node))[1];
        if (!s1) return undefined;
        const [act] = await shown(a, s1.node);
        return act && (act.node as ActionNode).action.status === 'in-flight';
      },
      120_000,
    );
    writer.kill('SIGKILL');
    const run = await until(
      'the run interrupted with one action in doubt',
      async () => {
        const r = await runItem(a, 'pg-kill');
        return r && /^interrupted · 1 in doubt/.test(String(r.item.description)) ? r : undefined;
      },
      120_000,
    );
    assert.match(run.item.contextValue ?? '', /\bresumable\b/);

    // The resumed effect holds at the same gate, in the provider state of the runner the debugger starts (the suite's).
    release();
    try {
      const name = 'Logbook: resume pg-kill';
      const resumed = started(name);
      const ended = terminated(name);
      assert.equal(await vscode.commands.executeCommand('logbook.resumeRun', run.node), true);
      const session = await resumed;
      assert.equal(session.configuration.journal, url, 'the launch names the journal by its password-less URL');
      const stop = await until('the reconciliation stop', () => dap?.stops(session)[0]);
      await session.customRequest('continue', { threadId: stop.body.threadId });
      await ended;
    } finally {
      unrelease();
    }
    await until('completed in the tree', async () => /^completed · 2 attempts/.test(String((await runItem(a, 'pg-kill'))?.item.description)), 120_000);
    assert.equal(psql(server!, "SELECT status || ' ' || attempt FROM runs WHERE id = 'pg-kill'", DB), 'completed 2');
    assert.equal(psql(server!, "SELECT reconciliation FROM actions WHERE run_id = 'pg-kill' AND step_idx = 1", DB), 'verified-absent');
  });

  it('debugs a new run on the journal setting, reads where Kill Run left it from PostgreSQL, and takes a decision from the tree', async () => {
    const a = await api();
    unrelease();
    const name = 'pg debug kill';
    const begun = started(name);
    const ended = terminated(name);
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        program: agentFile(),
        runId: 'pg-dbg',
        input: { items: 2, holdAt: 1 },
      }),
    );
    const session = await begun;
    assert.equal(session.configuration.journal, url, 'the launch takes the journal setting');
    await until(
      'the second notice in flight',
      async () => {
        const r = await runItem(a, 'pg-dbg');
        const s1 = r && (await shown(a, r.node))[1];
        const [act] = s1 ? await shown(a, s1.node) : [];
        return act && (act.node as ActionNode).action.status === 'in-flight';
      },
      120_000,
    );
    assert.equal(await vscode.commands.executeCommand('logbook.killRun'), 'killed');
    await ended;
    const said = () =>
      (dap?.messages ?? [])
        .filter((x) => x.session.id === session.id && x.m.event === 'output')
        .map((x) => (typeof x.m.body?.output === 'string' ? x.m.body.output : ''))
        .join('');
    await until('the crash report', () => /Killed the run/.test(said()) || undefined);
    assert.match(said(), /Run pg-dbg died in step 2 "notify user 1"/);
    assert.match(said(), /In doubt: notice\.send notice:pg-dbg:user1 was started but not committed/);
    assert.equal(psql(server!, "SELECT status FROM actions WHERE run_id = 'pg-dbg' AND step_idx = 1", DB), 'started');

    // A person decides the in-doubt notice from the tree: the CLI resumes the run with that decision, in PostgreSQL.
    const decided = await vscode.commands.executeCommand<{ code: number; json: { status: string }; stdout: string; stderr: string }>(
      'logbook.decideHappened',
      { runId: 'pg-dbg', actionId: 'notice:pg-dbg:user1' },
      { confirm: false },
    );
    assert.equal(decided.code, 0, `${decided.stdout}\n${decided.stderr}`);
    assert.equal(decided.json.status, 'completed');
    assert.equal(
      psql(server!, "SELECT status || ' ' || decision || ' ' || executions FROM actions WHERE run_id = 'pg-dbg' AND step_idx = 1", DB),
      'committed happened 1',
    );
    await until('completed in the tree', async () => /^completed/.test(String((await runItem(a, 'pg-dbg'))?.item.description)));
  });
});
