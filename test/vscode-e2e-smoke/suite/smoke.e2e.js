// Smoke tests proving the harness: command registration and execution, and a debug session with an inline adapter.
const assert = require('assert');
const vscode = require('vscode');

const EXTENSION_ID = 'agent-logbook.vscode-e2e-smoke';

/** Resolves with the first event `event` fires that satisfies `predicate`, or rejects after `ms`. */
function next(event, predicate, ms = 10000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`event not seen within ${ms} ms`));
    }, ms);
    const sub = event((e) => {
      if (!predicate(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}

describe('vscode e2e smoke', () => {
  before(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is loaded as development extension`);
    await ext.activate();
  });

  it('runs in a real extension host with the workspace open', () => {
    assert.ok(vscode.version, 'vscode.version');
    assert.strictEqual(vscode.workspace.workspaceFolders?.length, 1);
    console.log(`vscode ${vscode.version}, node ${process.version}, folder ${vscode.workspace.workspaceFolders[0].uri.fsPath}`);
  });

  it('registers and executes smoke.hello', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('smoke.hello'), 'smoke.hello is registered');
    assert.strictEqual(await vscode.commands.executeCommand('smoke.hello', 'e2e'), 'hello e2e');
  });

  it('starts and ends a debug session with the inline adapter', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const started = next(vscode.debug.onDidStartDebugSession, (s) => s.type === 'smoke-debug');
    const terminated = next(vscode.debug.onDidTerminateDebugSession, (s) => s.type === 'smoke-debug');
    const ok = await vscode.debug.startDebugging(folder, { type: 'smoke-debug', request: 'launch', name: 'Smoke' });
    assert.strictEqual(ok, true, 'startDebugging resolved true');
    assert.strictEqual((await started).name, 'Smoke');
    await terminated;
  });

  it('fails on purpose when SMOKE_FAIL is set', function () {
    if (!process.env.SMOKE_FAIL) this.skip();
    assert.strictEqual(1 + 1, 3, 'deliberate failure (SMOKE_FAIL)');
  });
});
