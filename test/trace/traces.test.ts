// Issue 25: every run as OpenTelemetry traces from the journal, sent to a real OTLP/HTTP receiver (JSON and protobuf
// checked against trace.proto): real SIGKILLs at every fault point of an action, a worker under a caller's
// TRACEPARENT, the AI SDK example's model calls, and an endpoint that is down.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, tmpDir } from '../helpers';
import { cliAsync, startReceiver, type Receiver, type Span } from './receiver';
import { LEDGER_SCRIPT, detach, startWorker, stopWorker, waitFor, type Env } from '../pg/workers';

const KNOBS = path.join(FIXTURES, 'knobs.ts');
const SUPPORT = path.join(EXAMPLES, 'support-agent.ts');

const otel = (r: Receiver, protocol: 'http/json' | 'http/protobuf'): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: 'trace-test',
  OTEL_EXPORTER_OTLP_HEADERS: 'x-team=agents%20one',
});

function byName(spans: readonly Span[], prefix: string): Span[] {
  return spans.filter((s) => s.name.startsWith(prefix));
}

function assertNoDuplicates(spans: readonly Span[]): void {
  const ids = spans.map((s) => s.spanId);
  assert.equal(new Set(ids).size, ids.length, `no span is sent twice: ${spans.map((s) => s.name).join(', ')}`);
}

/** Every parent named is a span of the trace (or the caller's span). */
function assertConnected(spans: readonly Span[], callerSpan = ''): void {
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) if (s.parentSpanId !== '' && s.parentSpanId !== callerSpan) assert.ok(ids.has(s.parentSpanId), `${s.name}'s parent is in the trace`);
}

/** Lets the receiver hear what the child sent before it exited (the child awaits its send before exiting). */
async function settled(r: Receiver): Promise<void> {
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(r.errors, [], 'the receiver refused nothing');
}

describe('traces: every run as OpenTelemetry spans from the journal (issue 25)', function () {
  this.timeout(300_000);
  let r: Receiver;
  beforeEach(async () => {
    r = await startReceiver();
  });
  afterEach(async () => {
    await r.close();
  });

  const phases = ['before-start', 'after-start', 'after-execute', 'after-commit'] as const;
  for (const [i, phase] of phases.entries()) {
    const protocol = i % 2 === 0 ? 'http/protobuf' : 'http/json';
    it(`killed at action:${phase} and resumed (${protocol}): one execute_tool span per action key, one trace, nothing replayed sent again`, async () => {
      const dir = tmpDir();
      const env = otel(r, protocol);
      const killed = await cliAsync(dir, ['run', KNOBS, '--run-id', 'k', '--input', '{}', '--crash-at', `knob.act#2@${phase}`], env);
      assert.equal(killed.signal, 'SIGKILL', killed.stderr);
      await settled(r);
      assert.equal(r.spans.length, 0, 'a killed attempt sends nothing (its process is gone)');
      const resumed = await cliAsync(dir, ['resume', 'k'], env);
      assert.equal(resumed.status, 0, resumed.stderr);
      await settled(r);
      const spans = [...r.spans];
      assert.ok(spans.every((s) => s.protocol === (protocol === 'http/json' ? 'json' : 'protobuf') && s.service === 'trace-test'));
      assert.ok(
        r.requests.every((q) => q.headers['x-team'] === 'agents one'),
        'OTEL_EXPORTER_OTLP_HEADERS are sent, URL-decoded',
      );
      assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'one trace');
      assertNoDuplicates(spans);
      assertConnected(spans);

      const tools = byName(spans, 'execute_tool knob.act');
      assert.deepEqual(
        tools.map((s) => s.attributes['logbook.action.key']).sort(),
        ['act:k:first', 'act:k:second'],
        'one span per action key across both attempts',
      );
      const second = tools.find((s) => s.attributes['logbook.action.key'] === 'act:k:second');
      assert.ok(second);
      assert.equal(second.attributes['logbook.action.status'], 'committed');
      assert.equal(second.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(second.attributes['logbook.action.effect'], 'non-idempotent');
      const doubted = second.events.some((e) => e.name === 'logbook.in_doubt');
      const reconciled = second.events.find((e) => e.name === 'logbook.reconciled');
      if (phase === 'after-start' || phase === 'after-execute') {
        assert.ok(doubted, 'the killed action is marked in doubt');
        assert.equal(reconciled?.attributes['logbook.action.reconciliation'], phase === 'after-start' ? 'verified-absent' : 'verified');
        assert.equal(second.attributes['logbook.action.reconciliation'], reconciled?.attributes['logbook.action.reconciliation']);
      } else {
        assert.ok(!doubted && !reconciled, `at ${phase} nothing was in doubt`);
      }

      const [run] = byName(spans, 'invoke_agent');
      assert.equal(run?.name, 'invoke_agent knobs');
      assert.equal(run.attributes['gen_ai.conversation.id'], 'k');
      assert.equal(run.parentSpanId, '');
      const attempts = spans.filter((s) => s.parentSpanId === run.spanId);
      assert.deepEqual(attempts.map((s) => s.attributes['logbook.attempt']).sort(), [1, 2]);
      const first = attempts.find((s) => s.attributes['logbook.attempt'] === 1);
      assert.equal(first?.attributes['logbook.attempt.ended'], 'killed');
      assert.equal(first.status.code, 2);
      const resume = attempts.find((s) => s.attributes['logbook.attempt'] === 2);
      assert.equal(resume?.attributes['logbook.replayed.steps'], 1, 'the resume says it skipped step first');
      // Step first completed in attempt 1 and was replayed: one step span for it, attempt 1's.
      assert.deepEqual(
        byName(spans, 'step first').map((s) => s.attributes['logbook.attempt']),
        [1],
      );
      for (const s of spans) assert.ok(s.endNs >= s.startNs, `${s.name} ends after it starts`);

      // logbook traces sends the same spans again, with the same ids; --file writes OTLP JSON.
      const before = new Set(spans.map((s) => s.spanId));
      const file = path.join(dir, 'k.otlp.json');
      const again = await cliAsync(dir, ['traces', 'k', '--endpoint', `${r.url}/v1/traces`, '--file', file, '--json'], env);
      assert.equal(again.status, 0, again.stderr);
      await settled(r);
      const resent = r.spans.slice(spans.length);
      assert.deepEqual(new Set(resent.map((s) => s.spanId)), before, 'a re-export names the same spans: no new span');
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> };
      assert.equal(written.resourceSpans[0]?.scopeSpans[0]?.spans.length, before.size);
    });
  }

  it('logbook traces on a killed run: the open spans end at the last time the journal knows, in doubt', async () => {
    const dir = tmpDir();
    const killed = await cliAsync(dir, ['run', KNOBS, '--run-id', 'open', '--input', '{}', '--crash-at', 'knob.act#2@after-start']);
    assert.equal(killed.signal, 'SIGKILL');
    const t = await cliAsync(dir, ['traces', 'open', '--endpoint', `${r.url}/v1/traces`]);
    assert.equal(t.status, 0, t.stderr);
    await settled(r);
    const second = r.spans.find((s) => s.attributes['logbook.action.key'] === 'act:open:second');
    assert.equal(second?.attributes['logbook.action.status'], 'in-doubt');
    assert.equal(second.status.code, 2);
    assert.match(second.status.message, /in doubt/);
    const attempt = r.spans.find((s) => s.name.startsWith('start knobs'));
    assert.ok(attempt && second.endNs <= attempt.endNs && attempt.endNs > attempt.startNs);
  });

  it('a down endpoint neither fails nor loses the run; logbook traces sends it later', async () => {
    const dir = tmpDir();
    // A port nothing listens on: taken, then closed.
    const probe = http.createServer();
    await new Promise<void>((res) => probe.listen(0, '127.0.0.1', res));
    const { port } = probe.address() as AddressInfo;
    await new Promise((res) => probe.close(res));
    const down = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces` };
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'down', '--input', '{}', '--json'], down);
    assert.equal(run.status, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { status: string }).status, 'completed');
    assert.match(run.stderr, /traces of run down were not sent: .*could not be reached.*`logbook traces down` sends them later/);
    const t = await cliAsync(dir, ['traces', 'down'], { OTEL_EXPORTER_OTLP_ENDPOINT: r.url });
    assert.equal(t.status, 0, t.stderr);
    await settled(r);
    assert.equal(byName(r.spans, 'execute_tool').length, 2);
    assert.equal(byName(r.spans, 'invoke_agent')[0]?.status.code, 1);
    // Still down: the command says so, with its code, and the journal is untouched.
    const failed = await cliAsync(dir, ['traces', 'down'], down);
    assert.equal(failed.status, 2, 'refused: nothing was sent, nothing changed');
    assert.match(failed.stderr, /LB_TRACE_EXPORT/);
  });

  it('run --detach under a TRACEPARENT: the worker spans join the caller trace', async () => {
    const dir = tmpDir('logbook-trace-worker-');
    const e: Env = { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
    const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const traceparent = `00-${caller.traceId}-${caller.spanId}-01`;
    const queued = spawnSync(
      process.execPath,
      [path.join(__dirname, '..', '..', 'dist', 'cli.js'), 'run', '--detach', LEDGER_SCRIPT, '--input', '{"items":2}', '--run-id', 'det', '--journal', e.db],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, TRACEPARENT: traceparent, TRACESTATE: 'vendor=abc', LOGBOOK_STATE_DIR: dir, LEDGER_FILE: e.ledger },
      },
    );
    assert.equal(queued.status, 0, queued.stderr);
    assert.ok(detach);
    const w = startWorker(e, 'traced', [], undefined, { ...otel(r, 'http/protobuf'), TRACEPARENT: '' });
    try {
      await w.waitLine(/det completed/);
      await waitFor('the run span', () => (r.spans.some((s) => s.name.startsWith('invoke_agent')) ? true : undefined), 30_000);
    } finally {
      await stopWorker(w);
    }
    await settled(r);
    assert.ok(r.spans.length > 3);
    assert.ok(
      r.spans.every((s) => s.traceId === caller.traceId),
      'every span is in the caller trace',
    );
    const [run] = byName(r.spans, 'invoke_agent');
    assert.equal(run?.parentSpanId, caller.spanId, "the run's span is a child of the caller's");
    assert.ok(r.spans.every((s) => s.traceState === 'vendor=abc'));
    assertConnected(r.spans, caller.spanId);
    assertNoDuplicates(r.spans);
  });

  it('the AI SDK example: a chat span per model call with its tokens; none for calls answered from the journal', async () => {
    const dir = tmpDir();
    const env = otel(r, 'http/json');
    const killed = await cliAsync(dir, ['run', SUPPORT, '--run-id', 'ai', '--crash-at', 'model.stream#1@before-start'], env);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const resumed = await cliAsync(dir, ['resume', 'ai'], env);
    assert.equal(resumed.status, 0, resumed.stderr);
    await settled(r);
    assertNoDuplicates(r.spans);
    const chats = byName(r.spans, 'chat ');
    const generate = chats.filter((s) => s.attributes['logbook.model.call'] !== undefined && s.name !== '' && s.attributes['logbook.attempt'] === 1);
    const fresh = chats.filter((s) => s.attributes['logbook.attempt'] === 2);
    assert.ok(generate.length >= 2, 'the first attempt made the tool-calling model calls');
    assert.equal(fresh.length, 1, 'the resume made one model call (the reply): the others were answered from the journal');
    for (const c of chats) {
      assert.equal(c.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(typeof c.attributes['gen_ai.request.model'], 'string');
      assert.ok(Number(c.attributes['gen_ai.usage.input_tokens']) > 0 && Number(c.attributes['gen_ai.usage.output_tokens']) > 0, `${c.name} has its tokens`);
      assert.ok(Array.isArray(c.attributes['gen_ai.response.finish_reasons']));
      assert.equal(c.attributes['gen_ai.input.messages'], undefined, 'content is opt-in');
    }
    const lookup = byName(r.spans, 'execute_tool tool.lookupOrder');
    assert.equal(lookup.length, 1);
    assert.equal(typeof lookup[0]?.attributes['gen_ai.tool.call.id'], 'string', 'the tool call id the model gave');
  });
});
