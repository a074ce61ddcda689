// The debugger in a real VS Code: F5 with no launch.json hits a breakpoint; kill → interrupted and in doubt → resume.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ActionNode, StepNode } from '../../src/extension/tree/nodes';
import { DapLog, agentFile, api, release, runItem, shown, started, terminated, unrelease, until } from './helpers';

describe('debugging agent scripts', () => {
  let dap: DapLog;
  before(() => (dap = new DapLog()));
  after(() => dap.dispose());
  afterEach(async () => {
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    // A failed test must not leave a paused session holding its run's lease for the next one.
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  });

  it('fills in a configuration for F5 on an open agent script when there is no launch.json', async () => {
    const a = await api();
    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    const folder = vscode.workspace.workspaceFolders?.[0];
    const cfg = a.debugConfig.resolveDebugConfiguration(folder, { type: '', request: '', name: '' });
    assert.ok(cfg);
    assert.equal(cfg.type, 'logbook');
    assert.equal(cfg.program, agentFile());
    assert.equal(cfg.runtimeExecutable, vscode.workspace.getConfiguration('logbook').get('runtimeExecutable'));
    assert.match(String(cfg.journal), /\.logbook\/journal\.db$/);
  });

  it('starts a run with startDebugging and stops at a breakpoint on a run.step line', async () => {
    const a = await api();
    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('run.step(`notify user'));
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(doc.uri, new vscode.Position(line, 0)))]);
    const name = 'F5 breakpoint';
    const begun = started(name);
    const ended = terminated(name);
    // No program: the provider takes the script in the active editor, as F5 does.
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        runId: 'dbg-bp',
        input: { items: 2 },
      }),
    );
    const session = await begun;
    const stop = await until('a stop', () => dap.stops(session)[0]);
    assert.equal(stop.body.reason, 'breakpoint');
    const trace = (await session.customRequest('stackTrace', { threadId: stop.body.threadId, startFrame: 0, levels: 5 })) as {
      stackFrames: Array<{ line: number; source?: { path?: string } }>;
    };
    assert.equal(trace.stackFrames[0]?.line, line + 1);
    // VS Code hands sources back as vscode-remote:// URIs under code-server: compare the path part.
    assert.ok(String(trace.stackFrames[0]?.source?.path).endsWith(agentFile()), String(trace.stackFrames[0]?.source?.path));
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    await session.customRequest('continue', { threadId: stop.body.threadId });
    await ended;
    await until('the run completed in the tree', async () => /^completed/.test(String((await runItem(a, 'dbg-bp'))?.item.description)));
  });

  it('kill → interrupted with one action in doubt → resume in the debugger stops at reconciliation → completed', async () => {
    const a = await api();
    unrelease();
    const name = 'kill me';
    const begun = started(name);
    const ended = terminated(name);
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        program: agentFile(),
        runId: 'dbg-kill',
        input: { items: 3, holdAt: 1 },
      }),
    );
    await begun;
    await until('item 1 in flight', async () => {
      const r = await runItem(a, 'dbg-kill');
      if (!r) return undefined;
      const steps = await shown(a, r.node);
      const s1 = steps[1];
      if (!s1) return undefined;
      const [act] = await shown(a, s1.node);
      return act && (act.node as ActionNode).action.status === 'in-flight';
    });
    assert.equal(await vscode.commands.executeCommand('logbook.killRun'), 'killed');
    await ended;
    const run = await until('the run interrupted', async () => {
      const r = await runItem(a, 'dbg-kill');
      return r && /^interrupted · 1 in doubt/.test(String(r.item.description)) ? r : undefined;
    });
    assert.match(run.item.contextValue ?? '', /\bresumable\b/);
    assert.match(run.item.contextValue ?? '', /\binDoubt\b/);
    const steps = await shown(a, run.node);
    assert.deepEqual(
      steps.map((s) => (s.node as StepNode).step.status),
      ['completed', 'interrupted'],
    );
    const [act] = await shown(a, steps[1]!.node);
    assert.equal((act!.node as ActionNode).action.status, 'in-doubt');
    assert.match(act!.item.contextValue ?? '', /\binDoubt\b/);
    assert.match(String(act!.item.description), /^in doubt/);

    // Resume from the tree: a debug session on the same run, stopping before it reconciles the in-doubt action.
    release();
    const resumeName = 'Logbook: resume dbg-kill';
    const resumed = started(resumeName);
    const resumeEnded = terminated(resumeName);
    assert.equal(await vscode.commands.executeCommand('logbook.resumeRun', run.node), true);
    const session = await resumed;
    const stop = await until('the reconciliation stop', () => dap.stops(session)[0]);
    assert.match(JSON.stringify([stop.body.description, stop.body.text]), /doubt|reconcil/i);
    await session.customRequest('continue', { threadId: stop.body.threadId });
    await resumeEnded;
    const done = await until('completed', async () => {
      const r = await runItem(a, 'dbg-kill');
      return r && /^completed · 2 attempts/.test(String(r.item.description)) ? r : undefined;
    });
    const [, s1] = await shown(a, done.node);
    const [a1] = await shown(a, s1!.node);
    assert.equal((a1!.node as ActionNode).action.reconciliation, 'verified-absent');

    // The timeline shows both attempts and where the first one crashed.
    await vscode.commands.executeCommand('logbook.openTimeline', 'dbg-kill');
    const t = await until('timeline data', () => a.timelines.data('dbg-kill'));
    assert.deepEqual(
      t.attempts.map((x) => x.attempt),
      [1, 2],
    );
    assert.ok(t.marks.some((m) => m.kind === 'crash' && m.attempt === 1));
    assert.ok(t.items.some((i) => i.status === 'in-doubt' && i.attempt === 1));
    unrelease();
  });
});
