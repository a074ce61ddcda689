// Launches that cannot start: each fails with a clear message in the session and leaves nothing running.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAP_FIXTURES, EMAIL, COUNTER, Session, lineOf, open, sessionsPerTest } from './harness';

describe('dap: launch failures and process control', function () {
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
  });

  it('a bad attribute names the attribute and what it expected, before any runner starts', async () => {
    const msg = await s.launchFails({ program: EMAIL, stopOnEntry: 'yes' });
    assert.match(
      msg,
      /The launch configuration is invalid: attribute "stopOnEntry": Invalid input: expected boolean, received string\. Fix "stopOnEntry" in launch\.json: Stop before the first step/,
    );
    assert.deepEqual(s.runnerPids, []);
  });

  it('a missing program attribute, conflicting attributes and a bad crashAt spec are refused', async () => {
    assert.match(await s.launchFails({}), /attribute "program": it is required/);
    const t = await open();
    try {
      assert.match(await t.launchFails({ program: EMAIL, resume: 'r1', input: { recipients: 1 } }), /"input" is set for a resume/);
    } finally {
      await t.close();
    }
    const u = await open();
    try {
      assert.match(
        await u.launchFails({ program: EMAIL, crashAt: 'email.send#0@after-start' }),
        /attribute "crashAt": --crash-at "email.send#0@after-start": the occurrence must be 1 or more/,
      );
    } finally {
      await u.close();
    }
    const v = await open();
    try {
      const msg = await v.launchFails({ program: EMAIL, crashAt: 'emial.send@after-start' });
      assert.match(
        msg,
        /attribute "crashAt": emial\.send#1@after-start: the script defines no action type "emial\.send", so this crash point could never be reached\. Nothing was run\./,
      );
      assert.match(msg, /Use one of the script.s action types: "email\.send"/);
    } finally {
      await v.close();
    }
  });

  it('a program that does not exist', async () => {
    const missing = path.join(DAP_FIXTURES, 'no-such-agent.ts');
    assert.match(await s.launchFails({ program: missing }), new RegExp(`The program ${missing.replace(/[.]/g, '\\.')} does not exist \\(attribute "program"`));
  });

  it('a script that throws while loading', async () => {
    const msg = await s.launchFails({ program: path.join(DAP_FIXTURES, 'throws-at-load.ts') });
    assert.match(msg, /throws-at-load\.ts threw while loading: the configuration file config\/agent\.json is missing\. Fix the error/);
    assert.equal(s.runnerPids.length, 1);
  });

  it('a runner whose Node cannot load better-sqlite3 (another ABI)', async () => {
    const msg = await s.launchFails({ program: EMAIL, runtimeArgs: ['--require', path.join(DAP_FIXTURES, 'wrong-abi.cjs')] });
    assert.match(msg, /The runner's Node \(v[\d.]+, ABI \d+, .*\) cannot load better-sqlite3: .*NODE_MODULE_VERSION 999/);
    assert.match(msg, /Set "runtimeExecutable" in the launch configuration to the Node that installed the project's dependencies/);
    assert.equal(s.runnerPids.length, 1);
  });

  it('a runtimeExecutable that does not exist', async () => {
    const msg = await s.launchFails({ program: EMAIL, runtimeExecutable: '/nonexistent/node' });
    assert.match(
      msg,
      /The runner could not be started with runtimeExecutable "\/nonexistent\/node": spawn \/nonexistent\/node ENOENT\. Set "runtimeExecutable" to a Node executable/,
    );
  });

  it('an input the agent refuses, and a resume of a completed run', async () => {
    assert.match(await s.launchFails({ program: EMAIL, input: { recipients: -1 } }), /The input for agent email-campaign is invalid: recipients: /);
    const t = await open();
    try {
      await t.launch({ program: EMAIL, input: { recipients: 1 }, runId: 'done-1' });
      assert.equal(await t.exitCode(), 0);
      const u = new Session(t.dir);
      await u.start();
      try {
        assert.match(await u.launchFails({ program: EMAIL, resume: 'done-1' }), /Run done-1 already completed; there is nothing to resume/);
      } finally {
        await u.close();
      }
    } finally {
      await t.close();
    }
  });

  it("relays the run's stdout and stderr to the Debug Console with their categories", async () => {
    await s.launch({ program: COUNTER, input: { steps: 3 } });
    assert.equal(await s.exitCode(), 0);
    assert.match(s.text('stdout'), /counted to 6\n/);
    assert.match(s.text('stderr'), /counter: no errors\n/);
    assert.doesNotMatch(s.text('stdout'), /counter: no errors/);
  });

  it('the adapter bundle never loads better-sqlite3 (only the runner does)', () => {
    const bundle = fs.readFileSync(path.join(__dirname, '..', '..', 'dist', 'debugAdapter.js'), 'utf8');
    assert.doesNotMatch(bundle, /require\(["']better-sqlite3["']\)/);
    assert.match(fs.readFileSync(path.join(__dirname, '..', '..', 'dist', 'runner.js'), 'utf8'), /require\("better-sqlite3"\)/);
  });

  it('pause stops a running run at its next boundary', async () => {
    await s.launch({ program: COUNTER, input: { steps: 100000 }, runId: 'pause-1' });
    await new Promise((r) => setTimeout(r, 300));
    await s.dc.pauseRequest({ threadId: s.threadId() });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'pause');
    assert.match(stop.description, /^paused: step "count \d+" (is about to run|checkpointed)$/);
    const exited = s.exitCode();
    await s.dc.terminateRequest({});
    assert.equal(await exited, 1, 'interrupted is not completed');
  });

  it('a line or function breakpoint set while the run goes on with nothing armed stops it where it applies', async () => {
    // The runner decides a boundary nothing armed can stop at without building it: arming mid-run must end that at once.
    await s.launch({ program: COUNTER, input: { steps: 100000 }, runId: 'arm-1' }, { lines: [], filters: [] });
    await new Promise((r) => setTimeout(r, 300));
    await s.dc.setBreakpointsRequest({ source: { path: COUNTER }, breakpoints: [{ line: lineOf(COUNTER, 'run.step(') }] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    await s.dc.setBreakpointsRequest({ source: { path: COUNTER }, breakpoints: [] });
    await s.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'count 9*' }] });
    await s.dc.continueRequest({ threadId: s.threadId() });
    const fn = await s.stopped();
    assert.equal(fn.reason, 'function breakpoint');
    assert.match(fn.description, /count 9/);
    const exited = s.exitCode();
    await s.dc.terminateRequest({});
    assert.equal(await exited, 1, 'interrupted is not completed');
  });

  it('serves DAP on a TCP port with --server', async () => {
    const { spawn } = await import('node:child_process');
    const { DebugClient } = await import('@vscode/debugadapter-testsupport');
    const net = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const server = spawn(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'debugAdapter.js'), `--server=${port}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      await new Promise<void>((resolve) => server.stderr.once('data', () => resolve()));
      // The adapter announces the port just before it listens: wait until a connection is accepted.
      for (let i = 0; ; i++) {
        const ok = await new Promise<boolean>((resolve) => {
          const sock = net.connect(port, '127.0.0.1', () => {
            sock.destroy();
            resolve(true);
          });
          sock.once('error', () => resolve(false));
        });
        if (ok) break;
        if (i > 100) assert.fail(`nothing listens on port ${port}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const dc = new DebugClient('node', '', 'logbook');
      await dc.start(port);
      const init = await dc.initializeRequest();
      assert.equal(init.body?.supportsRestartFrame, true);
      assert.deepEqual(
        init.body?.exceptionBreakpointFilters?.map((f) => f.filter),
        ['actionFailed', 'inDoubt', 'nonIdempotent', 'approval', 'compensation', 'sleep', 'eventWait'],
      );
      await dc.stop();
    } finally {
      server.kill();
    }
  });
});
