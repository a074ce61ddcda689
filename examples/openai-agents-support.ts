// Example: a support agent on the OpenAI Agents SDK, made durable by agent-logbook/openai-agents.
//
// A customer asks for a refund. The agent looks the order up (read-only), refunds it (non-idempotent, verified by its
// reference, keyed by the order; a refund over 100 needs a person's approval: the SDK's needsApproval pauses its run,
// whose state the journal keeps until `logbook approve`) and emails the customer (non-idempotent, verified by key); a
// second step streams the reply. Offline it talks to a scripted model (ai@6's MockLanguageModelV3 through aisdk());
// with OPENAI_API_KEY set, to OpenAI (AGENTS_MODEL, default gpt-4.1-mini).
//
//   npx logbook run examples/openai-agents-support.ts --run-id big --input '{"orderId":"A-1002"}'   # waits (exit 3)
//   npx logbook approve big approval:refund:big:A-1002      # approves, and resumes from the kept state

import { Agent, OpenAIProvider, Runner, type ModelProvider } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { defineAgent } from 'agent-logbook';
import { logbookAgentsTool, logbookModelProvider, logbookRunAgent } from 'agent-logbook/openai-agents';
import { outbox } from './providers/outbox';
import { shop } from './providers/shop';
import { readState, writeState } from './providers/store';

const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 20, text: 20, reasoning: undefined } };

/** Every call the scripted model is paid for, in order: a call made twice would show here twice. */
function bill(kind: string): void {
  const s = readState<{ billed: string[] }>('agents-model.json', { billed: [] });
  s.billed.push(kind);
  writeState('agents-model.json', s);
}

/** The scripted model: look up, refund, email, then say it is done; a streamed call writes the customer's reply. */
function answer(call: LanguageModelV3CallOptions): LanguageModelV3Content[] {
  const results = call.prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).filter((p) => p.type === 'tool-result');
  const orderId = /A-\d+/.exec(JSON.stringify(call.prompt))?.[0] ?? 'A-1001';
  const last = results[results.length - 1];
  const out = (last?.output as { value?: unknown } | undefined)?.value;
  const toolCall = (toolName: string, input: unknown): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: `call-${results.length + 1}`, toolName, input: JSON.stringify(input) });
  if (JSON.stringify(call.prompt).includes('Write the reply')) return [{ type: 'text', text: `Hi! Your order ${orderId} is refunded; a confirmation email is on its way.` }];
  if (results.length === 0) return [toolCall('lookupOrder', { orderId })];
  if (results.length === 1) {
    const order = (typeof out === 'string' ? JSON.parse(out) : out) as { total?: number } | undefined;
    return [toolCall('refund', { orderId, amount: order?.total ?? 0, reason: 'arrived broken' })];
  }
  if (results.length === 2) return [toolCall('sendEmail', { to: 'customer@example.com', subject: `Refund for ${orderId}`, body: 'Your refund is on its way.' })];
  return [{ type: 'text', text: `Resolved ${orderId}: refunded and emailed.` }];
}

/** For the crash tests: a real SIGKILL of this process in the middle of a model call or of a tool call. */
function dieIf(where: string): void {
  if (process.env.AGENTS_DIE_IN === where) process.kill(process.pid, 'SIGKILL');
}

const scripted = new MockLanguageModelV3({
  provider: 'mock',
  modelId: 'agents-support-1',
  doGenerate: (call) => {
    bill('generate');
    if (call.prompt.some((m) => m.role === 'tool')) dieIf('model');
    const content = answer(call);
    return Promise.resolve({ content, finishReason: { unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] });
  },
  doStream: (call) => {
    bill('stream');
    const chunks: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }];
    for (const c of answer(call)) if (c.type === 'text') for (const w of c.text.split(/(?<= )/)) chunks.push({ type: 'text-delta', id: 't', delta: w });
    chunks.push({ type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage });
    // Killed mid-stream: the reply's first words have gone out, the rest never comes.
    const stream = simulateReadableStream({ chunks, chunkDelayInMs: Number(process.env.AGENTS_CHUNK_DELAY_MS ?? '0') }).pipeThrough(
      new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
        transform: (part, out) => {
          if (part.type === 'text-delta' && part.delta.startsWith('refunded')) dieIf('stream');
          out.enqueue(part);
        },
      }),
    );
    return Promise.resolve({ stream });
  },
});

/** Offline by default; OpenAI when the user sets an API key. */
function provider(): ModelProvider {
  if (process.env.OPENAI_API_KEY) return new OpenAIProvider();
  return { getModel: () => aisdk(scripted) };
}
const MODEL = process.env.OPENAI_API_KEY ? (process.env.AGENTS_MODEL ?? 'gpt-4.1-mini') : 'scripted';

export default defineAgent({
  name: 'openai-agents-support',
  input: z.object({ orderId: z.string().default('A-1001') }),
  async run(run, input) {
    const runner = new Runner({ modelProvider: logbookModelProvider(run, provider()), tracingDisabled: true });
    const tools = () => [
      logbookAgentsTool(run, {
        name: 'lookupOrder',
        description: 'Look an order up by its id (A-1234): customer, item, total.',
        parameters: z.object({ orderId: z.string() }),
        effect: 'read-only',
        execute: (a) => shop.lookup(a.orderId),
      }),
      logbookAgentsTool(run, {
        name: 'refund',
        description: 'Refund an order to the card it was paid with.',
        parameters: z.object({ orderId: z.string(), amount: z.number(), reason: z.string() }),
        effect: 'non-idempotent',
        key: (a) => `refund:${run.id}:${a.orderId}`,
        execute: (a, ctx) => {
          const refunded = shop.refund({ orderId: a.orderId, amount: a.amount, reference: ctx.idempotencyKey });
          dieIf('refund'); // after the processor refunded, before the journal heard of it
          return refunded;
        },
        verify: (_a, ctx) => shop.findRefund(ctx.idempotencyKey),
        // The SDK's conditional approval: refunds over 100 wait for `logbook approve`.
        needsApproval: (_ctx, a) => Promise.resolve(a.amount > 100),
      }),
      logbookAgentsTool(run, {
        name: 'sendEmail',
        description: 'Email the customer.',
        parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
        effect: 'non-idempotent',
        key: (a) => `email:${run.id}:${a.subject}`,
        execute: (a, ctx) => outbox.send({ to: a.to, body: `${a.subject}\n\n${a.body}`, idempotencyKey: ctx.idempotencyKey }),
        verify: (_a, ctx) => outbox.find(ctx.idempotencyKey),
      }),
    ];
    // The SDK's run as steps: `resolve` to its end, or to the refund's approval (its paused state journaled), then
    // `resolve: approval` and `resolve: resume 1`.
    const agent = new Agent({ name: 'support', model: MODEL, instructions: 'Look the order up, refund broken items in full, email the customer.', tools: tools() });
    const resolved = String((await logbookRunAgent(run, runner, agent, `Order ${input.orderId} arrived broken. Please refund it.`, { name: 'resolve' })).finalOutput);
    return run.step('reply', async () => {
      const writer = new Agent({ name: 'writer', model: MODEL, instructions: 'Write the reply to the customer.' });
      const s = await runner.run(writer, `Write the reply for: ${resolved}`, { stream: true });
      for await (const _event of s) {
        // the reply streams here; the step's result is its final text
      }
      await s.completed;
      return { resolved, reply: String(s.finalOutput) };
    });
  },
  // What the outside world recorded, for `logbook rehearse`: an effect made twice shows as a repeated key.
  probe: () => ({
    'tool.refund': shop.record().refunds.map((r) => r.reference),
    'tool.sendEmail': outbox.record().sent.map((m) => m.key),
  }),
});
