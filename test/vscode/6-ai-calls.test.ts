// The support agent (AI SDK, offline mock model) in the runs tree: model calls and tool calls as rows, whole on demand.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActionNode, RunNode } from '../../src/extension/tree/nodes';
import { DapLog, ROOT, api, cli, runItem, shown, started, terminated, text, until } from './helpers';

const SUPPORT = path.join(ROOT, 'examples', 'support-agent.ts');
const lineOf = (doc: vscode.TextDocument, needle: string): number =>
  doc
    .getText()
    .split('\n')
    .findIndex((l) => l.includes(needle)) + 1;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
    assert.deepEqual(
      steps.map((s) => text(s.item.label)),
      ['1. resolve', '2. reply'],
    );
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

  it("decorates the agent's generateText, streamText and tools lines with what its latest run's model and tool calls did", async () => {
    const a = await api();
    const doc = await vscode.workspace.openTextDocument(SUPPORT);
    await vscode.window.showTextDocument(doc);
    const at = (needle: string): number => lineOf(doc, needle) - 1;
    const d = await until('decorations on the model call lines', async () => {
      await a.decorations.update();
      const shownNow = a.decorations.shown.get(SUPPORT);
      return shownNow?.some((x) => x.line === at('await generateText(')) ? shownNow : undefined;
    });
    for (const needle of ['await generateText(', 'streamText({', 'refund: { action: refund', 'lookupOrder: { tool: lookupOrder']) {
      assert.ok(
        d.some((x) => x.line === at(needle) && /✓ \d+ committed/.test(x.text)),
        `${needle}: ${JSON.stringify(d)}`,
      );
    }
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('forks a what-if from a model call with an edited answer: the new run does what that answer leads to', async () => {
    const a = await api();
    const run = await until('the support run in the tree', () => runItem(a, 'ai-tree'));
    const [resolve] = await shown(a, run.node);
    const second = (await shown(a, resolve!.node)).find((x) => (x.node as ActionNode).action.id === 'model:1.2');
    assert.ok(second);
    assert.equal(second.item.contextValue, 'logbook.action hasKey hasSource aiCall whatIf');
    const answer = 'No refund: order A-1001 is past its return window, so a replacement is on its way instead.';
    const r = await vscode.commands.executeCommand<{
      code: number;
      json: { runId: string; status: string; output: { reply: string; toolCalls: string[] } };
      stderr: string;
    }>('logbook.forkWithEditedAnswer', second.node, { answer });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.status, 'completed');
    assert.deepEqual(r.json.output.toolCalls, ['lookupOrder', 'search_faq'], 'no refund, email or ticket in the fork');
    assert.ok(r.json.output.reply.includes(answer), r.json.output.reply);
    const fork = await until('the fork in the tree', () => runItem(a, r.json.runId));
    assert.equal((fork.node as RunNode).run.forkedFrom, 'ai-tree');
    assert.match(String(fork.item.description), /^completed/);
  });
});

describe('the support agent in the debugger', () => {
  let dap: DapLog;
  before(() => (dap = new DapLog()));
  after(() => dap.dispose());
  afterEach(async () => {
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    while (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  });

  /** The frame VS Code focused and the editor it opened: the user's, not a Logbook file. */
  async function focused(
    session: vscode.DebugSession,
    threadId: unknown,
  ): Promise<{ top: { name: string; line: number; path: string }; editor: string; line: number }> {
    const trace = (await session.customRequest('stackTrace', { threadId, startFrame: 0, levels: 5 })) as {
      stackFrames: Array<{ name: string; line: number; source?: { path?: string } }>;
    };
    const top = trace.stackFrames[0];
    const editor = await until('the editor on the stop', () => {
      const e = vscode.window.activeTextEditor;
      return e && e.document.uri.scheme === 'file' && e.selection.active.line + 1 === top?.line ? e : undefined;
    });
    return {
      top: { name: top?.name ?? '', line: top?.line ?? 0, path: String(top?.source?.path) },
      editor: editor.document.uri.fsPath,
      line: editor.selection.active.line + 1,
    };
  }

  it('F5, model:* stops at the agent lines, kill at a tool, resume: the console informs in its own voice, and the timeline can be read and clicked', async () => {
    const a = await api();
    const doc = await vscode.workspace.openTextDocument(SUPPORT);
    const generate = lineOf(doc, 'await generateText(');
    const refundEntry = lineOf(doc, 'refund: { action: refund');
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('model:*'), new vscode.FunctionBreakpoint('tool.refund')]);
    const name = 'support agent';
    const begun = started(name);
    const ended = terminated(name);
    assert.ok(
      await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], {
        type: 'logbook',
        request: 'launch',
        name,
        program: SUPPORT,
        runId: 'ai-debug',
      }),
    );
    const session = await begun;

    // Item 1: the stop is at the agent's generateText line, in the agent's file; no Logbook source is opened.
    let stop = await until('the model:1.1 stop', () => dap.stops(session)[0]);
    let at = await focused(session, stop.body.threadId);
    assert.match(at.top.name, /^model\.generate model:1\.1/);
    assert.equal(at.editor, SUPPORT);
    assert.equal(at.line, generate);
    assert.ok(at.top.path.endsWith(SUPPORT), at.top.path);
    const paused = await until(
      'the tree says where it is paused',
      () => a.model.pausedOf('ai-debug')?.where.includes('support-agent.ts') && a.model.pausedOf('ai-debug'),
    );
    assert.equal(paused.where, `${at.top.name} (support-agent.ts:${generate})`);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.fsPath : ''));
    assert.ok(!tabs.some((f) => f.startsWith(path.join(ROOT, 'src') + path.sep)), tabs.join(', '));
    await sleep(2500); // a person reading the stop: a pause the timeline shows
    await session.customRequest('continue', { threadId: stop.body.threadId });

    stop = await until('the model:1.2 stop', () => dap.stops(session)[1]);
    await session.customRequest('continue', { threadId: stop.body.threadId });
    stop = await until('the tool.refund stop', () => dap.stops(session)[2]);
    at = await focused(session, stop.body.threadId);
    assert.match(at.top.name, /^tool\.refund refund:ai-debug:A-1001/);
    assert.deepEqual([at.editor, at.line], [SUPPORT, refundEntry], 'a tool stops at the entry that declared it');
    await sleep(2500);
    assert.equal(await vscode.commands.executeCommand('logbook.killRun'), 'killed');
    await ended;

    // Resume: model:1.1 and 1.2 are answered from the journal, said as information (console), never as stderr.
    const run = await until('the run interrupted', async () => {
      const r = await runItem(a, 'ai-debug');
      return r && /^interrupted/.test(String(r.item.description)) ? r : undefined;
    });
    const resumeName = 'Logbook: resume ai-debug';
    const resumed = started(resumeName);
    const resumeEnded = terminated(resumeName);
    assert.equal(await vscode.commands.executeCommand('logbook.resumeRun', run.node), true);
    const again = await resumed;
    let handled = 0;
    let done = false;
    void resumeEnded.then(() => (done = true));
    await until(
      'the resumed run to end, continuing at each stop',
      async () => {
        const next = dap.stops(again)[handled];
        if (next) {
          handled++;
          await again.customRequest('continue', { threadId: next.body.threadId }).then(undefined, () => undefined);
        }
        return done;
      },
      120_000,
    );
    const outputs = dap.messages
      .filter((x) => x.session.id === again.id && x.m.type === 'event' && x.m.event === 'output')
      .map((x) => x.m.body as { category?: string; output: string });
    const said = outputs.filter((o) => /answered from the journal/.test(o.output));
    assert.deepEqual(
      said.map((o) => [o.category, /model:\d\.\d/.exec(o.output)?.[0]]),
      [
        ['console', 'model:1.1'],
        ['console', 'model:1.2'],
      ],
    );
    assert.deepEqual(
      outputs.filter((o) => o.category === 'stderr'),
      [],
    );
    await until('completed', async () => /^completed · 2 attempts/.test(String((await runItem(a, 'ai-debug'))?.item.description)));

    // Item 2: every bar of the timeline is labelled whole, on top where one clicks, and opens its row in the tree.
    await vscode.commands.executeCommand('logbook.openTimeline', 'ai-debug');
    const t = await until('timeline data', () => a.timelines.data('ai-debug'));
    assert.ok(
      t.attempts[0]?.scale.segments.some((s) => s.gap && s.paused),
      'the stops are paused gaps',
    );
    const drawing = await until('the drawing', async () => {
      const d = await a.timelines.drawing('ai-debug');
      return d && d.bars.length === t.items.length ? d : undefined;
    });
    assert.equal(drawing.collapsed, true, 'an attempt mostly paused starts with its pauses collapsed');
    const actions = t.items.filter((i) => i.kind === 'action');
    assert.ok(actions.length >= 10, String(actions.length));
    for (const item of t.items) {
      const key = `${item.attempt}:${item.kind}:${item.id}`;
      const bar = drawing.bars.find((b) => b.key === key);
      assert.deepEqual(
        bar && { text: bar.text, labelFits: bar.labelFits, onTop: bar.onTop, overlaps: bar.overlaps },
        { text: item.label, labelFits: true, onTop: true, overlaps: [] },
        key,
      );
    }
    for (const item of actions) {
      const key = `${item.attempt}:action:${item.id}`;
      assert.equal(await a.timelines.click('ai-debug', key), true, key);
      await until(`the tree row of ${key}`, () => {
        const sel = a.view.selection[0] as ActionNode | undefined;
        return sel?.kind === 'action' && sel.action.id === item.id;
      });
    }
  });
});
