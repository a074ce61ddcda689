// The support agent (AI SDK, offline mock model) in the runs tree: model calls and tool calls as rows, whole on demand.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode, RunNode } from '../../src/extension/tree/nodes';
import { ROOT, api, cli, runItem, shown, text, until } from './helpers';

const SUPPORT = path.join(ROOT, 'examples', 'support-agent.ts');

describe('model and tool calls in the runs tree', () => {
  before(() => {
    const r = cli(['run', SUPPORT, '--run-id', 'ai-tree']);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  });

  it('shows a model call (model id, tokens, answer) and a tool call, and opens the whole prompt on demand', async () => {
    const a = await api();
    const run = await until('the support run in the tree', () => runItem(a, 'ai-tree'));
    assert.equal(text(run.item.label), 'support-agent');
    const steps = await shown(a, run.node);
    assert.deepEqual(steps.map((s) => text(s.item.label)), ['1. resolve', '2. reply']);
    const actions = await shown(a, steps[0]!.node);

    const first = actions.find((x) => (x.node as ActionNode).action.id === 'model:1.1');
    assert.ok(first, actions.map((x) => (x.node as ActionNode).action.id).join(', '));
    assert.equal(text(first.item.label), 'model.generate');
    assert.match(String(first.item.description), /^committed · idempotent · 1× · scripted\/support-scripted-1 · \d+→\d+ tokens · calls lookupOrder/);
    assert.equal(first.item.contextValue, 'logbook.action hasKey hasSource aiCall whatIf');
    const refundCall = actions.find((x) => (x.node as ActionNode).action.type === 'tool.refund');
    assert.equal(refundCall?.item.contextValue, 'logbook.action hasKey hasSource aiCall', 'a tool call has no answer to edit');
    const tip = first.item.tooltip as vscode.MarkdownString;
    assert.match(tip.value, /user: My kettle from order A-1001 arrived broken/);

    // The call that ends the tool loop answers in words: the tree shows the start of the answer.
    const answering = actions.filter((x) => (x.node as ActionNode).action.ai?.kind === 'model' && /· "/.test(String(x.item.description)));
    assert.ok(answering.length >= 1, actions.map((x) => String(x.item.description)).join('\n'));
    const rows = await shown(a, answering[answering.length - 1]!.node);
    const response = rows.find((r) => text(r.item.label) === 'response');
    assert.match(String(response?.item.description), /\S/);
    assert.match(String(rows.find((r) => text(r.item.label) === 'tokens')?.item.description), /^\d+ in, \d+ out$/);

    const refund = actions.find((x) => (x.node as ActionNode).action.type === 'tool.refund');
    assert.ok(refund);
    assert.match(String(refund.item.description), /^committed · ⚠ non-idempotent · 1× · refund\(.*A-1001.*\) → /);
    const refundRows = await shown(a, refund.node);
    assert.equal(refundRows.find((r) => text(r.item.label) === 'tool')?.item.description, 'refund');

    // Whole on demand: a read-only Markdown document with every message of the prompt.
    const doc = await vscode.commands.executeCommand<vscode.TextDocument>('logbook.openCallRecord', first.node);
    assert.equal(doc.languageId, 'markdown');
    assert.equal(doc.isUntitled, true);
    assert.match(doc.getText(), /^# Model call `model:1\.1`/);
    assert.match(doc.getText(), /### 1\. system: You are a support agent for a small shop\. Look the order up before acting\./);
    assert.match(doc.getText(), /### 2\. user: My kettle from order A-1001 arrived broken\. Can I get my money back\? \(order A-1001\)/);
    assert.equal(vscode.window.activeTextEditor?.document, doc);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('forks a what-if from a model call with an edited answer: the new run does what that answer leads to', async () => {
    const a = await api();
    const run = await until('the support run in the tree', () => runItem(a, 'ai-tree'));
    const [resolve] = await shown(a, run.node);
    const second = (await shown(a, resolve!.node)).find((x) => (x.node as ActionNode).action.id === 'model:1.2');
    assert.ok(second);
    assert.equal(second.item.contextValue, 'logbook.action hasKey hasSource aiCall whatIf');
    const answer = 'No refund: order A-1001 is past its return window, so a replacement is on its way instead.';
    const r = await vscode.commands.executeCommand<{ code: number; json: { runId: string; status: string; output: { reply: string; toolCalls: string[] } }; stderr: string }>('logbook.forkWithEditedAnswer', second.node, { answer });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.status, 'completed');
    assert.deepEqual(r.json.output.toolCalls, ['lookupOrder', 'search_faq'], 'no refund, email or ticket in the fork');
    assert.ok(r.json.output.reply.includes(answer), r.json.output.reply);
    const fork = await until('the fork in the tree', () => runItem(a, r.json.runId));
    assert.equal((fork.node as RunNode).run.forkedFrom, 'ai-tree');
    assert.match(String(fork.item.description), /^completed/);
  });
});
