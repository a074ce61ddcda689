// A LangGraph graph (agent-logbook/langgraph's runGraph) in the debugger: a function breakpoint on a node's name, a
// line breakpoint on its addNode line or on a logbookDo line in its body, and interrupt() answered from the debugger.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import Database from 'better-sqlite3';
import { ROOT } from '../helpers';
import { DAP_FIXTURES, lineOf, sessionsPerTest, type Session } from './harness';

const GRAPH = path.join(DAP_FIXTURES, 'graph.ts');
const FILE = path.relative(ROOT, GRAPH);
const ASK = lineOf(GRAPH, ".addNode('ask'");
const SEND = lineOf(GRAPH, ".addNode('send'");
const DO = lineOf(GRAPH, 'await logbookDo(notify');
const RUN = lineOf(GRAPH, 'run: async (run, input)');

/** A frame as a person reads it: what, in which file, at which line. */
function shape(f: DebugProtocol.StackFrame | undefined): { name: string; file: string | undefined; line: number } {
  return { name: (f?.name ?? '').replace(/ \(.*\)$/, ''), file: f?.source?.path && path.relative(ROOT, f.source.path), line: f?.line ?? 0 };
}

function output(s: Session, runId: string): { status: string; output: unknown } {
  const db = new Database(s.db, { readonly: true });
  try {
    const row = db.prepare('SELECT status, output FROM runs WHERE id = ?').get(runId) as { status: string; output: string | null };
    return { status: row.status, output: row.output === null ? null : (JSON.parse(row.output) as unknown) };
  } finally {
    db.close();
  }
}

describe('dap: a LangGraph graph stops at its nodes, and its interrupt() is answered from the debugger', function () {
  this.timeout(180_000);
  const session = sessionsPerTest();

  it('stops at the interrupt gate (node, superstep and the addNode line on the stack); approve with a note answers interrupt() with it', async () => {
    const s = await session();
    await s.launch({ program: GRAPH, runId: 'g-ask' }, { filters: ['approval'] });
    const gate = await s.stopped();
    assert.equal(gate.reason, 'exception');
    assert.equal(gate.text, 'Approval gate');
    assert.deepEqual(gate.frames.map(shape), [
      { name: 'langgraph.interrupt langgraph:g-ask:interrupt:ask@1:0', file: FILE, line: ASK },
      { name: 'step 3 "interrupt: ask@1"', file: FILE, line: ASK },
      { name: 'run g-ask', file: FILE, line: RUN },
    ]);
    const exited = s.exitCode();
    const r = await s.dc.customRequest('approve', { note: '{"send":"yes"}' });
    assert.match(r.body.message, /approved: langgraph\.interrupt langgraph:g-ask:interrupt:ask@1:0/);
    assert.equal(await exited, 0);
    assert.deepEqual(output(s, 'g-ask'), {
      status: 'completed',
      output: { answer: { send: 'yes' }, sent: { sent: '{"send":"yes"}', key: 'langgraph:g-ask:send@2/notify:ada' } },
    });
  });

  it('a function breakpoint by node name stops before each execution of that node, at its addNode line', async () => {
    const s = await session();
    await s.launch({ program: GRAPH, runId: 'g-fn' }, { functions: [{ name: 'ask' }, { name: 'send' }], filters: ['approval'] });
    const stops: Array<{ reason: string; top: ReturnType<typeof shape>[] }> = [];
    const ended = s.exitCode();
    for (;;) {
      const next = await Promise.race([s.stopped(), ended.then(() => undefined)]);
      if (!next) break;
      stops.push({ reason: next.reason, top: next.frames.slice(0, 2).map(shape) });
      if (next.reason === 'exception') await s.dc.customRequest('approve', { note: 'true' });
      else await s.dc.continueRequest({ threadId: s.threadId() });
    }
    assert.equal(await ended, 0);
    const run = { name: 'run g-fn', file: FILE, line: RUN };
    assert.deepEqual(stops, [
      // ask runs twice: it stops at interrupt(), and runs again from its top once answered.
      { reason: 'function breakpoint', top: [{ name: 'step 2 "ask@1"', file: FILE, line: ASK }, run] },
      {
        reason: 'exception',
        top: [
          { name: 'langgraph.interrupt langgraph:g-fn:interrupt:ask@1:0', file: FILE, line: ASK },
          { name: 'step 3 "interrupt: ask@1"', file: FILE, line: ASK },
        ],
      },
      { reason: 'function breakpoint', top: [{ name: 'step 4 "ask@1"', file: FILE, line: ASK }, run] },
      { reason: 'function breakpoint', top: [{ name: 'step 5 "send@2"', file: FILE, line: SEND }, run] },
    ]);
  });

  it('line breakpoints: verified on an addNode line and on a logbookDo line in a node, not elsewhere in the node; each stops there', async () => {
    const s = await session();
    const other = lineOf(GRAPH, 'return { sent };');
    await s.launch(
      { program: GRAPH, runId: 'g-line' },
      {
        lines: [
          { file: GRAPH, line: SEND },
          { file: GRAPH, line: DO },
          { file: GRAPH, line: other },
        ],
        filters: ['approval'],
      },
    );
    assert.deepEqual(
      s.setBreakpointResults.map((b) => b.verified),
      [true, true, false],
    );
    assert.match(s.setBreakpointResults[2]?.message ?? '', /addNode/);
    const gate = await s.stopped();
    assert.equal(gate.reason, 'exception');
    const atNode = s.stopped();
    await s.dc.customRequest('approve', { note: '"ok"' });
    const node = await atNode;
    assert.equal(node.reason, 'breakpoint');
    assert.deepEqual(node.frames.map(shape), [
      { name: 'step 5 "send@2"', file: FILE, line: SEND },
      { name: 'run g-line', file: FILE, line: RUN },
    ]);
    const atDo = await s.step('continue');
    assert.equal(atDo.reason, 'breakpoint');
    assert.deepEqual(atDo.frames.map(shape), [
      { name: 'notify.send langgraph:g-line:send@2/notify:ada', file: FILE, line: DO },
      { name: 'step 5 "send@2"', file: FILE, line: SEND },
      { name: 'run g-line', file: FILE, line: RUN },
    ]);
    assert.equal(await s.runToEnd(), 0);
    assert.ok(fs.existsSync(s.db));
  });
});
