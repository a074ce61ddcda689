// Activation and the manifest, checked in a real extension host: every contributed command is registered, and back.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXT_ID, api } from './helpers';

describe('activation', () => {
  it('activates on use and registers exactly the commands package.json contributes', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext, 'the extension is loaded');
    const a = await api();
    console.log(`    [measure] activate() took ${a.activatedInMs.toFixed(1)} ms in this extension host`);
    const pkg = JSON.parse(fs.readFileSync(path.join(ext.extensionPath, 'package.json'), 'utf8'));
    const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
    const all = await vscode.commands.getCommands(true);
    for (const id of contributed) assert.ok(all.includes(id), `${id} is contributed but not registered`);
    // VS Code adds <view>.focus and friends for the view itself; anything else under logbook. must be contributed.
    const ours = all.filter((c) => c.startsWith('logbook.') && !c.startsWith('logbook.runs.'));
    assert.deepEqual(ours.sort(), [...contributed].sort());
  });

  it('never loads better-sqlite3 or pg in the extension host: a reader process serves the tree', async () => {
    const a = await api();
    await a.provider.getChildren();
    assert.ok(a.readerPid(), 'the reader process runs');
    assert.notEqual(a.readerPid(), process.pid);
    const loaded = Object.keys(require.cache).filter((k) => /better[-_]sqlite3|[\\/]node_modules[\\/]pg(?:-[a-z-]+)?[\\/]/.test(k));
    assert.deepEqual(loaded, []);
  });
});
