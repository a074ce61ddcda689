// Issue 25: traces from the other surfaces: the host API (openJournal's traces option and a start's traceparent), the
// debugger's runs (launch env), and prompt/completion content, which is opt-in and masked by value.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, flushTraces, openJournal } from '../../src/runtime';
import { EXAMPLES, FIXTURES, tmpDir } from '../helpers';
import { sessionsPerTest } from '../dap/harness';
import { cliAsync, startReceiver, type Receiver } from './receiver';

const note = defineAction({
  type: 'host.note',
  version: 1,
  effect: 'idempotent',
  args: z.object({ n: z.number() }),
  key: (a, run) => `note:${run.id}:${a.n}`,
  execute: (a) => ({ noted: a.n }),
});

const hostAgent = defineAgent({
  name: 'host-traced',
  input: z.object({}),
  async run(run) {
    await run.step('one', () => run.do(note, { n: 1 }));
    return { ok: true };
  },
});

describe('traces from the host API, the debugger, and captured content (issue 25)', function () {
  this.timeout(300_000);
  let r: Receiver;
  beforeEach(async () => {
    r = await startReceiver();
  });
  afterEach(async () => {
    await r.close();
  });

  it("openJournal({ traces }) sends each attempt; start's traceparent joins the request's trace", async () => {
    const dir = tmpDir();
    const j = openJournal({
      journal: path.join(dir, 'j.db'),
      agents: [hostAgent],
      traces: { endpoint: `${r.url}/v1/traces`, protocol: 'http/json', serviceName: 'orders-api' },
    });
    try {
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const parent = 'b7ad6b7169203331';
      const out = await j.start(hostAgent, {}, { runId: 'h1', traceparent: `00-${traceId}-${parent}-01` });
      assert.equal(out.status, 'completed');
      await flushTraces();
      assert.deepEqual(r.errors, []);
      assert.ok(r.spans.length >= 4);
      assert.ok(r.spans.every((s) => s.traceId === traceId && s.service === 'orders-api'));
      assert.equal(r.spans.find((s) => s.name === 'invoke_agent host-traced')?.parentSpanId, parent);
      const tool = r.spans.find((s) => s.name === 'execute_tool host.note');
      assert.equal(tool?.attributes['logbook.action.effect'], 'idempotent');
      // traces: false sends nothing, whatever the variables say.
      const quiet = openJournal({ journal: path.join(dir, 'j.db'), agents: [hostAgent], traces: false });
      try {
        const before = r.spans.length;
        await quiet.start(hostAgent, {}, { runId: 'h2' });
        await flushTraces();
        assert.equal(r.spans.length, before);
      } finally {
        quiet.close();
      }
    } finally {
      j.close();
    }
    assert.throws(() => openJournal({ journal: path.join(dir, 'j.db'), traces: true }), /LB_USAGE|no OTLP endpoint/);
  });

  describe('the debugger', () => {
    const session = sessionsPerTest();
    it("a debug session's run sends its spans, under the launch env's TRACEPARENT", async () => {
      const s = await session();
      const traceId = '11111111111111111111111111111111';
      const exited = s.exitCode();
      await s.launch({
        program: path.join(FIXTURES, 'knobs.ts'),
        runId: 'dbg-1',
        input: {},
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, TRACEPARENT: `00-${traceId}-2222222222222222-01` },
      });
      assert.equal(await exited, 0);
      await r.waitFor(1);
      await new Promise((res) => setTimeout(res, 100));
      assert.deepEqual(r.errors, []);
      assert.ok(r.spans.every((x) => x.traceId === traceId));
      assert.equal(r.spans.filter((x) => x.name === 'execute_tool knob.act').length, 2);
    });
  });

  it('prompts and completions only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, secrets masked', async () => {
    const dir = tmpDir();
    const secret = 'sk-trace-7d1e4c2b9a';
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      DEMO_API_KEY: secret,
      SUPPORT_AGENT_SYSTEM: `You are a support agent. Never say ${secret}.`,
    };
    const run = await cliAsync(dir, ['run', path.join(EXAMPLES, 'support-agent.ts'), '--run-id', 'c1'], env);
    assert.equal(run.status, 0, run.stderr);
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(r.errors, []);
    const chats = r.spans.filter((s) => s.name.startsWith('chat '));
    assert.ok(chats.length > 0);
    for (const c of chats) {
      const input = String(c.attributes['gen_ai.input.messages']);
      assert.match(input, /You are a support agent/);
      assert.ok(!input.includes(secret), 'the secret reached a span');
      assert.match(input, /«secret»/);
      assert.equal(typeof c.attributes['gen_ai.output.messages'], 'string');
    }
  });
});
