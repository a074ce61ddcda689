// Sleep and cancel in a real VS Code: a sleeping run and its sleep node show the wake time; Cancel Run… from the Runs
// view cancels a run held by another process and one a worker released; from the debug toolbar, the session's run.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunNode } from '../../src/extension/tree/nodes';
import { CLI, NODE, api, cli, cliAsync, dbFile, runItem, shown, started, stateDir, terminated, until, workspace } from './helpers';

const SLEEPER = `// A step, a durable sleep of input.sleep, and a step after it that records when it ran.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAgent } from 'agent-logbook';

export default defineAgent({
  name: 'ui-sleeper',
  input: z.object({ sleep: z.string() }),
  async run(run, input) {
    await run.step('before', () => 'ready');
    await run.sleep('nap', input.sleep);
    return run.step('after', () => {
      fs.appendFileSync(path.join(process.env.LOGBOOK_STATE_DIR ?? '.', 'ui-sleeper-after.log'), 'ran\\n');
      return 'woke';
    });
  },
});
`;

/** The sleeper in a folder of its own, so the worker loads it alone. */
function sleeperFile(): string {
  const dir = path.join(workspace(), 'sleepers');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'sleeper.ts');
  fs.writeFileSync(file, SLEEPER);
  return file;
}

const afterRan = (): boolean => fs.existsSync(path.join(stateDir(), 'ui-sleeper-after.log'));

describe('sleep and cancel in the Runs view', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGKILL');
  });
  afterEach(async () => {
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  });

  it('a run sleeping in its process and one a worker released show their wake time, and the sleep is a node with it', async () => {
    const a = await api();
    const file = sleeperFile();
    const fg = cliAsync(['run', file, '--run-id', 'ui-sleep-fg', '--input', '{"sleep":"1h"}']);
    children.push(fg);
    assert.equal(cli(['run', '--detach', file, '--run-id', 'ui-sleep-rel', '--input', '{"sleep":"2h"}']).status, 0);
    const worker = spawn(NODE, [CLI, 'worker', '--scripts', path.dirname(file), '--agents', 'ui-sleeper', '--poll-ms', '100', '--journal', dbFile()], {
      cwd: workspace(),
      env: { ...process.env, NO_COLOR: '1', LOGBOOK_STATE_DIR: stateDir(), LOGBOOK_SLEEP_RELEASE_MS: '1000' },
      stdio: 'ignore',
    });
    children.push(worker);
    const rel = await until(
      'the released run asleep',
      async () => {
        const x = await runItem(a, 'ui-sleep-rel');
        return x && /^sleeping until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d[^)]*\)/.test(String(x.item.description)) ? x : undefined;
      },
      60_000,
    );
    assert.match(rel.item.contextValue ?? '', /\bcancellable\b/);
    assert.doesNotMatch(rel.item.contextValue ?? '', /\blive\b/, 'no process holds a released sleeping run');
    const fgItem = await until('the foreground run waiting in its sleep', async () => {
      const x = await runItem(a, 'ui-sleep-fg');
      return x && /^running · sleeping until .* UTC \(in (59|60) min\)/.test(String(x.item.description)) ? x : undefined;
    });
    assert.match(fgItem.item.contextValue ?? '', /\blive\b.*\bcancellable\b|\bcancellable\b.*\blive\b/);
    const steps = await shown(a, fgItem.node);
    const nap = steps.find((s) => s.node.kind === 'step' && s.node.step.name === 'nap');
    assert.ok(nap, steps.map((s) => (s.node.kind === 'step' ? s.node.step.name : s.node.kind)).join(', '));
    assert.match(String(nap.item.description), /^sleep 60 min · until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (59|60) min\)$/);
    assert.equal((nap.item.iconPath as vscode.ThemeIcon).id, 'watch');
    const before = steps.find((s) => s.node.kind === 'step' && s.node.step.name === 'before');
    assert.doesNotMatch(String(before?.item.description), /sleep/, 'a step that is not a sleep has no wake time');
    worker.kill('SIGTERM');
  });

  it('Cancel Run… from the Runs view cancels a run held by another process, and one released asleep, with the reason journaled', async () => {
    const a = await api();
    const fg = (await runItem(a, 'ui-sleep-fg'))?.node as RunNode | undefined;
    assert.ok(fg, 'the foreground run of the previous test');
    const r = await vscode.commands.executeCommand<{ code: number; json: { status: string; how: string; reason: string }; stdout: string; stderr: string }>(
      'logbook.cancelRun',
      fg,
      { compensate: false, reason: 'cancelled from the sidebar' },
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.deepEqual([r.json.status, r.json.how, r.json.reason], ['cancelled', 'at-boundary', 'cancelled from the sidebar']);
    await until('the tree says cancelled', async () => /^cancelled/.test(String((await runItem(a, 'ui-sleep-fg'))?.item.description)));
    const after = await runItem(a, 'ui-sleep-fg');
    assert.doesNotMatch(after?.item.contextValue ?? '', /\bcancellable\b/, 'a cancelled run offers no second cancel');
    const shown1 = JSON.parse(cli(['show', 'ui-sleep-fg', '--json']).stdout) as { run: { status: string; cancel: { reason: string } } };
    assert.equal(shown1.run.cancel.reason, 'cancelled from the sidebar');

    const rel = await vscode.commands.executeCommand<{ code: number; json: { status: string; how: string } }>('logbook.cancelRun', 'ui-sleep-rel', {
      compensate: true,
      reason: 'no need',
    });
    assert.equal(rel.code, 0);
    assert.deepEqual([rel.json.status, rel.json.how], ['compensated', 'at-once']);
    await until('the tree says compensated', async () => /^compensated/.test(String((await runItem(a, 'ui-sleep-rel'))?.item.description)));
    assert.equal(afterRan(), false, 'neither run ran the step after its sleep');
  });

  it('Cancel Run on the debug toolbar cancels the session’s run: it stops at its next boundary and the session ends', async () => {
    const a = await api();
    const file = sleeperFile();
    const name = 'sleep under the debugger';
    const begun = started(name);
    const ended = terminated(name);
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        program: file,
        runId: 'ui-sleep-dbg',
        input: { sleep: '1h' },
      }),
    );
    await begun;
    await until('the debugged run waiting in its sleep', async () => /sleeping until/.test(String((await runItem(a, 'ui-sleep-dbg'))?.item.description)));
    // As the toolbar calls it: no tree item, the active Logbook session's run.
    const r = await vscode.commands.executeCommand<{ message: string }>('logbook.cancelRun', undefined, { compensate: false, reason: 'from the toolbar' });
    assert.match(r.message, /stops at its next boundary, cancelled/);
    await ended;
    await until('the tree says cancelled', async () => /^cancelled/.test(String((await runItem(a, 'ui-sleep-dbg'))?.item.description)));
    assert.equal(afterRan(), false);
  });
});
