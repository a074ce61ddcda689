// The AI integration's rows: a journaled model call and a journaled tool call against the bare AI SDK call.

import { generateText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { defineAgent, startRun, type Store } from '../src/runtime';
import { logbookModel, logbookTools } from '../src/ai';
import { nowUs } from './measure';

const model = (): MockLanguageModelV3 =>
  new MockLanguageModelV3({
    provider: 'bench',
    modelId: 'bench-1',
    doGenerate: {
      content: [{ type: 'text', text: 'The refund is on its way.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 8, text: 8, reasoning: undefined },
      },
      warnings: [],
    },
  });

const refundTool = tool({
  inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
  execute: (a) => ({ refundId: `re-${a.orderId}`, amount: a.amount }),
});

/** Per call in µs: generateText on the bare mock model, or through logbookModel inside a run's step. */
export async function modelCalls(store: Store, count: number, journaled: boolean): Promise<number[]> {
  const times: number[] = [];
  const call = async (m: Parameters<typeof generateText>[0]['model'], i: number): Promise<void> => {
    const t0 = nowUs();
    await generateText({ model: m, prompt: `Customer ${i} asks for a refund.`, maxRetries: 0 });
    times.push(nowUs() - t0);
  };
  if (!journaled) {
    const m = model();
    for (let i = 0; i < count; i++) await call(m, i);
    return times;
  }
  const agent = defineAgent({
    name: 'bench-ai-model',
    input: z.object({}),
    run: (run) =>
      run.step('calls', async () => {
        const m = logbookModel(run, model(), { reportReplays: false });
        for (let i = 0; i < count; i++) await call(m, i);
      }),
  });
  const out = await startRun(store, agent, { script: 'bench/aiRows.ts', input: {}, log: () => undefined, role: 'bench' });
  if (out.status !== 'completed') throw new Error(`bench run ${out.runId} ended ${out.status}: ${out.error?.message ?? ''}`);
  return times;
}

/**
 * Per call in µs: `sample()` (one measurement, untimed around it) made right after each bare generateText call, as
 * the engine makes its commit. The bench samples the model call's one transaction in raw SQL
 * (RawBracket.oneCommitSamples) and the fsync floor itself (F's 4 KiB overwrite + fsync, no SQLite) this way: on this
 * machine a commit, and the fsync alone, cost more after the process did something else for a while (the call's few
 * hundred µs of work, a timer's sleep) than back to back, as F is measured.
 */
export async function samplesAfterCalls(sample: () => number[], count: number): Promise<number[]> {
  const m = model();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    await generateText({ model: m, prompt: `Customer ${i} asks for a refund.`, maxRetries: 0 });
    times.push(...sample());
  }
  return times;
}

/** Per call in µs: a non-idempotent tool's execute as the AI SDK would call it, bare or through logbookTools. */
export async function toolCalls(store: Store, count: number, journaled: boolean): Promise<number[]> {
  const times: number[] = [];
  const call = async (t: typeof refundTool, i: number): Promise<void> => {
    const t0 = nowUs();
    await t.execute?.({ orderId: `A-${i}`, amount: 42 }, { toolCallId: `call-${i}`, messages: [] });
    times.push(nowUs() - t0);
  };
  if (!journaled) {
    for (let i = 0; i < count; i++) await call(refundTool, i);
    return times;
  }
  const agent = defineAgent({
    name: 'bench-ai-tool',
    input: z.object({}),
    run: (run) =>
      run.step('tools', async () => {
        const tools = logbookTools(run, { refund: { tool: refundTool, effect: 'non-idempotent', key: (a: { orderId: string }) => `refund:${a.orderId}` } });
        for (let i = 0; i < count; i++) await call(tools.refund as typeof refundTool, i);
      }),
  });
  const out = await startRun(store, agent, { script: 'bench/aiRows.ts', input: {}, log: () => undefined, role: 'bench' });
  if (out.status !== 'completed') throw new Error(`bench run ${out.runId} ended ${out.status}: ${out.error?.message ?? ''}`);
  return times;
}
