// The editor side, in a real extension host: menus under ids VS Code knows, agent scripts recognised (context key,
// CodeLens, dynamic configuration), and the logbook.envFile / logbook.env settings reaching what the extension starts.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXT_ID, agentFile, api, cliAsync, release, stateDir, unrelease, until, workspace } from './helpers';

/** Every menu id VS Code's workbench accepts from extensions, read from its own bundle: `{key:"debug/toolBar",id:…}`. */
function knownMenuIds(): Set<string> {
  const candidates = ['out/vs/workbench/workbench.desktop.main.js', 'out/vs/workbench/workbench.web.main.js', 'out/vs/code/browser/workbench/workbench.js'];
  for (const rel of candidates) {
    const file = path.join(vscode.env.appRoot, rel);
    if (!fs.existsSync(file)) continue;
    const ids = new Set([...fs.readFileSync(file, 'utf8').matchAll(/\{key:"([\w/.-]+)",id:[\w$]+\.[\w$]+/g)].map((m) => m[1]!));
    if (ids.has('editor/title')) return ids;
  }
  throw new Error(`found no workbench bundle listing menu ids under ${vscode.env.appRoot}`);
}

async function withSettings(values: Record<string, unknown>, fn: () => Promise<void> | void): Promise<void> {
  const c = vscode.workspace.getConfiguration('logbook');
  for (const [k, v] of Object.entries(values)) await c.update(k, v, vscode.ConfigurationTarget.Workspace);
  try {
    await fn();
  } finally {
    for (const k of Object.keys(values)) await vscode.workspace.getConfiguration('logbook').update(k, undefined, vscode.ConfigurationTarget.Workspace);
  }
}

describe('the editor side', () => {
  it('contributes menus only under ids VS Code knows (debug/toolBar, editor/title/run, …)', () => {
    const known = knownMenuIds();
    assert.ok(known.has('debug/toolBar') && !known.has('debug/toolbar'), "the bundle lists VS Code's spelling");
    const pkg = JSON.parse(fs.readFileSync(path.join(vscode.extensions.getExtension(EXT_ID)!.extensionPath, 'package.json'), 'utf8'));
    const ours = Object.keys(pkg.contributes.menus as object);
    assert.deepEqual(
      ours.filter((id) => !known.has(id)),
      [],
    );
    assert.ok(ours.includes('debug/toolBar') && ours.includes('editor/title/run'));
  });

  it('knows an agent script from other TypeScript: context key, CodeLens on defineAgent, dynamic configuration', async () => {
    const a = await api();
    const other = path.join(workspace(), 'helper.ts');
    fs.writeFileSync(other, 'export const add = (x: number, y: number): number => x + y;\n');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(other));
    await until('not an agent', () => !a.agentFiles.activeIsAgent);
    assert.deepEqual(await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', vscode.Uri.file(other)), []);
    const doc = await vscode.workspace.openTextDocument(agentFile());
    await vscode.window.showTextDocument(doc);
    await until('an agent', () => a.agentFiles.activeIsAgent);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('defineAgent('));
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.command]),
      [
        [line, 'logbook.runAgent'],
        [line, 'logbook.debugAgent'],
        [line, 'logbook.rehearseAgent'],
      ],
    );
    assert.deepEqual(a.debugConfig.provideDynamic(), [{ type: 'logbook', request: 'launch', name: 'Logbook: agent.ts', program: agentFile() }]);
  });

  it('merges logbook.envFile, logbook.env, a launch envFile and env in that order, and refuses a missing file', async () => {
    const a = await api();
    fs.writeFileSync(path.join(workspace(), 'settings.env'), 'DEMO_API_KEY=sk-settings-1234\nDEMO_REGION=eu\nDEMO_TIER=free\n');
    fs.writeFileSync(path.join(workspace(), 'launch.env'), 'DEMO_TIER=pro\nDEMO_EXTRA=1\n');
    await withSettings({ envFile: 'settings.env', env: { DEMO_REGION: 'us' } }, () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      const base = a.debugConfig.resolveDebugConfiguration(folder, {
        type: 'logbook',
        request: 'launch',
        name: 'env',
        program: agentFile(),
        envFile: 'launch.env',
        env: { DEMO_EXTRA: '2' },
      });
      const r = a.debugConfig.resolveDebugConfigurationWithSubstitutedVariables(folder, base!);
      assert.deepEqual(r?.env, { DEMO_API_KEY: 'sk-settings-1234', DEMO_REGION: 'us', DEMO_TIER: 'pro', DEMO_EXTRA: '2' });
      assert.equal(r?.envFile, undefined);
      const missing = a.debugConfig.resolveDebugConfigurationWithSubstitutedVariables(folder, { ...base!, envFile: 'nope.env' });
      assert.equal(missing, undefined);
    });
  });

  it("gives the CLI the settings' environment: a resume through the CLI runs its effect with logbook.env", async () => {
    const a = await api();
    // The fixture's effect waits for <LOGBOOK_STATE_DIR>/release and writes its ledger there: point it elsewhere.
    const alt = path.join(workspace(), 'alt-state');
    fs.mkdirSync(alt, { recursive: true });
    unrelease();
    const child = cliAsync(['run', agentFile(), '--run-id', 'env-cli', '--input', JSON.stringify({ items: 2, holdAt: 1 })]);
    await until(
      'env-cli in flight',
      async () => (await a.source.request('actions', { runId: 'env-cli', stepIdx: 1, afterSeq: 0, limit: 1 })).actions[0]?.status === 'in-flight',
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    fs.writeFileSync(path.join(alt, 'release'), '');
    await withSettings({ env: { LOGBOOK_STATE_DIR: alt } }, async () => {
      await a.commands.resume('env-cli', { via: 'cli' });
      await until('env-cli completed', async () => (await a.source.request('run', { runId: 'env-cli' }))?.status === 'completed');
    });
    const ledger = JSON.parse(fs.readFileSync(path.join(alt, 'desk-ledger.json'), 'utf8')) as string[];
    assert.ok(ledger.includes('notice:env-cli:user1'), `the effect ran without logbook.env: ${JSON.stringify(ledger)}`);
    assert.ok(
      !fs.existsSync(path.join(stateDir(), 'desk-ledger.json')) ||
        !(JSON.parse(fs.readFileSync(path.join(stateDir(), 'desk-ledger.json'), 'utf8')) as string[]).includes('notice:env-cli:user1'),
    );
    release();
  });
});
