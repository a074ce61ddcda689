// Scenes for the README screenshots, staged inside a real VS Code; scripts/screenshots.mjs photographs each one.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode } from '../../src/extension/tree/nodes';
import { DapLog, agentFile, api, cli, cliAsync, release, started, unrelease, until } from '../vscode/helpers';

const SCENES = process.env.LOGBOOK_SCENES_DIR ?? '';

/** Tells the screenshot script a scene is staged, and waits until it has taken the picture. */
async function scene(name: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 1500)); // let the workbench paint
  fs.writeFileSync(path.join(SCENES, `${name}.ready`), '');
  await until(`the screenshot of ${name}`, () => fs.existsSync(path.join(SCENES, `${name}.done`)), 60_000);
}

/** Starts a run that holds inside item `holdAt`'s effect, and SIGKILLs it there: a real crash, one action in doubt. */
async function crashedRun(runId: string, items: number, holdAt: number): Promise<void> {
  const a = await api();
  unrelease();
  const child = cliAsync(['run', agentFile(), '--run-id', runId, '--input', JSON.stringify({ items, holdAt })]);
  await until(`${runId} in flight`, async () => {
    const acts = await a.source.request('actions', { runId, stepIdx: holdAt, afterSeq: 0, limit: 1 });
    return acts.actions[0]?.status === 'in-flight';
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

describe('screenshots', () => {
  it('stages the sidebar, a stop at reconciliation and the timeline', async () => {
    const a = await api();
    await crashedRun('nightly-digest', 6, 3);
    await crashedRun('welcome-batch', 5, 2);
    release();
    assert.equal(cli(['resume', 'welcome-batch']).status, 0);
    await crashedRun('spring-issue', 8, 4);

    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    await vscode.commands.executeCommand('workbench.view.extension.agentLogbook');
    await vscode.commands.executeCommand('logbook.runs.focus');
    const doc = await vscode.workspace.openTextDocument(agentFile());
    const editor = await vscode.window.showTextDocument(doc);
    const stepLine = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('run.step(`notify user'));
    editor.revealRange(new vscode.Range(stepLine, 0, stepLine, 0), vscode.TextEditorRevealType.InCenter);
    await until('the crashed run in the tree', async () => (await a.model.locate('spring-issue', 4, 'notice:spring-issue:user4'))?.kind === 'action');
    await a.commands.reveal('welcome-batch', 2);
    await a.commands.reveal('spring-issue', 4, 'notice:spring-issue:user4');
    const node = (await a.model.locate('spring-issue', 4, 'notice:spring-issue:user4')) as ActionNode;
    await a.view.reveal(node, { select: true, focus: true, expand: true });
    await a.decorations.update();
    await scene('sidebar');

    // Resume the crashed run in the debugger: it stops before reconciling the in-doubt action.
    const dap = new DapLog();
    release();
    const name = 'Logbook: resume nightly-digest';
    const begun = started(name);
    await vscode.commands.executeCommand('logbook.resumeRun', 'nightly-digest');
    const session = await begun;
    const stop = await until('the reconciliation stop', () => dap.stops(session)[0]);
    await new Promise((r) => setTimeout(r, 1000));
    await scene('reconciliation');
    await session.customRequest('continue', { threadId: stop.body.threadId });
    await until('nightly-digest completed', async () => (await a.source.request('run', { runId: 'nightly-digest' }))?.status === 'completed');
    dap.dispose();

    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await vscode.commands.executeCommand('logbook.openTimeline', 'nightly-digest');
    await until('timeline data', () => a.timelines.data('nightly-digest'));
    await scene('timeline');
  });
});
