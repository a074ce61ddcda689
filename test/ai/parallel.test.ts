// Parallelism inside an AI step: tool calls the SDK runs together, and agent loops side by side. What replays without
// drift (parallel tool calls; loops in their own steps), and what the drift check stops (loops sharing one step whose
// calls start in another order on resume).

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { ErrorCodes, defineAgent, openStore, resumeRun, startRun, type RunApi, type Store } from '../../src/runtime';
import { logbookModel, logbookTools } from '../../src/ai';
import { tmpDir } from '../helpers';
import { lastMessage, scriptedModel, text, toolCall } from './mock';

const quiet = { log: () => undefined };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A loop's model: the first call asks for its tool, the second answers with what the tool said. */
function loopModel() {
  return scriptedModel((c) => {
    const user = c.prompt.find((m) => m.role === 'user');
    const who = user && Array.isArray(user.content) && user.content[0]?.type === 'text' ? user.content[0].text : '?';
    return c.prompt.some((m) => m.role === 'tool') ? [text(`${who}: ${lastMessage(c)}`)] : [toolCall('fetch', { who }, `f-${who}`)];
  });
}

describe('ai: parallel model calls and tool calls in a step', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('tool calls the SDK runs in parallel (finishing in another order than they started) replay without drift', async () => {
    const { model, calls } = scriptedModel((c, i) =>
      c.prompt.some((m) => m.role === 'tool')
        ? [text(`done: ${lastMessage(c)}`)]
        : [toolCall('slow', { n: 1 }, `s-${i}`), toolCall('fast', { n: 2 }, `q-${i}`), toolCall('slow', { n: 3 }, `t-${i}`)],
    );
    const executed: string[] = [];
    let crash = true;
    const agent = defineAgent({
      name: 'parallel-tools',
      input: z.object({}),
      run: (run: RunApi) =>
        run.step('answer', async () => {
          const tools = logbookTools(run, {
            slow: {
              tool: tool({
                inputSchema: z.object({ n: z.number() }),
                execute: async (a) => (await sleep(30 - a.n * 5), executed.push(`slow ${a.n}`), a.n * 10),
              }),
              effect: 'non-idempotent',
              key: (a: { n: number }) => `slow:${a.n}`,
            },
            fast: { tool: tool({ inputSchema: z.object({ n: z.number() }), execute: (a) => (executed.push(`fast ${a.n}`), a.n * 10) }), effect: 'idempotent' },
          });
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false }),
            tools,
            prompt: 'go',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
          if (crash) throw new Error('crash after the loop');
          return r.text;
        }),
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'pt', ...quiet });
    assert.equal(first.status, 'failed');
    assert.deepEqual(executed, ['fast 2', 'slow 3', 'slow 1'], 'the three ran together and finished out of order');
    crash = false;
    const out = await resumeRun(store, agent, 'pt', quiet);
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    assert.equal(calls(), 2, 'no model call bought again');
    assert.deepEqual(executed, ['fast 2', 'slow 3', 'slow 1'], 'no tool ran again');
    assert.match(String(out.output), /^done: /);
  });

  it('agent loops side by side, each in its own step, replay without drift whatever order their calls start in', async () => {
    const { model, calls } = loopModel();
    let attempt = 0;
    const delays: Record<string, number[]> = { ann: [5, 40], bob: [40, 5] };
    const agent = defineAgent({
      name: 'parallel-loops',
      input: z.object({}),
      run: async (run: RunApi) => {
        attempt++;
        const loop = (who: string) =>
          run.step(`loop ${who}`, async () => {
            const tools = logbookTools(run, {
              fetch: {
                tool: tool({
                  inputSchema: z.object({ who: z.string() }),
                  execute: async (a) => (await sleep(delays[a.who]![attempt - 1] ?? 1), `data of ${a.who}`),
                }),
                effect: 'read-only',
              },
            });
            const r = await generateText({
              model: logbookModel(run, model, { reportReplays: false }),
              tools,
              prompt: who,
              stopWhen: stepCountIs(3),
              maxRetries: 0,
            });
            if (attempt === 1 && who === 'bob') throw new Error('crash in bob');
            return r.text;
          });
        return Promise.all([loop('ann'), loop('bob')]);
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'pl', ...quiet });
    assert.equal(first.status, 'failed');
    assert.equal(calls(), 4);
    const out = await resumeRun(store, agent, 'pl', quiet);
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    assert.deepEqual(out.output, ['ann: {"type":"text","value":"data of ann"}', 'bob: {"type":"text","value":"data of bob"}']);
    assert.equal(calls(), 4, "bob's two calls came from the journal, ann's step from its checkpoint");
  });

  it('loops sharing one step whose calls start in another order on resume: the drift check stops it before any new call', async () => {
    const { model, calls } = loopModel();
    let attempt = 0;
    // First attempt: ann's tool is fast, so ann's second call is model:1.3; on resume bob's is.
    const delays: Record<string, number[]> = { ann: [5, 40], bob: [40, 5] };
    const agent = defineAgent({
      name: 'shared-step',
      input: z.object({}),
      run: (run: RunApi) =>
        run.step('both loops', async () => {
          attempt++;
          const m = logbookModel(run, model, { reportReplays: false });
          const loop = async (who: string) => {
            const tools = logbookTools(run, {
              fetch: {
                tool: tool({
                  inputSchema: z.object({ who: z.string() }),
                  execute: async (a) => (await sleep(delays[a.who]![attempt - 1] ?? 1), `data of ${a.who}`),
                }),
                effect: 'idempotent',
                key: (a: { who: string }) => `fetch:${a.who}:${attempt}`,
              },
            });
            return (await generateText({ model: m, tools, prompt: who, stopWhen: stepCountIs(3), maxRetries: 0 })).text;
          };
          const out = await Promise.all([loop('ann'), loop('bob')]);
          if (attempt === 1) throw new Error('crash after both loops');
          return out;
        }),
    });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'ss', ...quiet });
    assert.equal(calls(), 4);
    const out = await resumeRun(store, agent, 'ss', quiet);
    assert.equal(out.status, 'failed');
    assert.equal(out.error?.code, ErrorCodes.MODEL_DRIFT, JSON.stringify(out.error));
    assert.match(out.error?.message ?? '', /Model call model:1\.3 .* no longer matches/);
    assert.equal(calls(), 4, 'nothing was bought: the run stopped at the first call that did not match');
  });
});
