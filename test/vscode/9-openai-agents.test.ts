// An OpenAI Agents SDK run (examples/openai-agents-support.ts, a refund over 100) in the runs tree: the SDK's paused run
// waits at its gate with the gated tool, and approving it from the tree resumes the run from the kept state to its end.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode } from '../../src/extension/tree/nodes';
import { ROOT, api, cli, runItem, shown, stateDir, text, until } from './helpers';

const SUPPORT = path.join(ROOT, 'examples', 'openai-agents-support.ts');

/** This run's refunds in the shop's record (the workspace is shared: other tests' runs refund too). */
function refunds(): string[] {
  const f = path.join(stateDir(), 'shop.json');
  const all = fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as { refunds: Array<{ reference: string }> }).refunds.map((r) => r.reference) : [];
  return all.filter((r) => r.includes(':oai-tree:'));
}

describe('an OpenAI Agents SDK run in the runs tree', function () {
  // Two CLI runs of an SDK agent on a shared 2-core machine.
  this.timeout(180_000);

  it('shows the paused run awaiting approval with its gated tool, and the Approve command finishes it', async () => {
    // Offline whatever the host's environment holds: the example's scripted model, never a paid one.
    delete process.env.OPENAI_API_KEY;
    const a = await api();
    const r = cli(['run', SUPPORT, '--run-id', 'oai-tree', '--input', '{"orderId":"A-1002"}']);
    assert.equal(r.status, 3, `${r.stdout}\n${r.stderr}`);
    const run = await until('the Agents SDK run awaiting approval', async () => {
      const x = await runItem(a, 'oai-tree');
      return x && /^awaiting approval/.test(String(x.item.description)) ? x : undefined;
    });
    assert.equal(text(run.item.label), 'openai-agents-support');
    const steps = await shown(a, run.node);
    assert.deepEqual(
      steps.map((s) => text(s.item.label)),
      ['1. resolve', '2. resolve: approval'],
    );
    // The segment that paused: its model calls and the lookup; the refund has not run.
    const segment = (await shown(a, steps[0]!.node)).map((x) => (x.node as ActionNode).action.type);
    assert.ok(segment.includes('model.generate') && segment.includes('tool.lookupOrder'), segment.join(', '));
    assert.ok(!segment.includes('tool.refund'), segment.join(', '));
    const [gate] = await shown(a, steps[1]!.node);
    const g = (gate!.node as ActionNode).action;
    assert.equal(g.type, 'agents.approval');
    assert.equal(g.id, 'approval:refund:oai-tree:A-1002');
    assert.match(gate!.item.contextValue ?? '', /\bawaitingApproval\b/);
    assert.match(g.args, /"tool":"refund"/, 'the gate names the gated tool and its input');
    assert.deepEqual(refunds(), []);

    const approved = await vscode.commands.executeCommand<{
      code: number;
      json: { status: string; output: { resolved: string } };
      stdout: string;
      stderr: string;
    }>('logbook.approveAction', gate!.node, { note: 'checked the order' });
    assert.equal(approved.code, 0, `${approved.stdout}\n${approved.stderr}`);
    assert.equal(approved.json.status, 'completed');
    assert.equal(approved.json.output.resolved, 'Resolved A-1002: refunded and emailed.');
    assert.deepEqual(refunds(), ['refund:oai-tree:A-1002'], 'refunded once, after the approval');
    await until('completed', async () => /^completed/.test(String((await runItem(a, 'oai-tree'))?.item.description)));
    const after = await shown(a, run.node);
    assert.deepEqual(
      after.map((s) => text(s.item.label)),
      ['1. resolve', '2. resolve: approval', '3. resolve: resume 1', '4. reply'],
    );
  });
});
