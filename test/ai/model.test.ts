// Journaled model calls (agent-logbook/ai): replay without buying again, drift stops with a diff, streams, parallel calls.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { APICallError } from '@ai-sdk/provider';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { generateText, simulateReadableStream, streamText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { ErrorCodes, defineAgent, openStore, resumeRun, startRun, type RunApi, type Store } from '../../src/runtime';
import { logbookModel, logbookTools, replaySavings } from '../../src/ai';
import { tmpDir } from '../helpers';
import { lastMessage, scriptedModel, text, toolCall, usage } from './mock';

const quiet = { log: () => undefined };

describe('ai: journaled model calls', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('answers a resumed step from the journal: the model is not paid again and the tokens saved are counted', async () => {
    const { model, calls } = scriptedModel((c) => [text(`echo: ${lastMessage(c)}`)]);
    let crash = true;
    let saved: ReturnType<typeof replaySavings> | undefined;
    const agent = defineAgent({
      name: 'replay',
      input: z.object({}),
      run: async (run) =>
        run.step('answer', async () => {
          const m = logbookModel(run, model, { prices: { 'scripted-1': { inputPerMillion: 2, outputPerMillion: 8 } }, reportReplays: false });
          const a = await generateText({ model: m, prompt: 'one', maxRetries: 0 });
          const b = await generateText({ model: m, prompt: 'two', maxRetries: 0 });
          if (crash) throw new Error('crash after both calls');
          saved = replaySavings(run);
          return [a.text, b.text, a.response.timestamp.toISOString()];
        }),
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'r', ...quiet });
    assert.equal(first.status, 'failed');
    assert.equal(calls(), 2);
    assert.equal(store.reader.action('r', 'model:1.1')?.status, 'committed');
    assert.equal(store.reader.action('r', 'model:1.2')?.type, 'model.generate');
    crash = false;
    const second = await resumeRun(store, agent, 'r', quiet);
    assert.equal(second.status, 'completed', JSON.stringify(second.error));
    assert.equal(calls(), 2, 'no call bought again');
    assert.deepEqual(second.output, ['echo: one', 'echo: two', '2026-01-02T03:04:05.001Z']);
    assert.deepEqual(saved, { calls: 2, inputTokens: 200, outputTokens: 40, cost: (200 * 2 + 40 * 8) / 1e6 });
  });

  it('stops a resumed call whose prompt changed with a diff, before any new effect; rerun makes it again under a new key', async () => {
    const { model, calls } = scriptedModel((c) => [text(`echo: ${lastMessage(c)}`)]);
    let prompt = 'Refund order 42';
    let crash = true;
    const agent = (onDrift: 'fail' | 'rerun') =>
      defineAgent({
        name: 'drift',
        input: z.object({}),
        run: async (run) =>
          run.step('answer', async () => {
            const r = await generateText({
              model: logbookModel(run, model, { onDrift, reportReplays: false }),
              system: 'You are support.',
              prompt,
              maxRetries: 0,
            });
            if (crash) throw new Error('crash');
            return r.text;
          }),
      });
    await startRun(store, agent('fail'), { script: 'inline', input: {}, runId: 'd', ...quiet });
    crash = false;
    prompt = 'Refund order 43';
    const stopped = await resumeRun(store, agent('fail'), 'd', quiet);
    assert.equal(stopped.status, 'failed');
    assert.equal(stopped.error?.code, ErrorCodes.MODEL_DRIFT);
    assert.match(stopped.error?.message ?? '', /prompt\[1\] was +user: Refund order 42\n +prompt\[1\] is now +user: Refund order 43/);
    assert.match(stopped.error?.message ?? '', /Nothing new was executed/);
    assert.equal(calls(), 1, 'the model was not called');
    const rerun = await resumeRun(store, agent('rerun'), 'd', quiet);
    assert.equal(rerun.status, 'completed');
    assert.equal(rerun.output, 'echo: Refund order 43');
    assert.equal(calls(), 2);
    assert.equal(store.reader.action('d', 'model:1.1~1')?.status, 'committed');
  });

  it('keeps parallel calls in one step apart, and replays each with its own answer', async () => {
    const { model, calls } = scriptedModel((c) => [text(`answer to ${lastMessage(c)}`)]);
    let crash = true;
    const agent = defineAgent({
      name: 'parallel',
      input: z.object({}),
      run: async (run) =>
        run.step('fan out', async () => {
          const m = logbookModel(run, model, { reportReplays: false });
          const out = await Promise.all(['a', 'b', 'c'].map((p) => generateText({ model: m, prompt: p, maxRetries: 0 }).then((r) => r.text)));
          if (crash) throw new Error('crash');
          return out;
        }),
    });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'p', ...quiet });
    crash = false;
    const out = await resumeRun(store, agent, 'p', quiet);
    assert.deepEqual(out.output, ['answer to a', 'answer to b', 'answer to c']);
    assert.equal(calls(), 3);
    assert.deepEqual(
      ['model:1.1', 'model:1.2', 'model:1.3'].map((k) => store.reader.action('p', k)?.status),
      ['committed', 'committed', 'committed'],
    );
  });

  it('streams deltas live, holds finish until the call is committed, and replays the recorded parts', async () => {
    const { model, calls } = scriptedModel(() => [text('the refund is on its way')]);
    let crash = true;
    const statusAtFinish: Array<string | undefined> = [];
    let deltas = 0;
    const agent = defineAgent({
      name: 'stream',
      input: z.object({}),
      run: async (run) =>
        run.step('answer', async () => {
          const r = streamText({ model: logbookModel(run, model, { reportReplays: false }), prompt: 'refund?', maxRetries: 0 });
          for await (const part of r.fullStream) {
            if (part.type === 'text-delta') deltas++;
            if (part.type === 'finish-step') statusAtFinish.push(store.reader.action(run.id, 'model:1.1')?.status);
          }
          if (crash) throw new Error('crash');
          return r.text;
        }),
    });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 's', ...quiet });
    assert.deepEqual(statusAtFinish, ['committed'], 'finish reached the script only once the parts were durable');
    assert.equal(deltas, 6);
    crash = false;
    const out = await resumeRun(store, agent, 's', quiet);
    assert.equal(out.output, 'the refund is on its way');
    assert.equal(calls(), 1);
    assert.equal(deltas, 12, 'the replay re-emitted the recorded deltas');
  });

  it('a reader that stops early does not stop the call: it is read to the end and journaled', async () => {
    const { model, calls } = scriptedModel(() => [text('one two three four')]);
    const agent = defineAgent({
      name: 'early',
      input: z.object({}),
      run: (run) =>
        run.step('s', async () => {
          const r = streamText({ model: logbookModel(run, model, { reportReplays: false }), prompt: 'count', maxRetries: 0 });
          for await (const delta of r.textStream) return delta;
          return '';
        }),
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'early', ...quiet });
    assert.equal(out.output, 'one ');
    const row = store.reader.action('early', 'model:1.1');
    assert.equal(row?.status, 'committed');
    assert.equal((JSON.parse(row?.result ?? '{}') as { parts: Array<{ type: string }> }).parts.filter((p) => p.type === 'text-delta').length, 4);
    assert.equal(calls(), 1);
  });

  it('round-trips dates and bytes; a failed call is retried in its place; error parts replay as the same kind of error', async () => {
    let fail = true;
    const thrown = new APICallError({ message: 'overloaded', url: 'https://example.invalid', requestBodyValues: {}, statusCode: 529, isRetryable: false });
    const { model, calls } = scriptedModel(() => {
      if (fail) throw thrown;
      return [{ type: 'file', mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71, 0, 255]) }, text('here')];
    });
    const streamErr = new APICallError({ message: 'stream cut', url: 'https://example.invalid', requestBodyValues: {}, statusCode: 502, isRetryable: true });
    const streaming = new MockLanguageModelV3({
      provider: 'mock',
      modelId: 'cut',
      doStream: () =>
        Promise.resolve({
          stream: simulateReadableStream({
            chunks: [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'par' },
              { type: 'error', error: streamErr },
              { type: 'text-end', id: 't' },
              { type: 'finish', finishReason: { unified: 'error', raw: undefined }, usage: usage(1, 1) },
            ] as LanguageModelV3StreamPart[],
          }),
        }),
    });
    const seen: unknown[] = [];
    let crash = true;
    const agent = defineAgent({
      name: 'bytes',
      input: z.object({}),
      run: async (run) =>
        run.step('answer', async () => {
          const m = logbookModel(run, model, { reportReplays: false });
          if (fail) {
            try {
              await generateText({ model: m, prompt: 'draw', maxRetries: 0 });
            } catch (err) {
              seen.push(err);
            }
            fail = false;
          }
          const r = await generateText({ model: m, prompt: 'draw', maxRetries: 0 });
          const s = streamText({
            model: logbookModel(run, streaming, { reportReplays: false }),
            prompt: 'go',
            maxRetries: 0,
            onError: ({ error }) => void seen.push(error),
          });
          await s.consumeStream();
          if (crash) throw new Error('crash');
          return { bytes: [...r.files[0]!.uint8Array], at: r.response.timestamp.toISOString() };
        }),
    });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'b', ...quiet });
    assert.equal(seen[0], thrown, 'the model error reached the script as itself');
    assert.equal(store.reader.action('b', 'model:1.1')?.status, 'committed', "the retry of the same prompt took the failed call's place");
    assert.equal(store.reader.action('b', 'model:1.1')?.executions, 2);
    crash = false;
    const out = await resumeRun(store, agent, 'b', quiet);
    assert.deepEqual(out.output, { bytes: [137, 80, 78, 71, 0, 255], at: '2026-01-02T03:04:05.002Z' });
    assert.equal(calls(), 2);
    const replayed = seen[2];
    assert.notEqual(replayed, streamErr);
    assert.ok(APICallError.isInstance(replayed), 'the replayed error part is still an APICallError');
    assert.equal(replayed.statusCode, 502);
    assert.equal(replayed.message, 'stream cut');
  });

  it('runs tools as actions: a business key stops a re-made model call from repeating the effect', async () => {
    let n = 0;
    const { model, calls } = scriptedModel((c, i) =>
      c.prompt.some((m) => m.role === 'tool')
        ? [text('done')]
        : [toolCall('refund', { orderId: '42', amount: 30 }, `call-${i}`), toolCall('note', { text: 'x' }, `note-${i}`)],
    );
    const refunds: string[] = [];
    const notes: string[] = [];
    let prompt = 'refund 42';
    let crash = true;
    const agent = (onDrift: 'fail' | 'rerun') =>
      defineAgent({
        name: 'tools',
        input: z.object({}),
        run: async (run: RunApi) =>
          run.step('support', async () => {
            const tools = logbookTools(run, {
              refund: {
                tool: tool({
                  inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
                  execute: (a, o) => (refunds.push(`${a.orderId}:${o.toolCallId}`), { refundId: `rf-${++n}` }),
                }),
                effect: 'non-idempotent',
                key: (a: { orderId: string }) => `refund:${a.orderId}`,
              },
              note: { tool: tool({ inputSchema: z.object({ text: z.string() }), execute: (a) => (notes.push(a.text), 'ok') }), effect: 'idempotent' },
            });
            const r = await generateText({
              model: logbookModel(run, model, { onDrift, reportReplays: false }),
              tools,
              prompt,
              stopWhen: stepCountIs(4),
              maxRetries: 0,
            });
            if (crash) throw new Error('crash');
            return r.text;
          }),
      });
    await startRun(store, agent('fail'), { script: 'inline', input: {}, runId: 't', ...quiet });
    assert.equal(store.reader.action('t', 'refund:42')?.type, 'tool.refund');
    assert.equal(store.reader.action('t', 'tool:t:model:1.1:note-0')?.status, 'committed');
    crash = false;
    prompt = 'please refund 42';
    const out = await resumeRun(store, agent('rerun'), 't', quiet);
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    assert.equal(calls(), 4, 'both model calls made again under new keys');
    assert.deepEqual(refunds, ['42:call-0'], 'refunded once: the business key found the committed refund');
    assert.equal(notes.length, 2, 'the default key (model call + tool call id) ran the note again');
  });
});
