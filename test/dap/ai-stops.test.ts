// The support agent (AI SDK) in the debugger: model and tool stops at the agent's own lines, and its console's voices.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { EXAMPLES, ROOT, cli } from '../helpers';
import { DAP_FIXTURES, lineOf, sessionsPerTest, type Stop } from './harness';

const SUPPORT = path.join(EXAMPLES, 'support-agent.ts');
const PACKAGE_CODE = [path.join(ROOT, 'src') + path.sep, path.join(ROOT, 'dist') + path.sep, `${path.sep}node_modules${path.sep}`];

/** A frame as a person reads it: what, in which file, at which line, and whether the editor would pass it over. */
function shape(f: DebugProtocol.StackFrame): { name: string; file: string | undefined; line: number; deemphasized: boolean } {
  return {
    name: f.name.replace(/ \(.*\)$/, ''),
    file: f.source?.path && path.relative(ROOT, f.source.path),
    line: f.line,
    deemphasized: f.source?.presentationHint === 'deemphasize',
  };
}

describe('dap: an AI SDK agent stops at its own lines', function () {
  const session = sessionsPerTest();

  it('model:* and tool stops: the top frame is the generateText / streamText line or the tools entry, never a Logbook file', async () => {
    const s = await session();
    await s.launch({ program: SUPPORT, runId: 'ai-lines' }, { functions: [{ name: 'model:*' }, { name: 'tool.*' }, { name: 'mcp.*' }], filters: [] });
    const file = path.relative(ROOT, SUPPORT);
    const generate = lineOf(SUPPORT, 'await generateText(');
    const stream = lineOf(SUPPORT, 'streamText({ model');
    const mcp = lineOf(SUPPORT, 'await logbookMcpTools(');
    const step1 = lineOf(SUPPORT, "run.step('resolve'");
    const step2 = lineOf(SUPPORT, "run.step('reply'");
    const top: Array<ReturnType<typeof shape>> = [];
    const stops: Stop[] = [];
    const ended = s.exitCode();
    for (;;) {
      const next = await Promise.race([s.stopped(), ended.then(() => undefined)]);
      if (!next) break;
      stops.push(next);
      top.push(shape(next.frames[0]!));
      await s.dc.continueRequest({ threadId: s.threadId() });
    }
    assert.equal(await ended, 0);
    const at = (name: string, line: number) => ({ name, file, line, deemphasized: false });
    assert.deepEqual(top, [
      at('mcp.tools/list mcp:helpdesk:tools/list@1', mcp),
      at('model.generate model:1.1', generate),
      at('tool.lookupOrder tool:ai-lines:model:1.1:call_1_1', lineOf(SUPPORT, 'lookupOrder: { tool: lookupOrder')),
      at('mcp.helpdesk.search_faq tool:ai-lines:model:1.1:call_1_2', mcp),
      at('model.generate model:1.2', generate),
      at('tool.refund refund:ai-lines:A-1001', lineOf(SUPPORT, 'refund: { action: refund')),
      at('model.generate model:1.3', generate),
      at('tool.sendEmail email:ai-lines:ann@example.com:Refund for A-1001', lineOf(SUPPORT, 'sendEmail,', 'logbookTools(run')),
      at('mcp.helpdesk.open_ticket tool:ai-lines:model:1.3:call_3_2', mcp),
      at('model.generate model:1.4', generate),
      at('model.stream model:2.1', stream),
    ]);
    // Below the call: its step and the run, at the agent's lines too; nothing anywhere in Logbook's or an SDK's code.
    assert.deepEqual(shape(stops[1]!.frames[1]!), { name: 'step 1 "resolve"', file, line: step1, deemphasized: false });
    assert.deepEqual(shape(stops[10]!.frames[1]!), { name: 'step 2 "reply"', file, line: step2, deemphasized: false });
    for (const f of stops.flatMap((x) => x.frames)) assert.ok(!PACKAGE_CODE.some((d) => f.source?.path?.includes(d)), `${f.name} at ${f.source?.path}`);
  });

  it('a frame an integration could only place in library code is de-emphasised, so the editor focuses the step below', async () => {
    const s = await session();
    const program = path.join(DAP_FIXTURES, 'library-site.ts');
    await s.launch({ program, runId: 'lib-site' }, { functions: [{ name: 'ping' }], filters: [] });
    const stop = await s.stopped();
    const hints = stop.frames.map((f) => ({
      name: f.name.replace(/ \(.*\)$/, ''),
      hint: f.presentationHint,
      source: f.source?.presentationHint,
      library: f.source?.path?.includes(`${path.sep}node_modules${path.sep}`) === true,
    }));
    assert.deepEqual(hints, [
      { name: 'ping ping', hint: 'subtle', source: 'deemphasize', library: true },
      { name: 'step 1 "call it"', hint: undefined, source: undefined, library: false },
      { name: 'run lib-site', hint: undefined, source: undefined, library: false },
    ]);
    assert.equal(stop.frames[1]?.line, lineOf(program, "run.step('call it'"));
    assert.equal(await s.runToEnd(), 0);
  });

  it('says "answered from the journal" in the console voice, not as stderr (red is for errors)', async () => {
    const s = await session();
    const state = path.join(s.dir, '.logbook');
    const crashed = cli(s.dir, ['run', SUPPORT, '--run-id', 'ai-voice', '--crash-at', 'tool.sendEmail#1@after-start'], { LOGBOOK_STATE_DIR: state });
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    await s.launch({ program: SUPPORT, resume: 'ai-voice' }, { filters: [] });
    assert.equal(await s.exitCode(), 0);
    const said = s.output
      .filter((o) => /answered from the journal/.test(o.text))
      .map((o) => ({ category: o.category, call: /model:\d\.\d/.exec(o.text)?.[0] }));
    assert.deepEqual(said, [
      { category: 'console', call: 'model:1.1' },
      { category: 'console', call: 'model:1.2' },
      { category: 'console', call: 'model:1.3' },
    ]);
    assert.equal(s.text('stderr'), '', 'nothing the run said went out as stderr');
  });
});
