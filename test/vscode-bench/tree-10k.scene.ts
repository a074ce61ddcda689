// Benchmark (prints, asserts only correctness): activation, and the runs tree on a 10,000-run journal in real VS Code.

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { RunNode } from '../../src/extension/tree/nodes';
import { EXT_ID, api } from '../vscode/helpers';

const ms = (t0: number): string => `${(performance.now() - t0).toFixed(1)} ms`;

describe('benchmark: tree on a large journal', () => {
  it('measures activation and the time to show 10,000 runs and to open a run of 100,000 steps', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID)!;
    const a = await api();
    console.log(
      `    [measure] activate(): ${a.activatedInMs.toFixed(1)} ms (extension host, Node ${process.versions.node}); activated at startup: ${ext.isActive}`,
    );
    let t0 = performance.now();
    const roots = await a.provider.getChildren();
    const items = roots.map((n) => a.provider.getTreeItem(n));
    console.log(`    [measure] tree root for ${a.model.totalRuns} runs (cold reader, first page of ${items.length - 1} + "load more"): ${ms(t0)}`);
    assert.equal(a.model.totalRuns, 10_001);
    t0 = performance.now();
    await a.provider.getChildren();
    console.log(`    [measure] tree root again (warm): ${ms(t0)}`);
    await vscode.commands.executeCommand('workbench.view.extension.agentLogbook');
    const huge = roots.find((n) => n.kind === 'run' && n.run.id === 'huge') as RunNode;
    t0 = performance.now();
    // Through the extension's own reveal, which retries while the just-opened view has not yet rendered the node.
    const revealed = await a.commands.reveal(huge.run.id);
    console.log(`    [measure] view shown and first run revealed: ${ms(t0)}`);
    assert.equal(revealed?.kind, 'run');
    t0 = performance.now();
    const steps = await a.provider.getChildren(huge);
    console.log(`    [measure] open a run of ${huge.run.stepCount} steps (first page ${steps.length - 1} + "load more"): ${ms(t0)}`);
    assert.equal(steps.length, 101);
    t0 = performance.now();
    const node = await a.model.locate('huge', 99_990, 'notice:huge:user99990');
    console.log(`    [measure] page to step 99,991 of it and find its action (1,000 steps a request): ${ms(t0)}`);
    assert.equal(node?.kind, 'action');
  });
});
