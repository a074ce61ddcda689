// Smoke test of the packaged extension: installed from the VSIX, its CLI, reader and debugger run on Node 20, 22 and 24.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXT_ID, agentFile, api, dbFile, runItem, started, stateDir, terminated, until, workspace } from '../vscode/helpers';

const NODES: Record<string, string> = JSON.parse(process.env.LOGBOOK_VSIX_NODES ?? '{}');

describe('the installed VSIX', () => {
  it('is the installed copy, not the source checkout', () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext);
    assert.equal(ext.extensionPath, process.env.LOGBOOK_VSIX_DIR);
    assert.notEqual(ext.extensionPath, process.env.LOGBOOK_REPO_ROOT);
  });

  it('runs its CLI on Node 20, 22 and 24, each loading its own shipped SQLite build', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID)!;
    const cli = path.join(ext.extensionPath, 'dist', 'cli.js');
    assert.deepEqual(Object.keys(NODES).sort(), ['20', '22', '24']);
    for (const [major, node] of Object.entries(NODES)) {
      const r = spawnSync(node, [cli, 'run', agentFile(), '--run-id', `vsix-node${major}`, '--input', '{"items":2}', '--journal', dbFile()], {
        cwd: workspace(),
        env: { ...process.env, LOGBOOK_STATE_DIR: stateDir() },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `Node ${major}: ${r.stdout}${r.stderr}`);
    }
    const a = await api();
    for (const major of Object.keys(NODES)) {
      await until(`run vsix-node${major} in the tree`, async () => /^completed/.test(String((await runItem(a, `vsix-node${major}`))?.item.description)));
    }
  });

  it('debugs an agent script with the packaged adapter', async () => {
    const a = await api();
    const name = 'vsix debug';
    const begun = started(name);
    const ended = terminated(name);
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        program: agentFile(),
        runId: 'vsix-dbg',
        input: { items: 1 },
      }),
    );
    await begun;
    await ended;
    await until('the debugged run completed', async () => /^completed/.test(String((await runItem(a, 'vsix-dbg'))?.item.description)));
  });
});
