// The support agent's model and tool calls as the sidebar gets them: the reader process's DTOs, the tree's rows, the
// whole record on demand, and the timeline's bars — from a real journal, through the real reader child process.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ReaderClient } from '../../src/extension/readerClient';
import { TreeModel } from '../../src/extension/tree/treeModel';
import type { ActionNode, DetailNode, StepNode } from '../../src/extension/tree/nodes';
import { EXAMPLES, ROOT, cli, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'support-agent.ts');
const READER = path.join(ROOT, 'dist', 'readerMain.js');

describe('ai: model and tool calls in the sidebar and the timeline', function () {
  this.timeout(120_000);
  let client: ReaderClient;

  before(async () => {
    const dir = tmpDir('logbook-ai-side-');
    const r = cli(dir, ['run', SCRIPT, '--run-id', 'side']);
    assert.equal(r.status, 0, r.stderr);
    client = new ReaderClient({ node: process.execPath, script: READER, cwd: ROOT, log: () => undefined });
    await client.open(path.join(dir, 'journal.db'));
  });
  after(() => client.dispose());

  it('an action page carries each model call summarised: model id, tokens, last messages, answer and tool calls', async () => {
    const page = await client.request('actions', { runId: 'side', stepIdx: 0, afterSeq: 0, limit: 100 });
    const first = page.actions.find((a) => a.id === 'model:1.1');
    assert.ok(first?.ai, JSON.stringify(page.actions.map((a) => a.id)));
    assert.equal(first.ai.kind, 'model');
    assert.match(first.ai.name, /scripted\/support-scripted-1/);
    assert.ok(first.ai.tokens && first.ai.tokens.input > 0 && first.ai.tokens.output > 0, JSON.stringify(first.ai.tokens));
    assert.match(first.ai.lastMessages.join('\n'), /user: My kettle from order A-1001 arrived broken/);
    assert.deepEqual(
      first.ai.toolCalls.map((t) => t.replace(/\(.*$/s, '')),
      ['lookupOrder', 'search_faq'],
    );
    assert.match(first.ai.line, /scripted\/support-scripted-1 · \d+→\d+ tokens · calls lookupOrder, search_faq/);
    const refund = page.actions.find((a) => a.type === 'tool.refund');
    assert.equal(refund?.ai?.kind, 'tool');
    assert.equal(refund.ai.name, 'refund');
    assert.match(refund.ai.input ?? '', /"orderId":"A-1001"/);
    assert.match(refund.ai.output ?? '', /refundId/);
    const answered = page.actions.filter((a) => a.ai?.kind === 'model' && a.ai.text.length > 0);
    assert.ok(answered.length >= 1, 'the last call of the tool loop answers in text');
  });

  it('the tree shows a model call with its own rows, marked for the whole-record command', async () => {
    const model = new TreeModel(client);
    const [run] = await model.children(undefined);
    const [step] = (await model.children(run)) as StepNode[];
    const actions = (await model.children(step)) as ActionNode[];
    const call = actions.find((a) => a.action.id === 'model:1.2');
    assert.ok(call);
    const rows = (await model.children(call)) as DetailNode[];
    const byName = Object.fromEntries(rows.map((r) => [r.name, r.value]));
    assert.match(byName.model ?? '', /support-scripted-1/);
    assert.match(byName.tokens ?? '', /^\d+ in, \d+ out$/);
    assert.match(byName['last messages'] ?? '', /tool: lookupOrder → /);
    assert.ok(byName['idempotency key'] === 'model:1.2');
    const tool = actions.find((a) => a.action.type === 'tool.lookupOrder');
    const toolRows = Object.fromEntries(((await model.children(tool)) as DetailNode[]).map((r) => [r.name, r.value]));
    assert.equal(toolRows.tool, 'lookupOrder');
    assert.match(toolRows['tool result'] ?? '', /kettle/i);
  });

  it('callRecord gives the whole prompt and answer as Markdown; other actions have none', async () => {
    const rec = await client.request('callRecord', { runId: 'side', actionId: 'model:1.2' });
    assert.ok(rec);
    assert.match(rec.markdown, /^# Model call `model:1\.2`/);
    assert.match(rec.markdown, /## Prompt \(\d+ messages\)/);
    assert.match(
      rec.markdown,
      /### 1\. system: You are a support agent for a small shop\. Look the order up before acting\. Refund broken items in full, email the customer, and open a helpdesk ticket\./,
    );
    assert.match(rec.markdown, /## Journaled args\n\n```json\n\{\n {2}"call": "model:1\.2"/);
    const journaled = await client.request('action', { runId: 'side', actionId: 'model:1.2' });
    const prompt = (JSON.parse(journaled!.args) as { params: { prompt: unknown[] } }).params.prompt;
    assert.match(rec.markdown, new RegExp(`## Prompt \\(${prompt.length} messages\\)`));
    assert.equal(await client.request('callRecord', { runId: 'side', actionId: 'nope' }), null);
  });

  it("the timeline labels model calls with their model and tokens, and says more in the bar's detail", async () => {
    const t = await client.request('timeline', { runId: 'side' });
    const bar = t?.items.find((i) => i.id === 'model:1.1');
    assert.ok(bar);
    assert.match(bar.label, /^model:1\.1 scripted\/support-scripted-1 \d+→\d+$/);
    assert.match(bar.detail ?? '', /user: My kettle/);
    const tool = t?.items.find((i) => i.label === 'refund');
    assert.match(tool?.detail ?? '', /^refund\(.*A-1001.*\) → /);
  });
});
