// The OpenAI Agents SDK example as the sidebar gets it, through the real reader child process: the run, its model
// calls, and the refund it waits on for approval.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ReaderClient } from '../../src/extension/readerClient';
import { TreeModel } from '../../src/extension/tree/treeModel';
import type { ActionNode, RunNode, StepNode } from '../../src/extension/tree/nodes';
import { EXAMPLES, ROOT, cli, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'openai-agents-support.ts');
const READER = path.join(ROOT, 'dist', 'readerMain.js');

describe('openai-agents: the run and its interrupt in the sidebar', function () {
  this.timeout(120_000);
  let client: ReaderClient;

  before(async () => {
    const dir = tmpDir('logbook-agents-side-');
    const r = cli(dir, ['run', SCRIPT, '--run-id', 'big', '--input', '{"orderId":"A-1002"}'], { OPENAI_API_KEY: '' });
    assert.equal(r.status, 3, `awaiting approval exits 3: ${r.stderr}`);
    client = new ReaderClient({ node: process.execPath, script: READER, cwd: ROOT, log: () => undefined });
    await client.open(path.join(dir, 'journal.db'));
  });
  after(() => client.dispose());

  it('shows the run awaiting approval: the paused segment with its model calls, then the gated refund pending', async () => {
    const model = new TreeModel(client);
    const [run] = (await model.children(undefined)) as RunNode[];
    assert.equal(run?.run.id, 'big');
    assert.equal(run.run.status, 'awaiting-approval');
    assert.equal(run.run.awaitingApproval, 1);
    const steps = (await model.children(run)) as StepNode[];
    assert.deepEqual(
      steps.map((s) => s.step.name),
      ['resolve', 'resolve: approval'],
    );
    const actions = (await model.children(steps[0])) as ActionNode[];
    const calls = actions.filter((a) => a.action.type === 'model.generate');
    assert.equal(calls.length, 2, actions.map((a) => a.action.id).join(', '));
    assert.equal(calls[0]?.action.ai?.kind, 'model', 'a model call of the Agents SDK is shown as one');
    assert.ok(!actions.some((a) => a.action.type === 'tool.refund'), 'the refund has not run');
    const [gate] = (await model.children(steps[1])) as ActionNode[];
    assert.equal(gate?.action.type, 'agents.approval');
    assert.equal(gate.action.id, 'approval:refund:big:A-1002');
    assert.equal(gate.action.journalStatus, 'awaiting-approval');
    assert.equal(gate.action.approval, 'pending');
  });
});
