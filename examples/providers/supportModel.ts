// A scripted language model for the support agent (the AI SDK's MockLanguageModelV3): offline, deterministic, billed.

import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { readState, writeState } from './store';

interface ModelState {
  /** Billed calls, one per idempotency key (the gateway answers a repeated key from its cache, unbilled). */
  billed: Array<{ key: string; tokens: number }>;
  cache: Record<string, LanguageModelV3Content[]>;
  cacheHits: number;
}

const FILE = 'support-model.json';
const load = (): ModelState => readState<ModelState>(FILE, { billed: [], cache: {}, cacheHits: 0 });
export const KEY_HEADER = 'x-idempotency-key';
export const MODEL_ID = 'support-scripted-1';

/** The tool results so far in the conversation, by tool name (the last one of each). */
function results(call: LanguageModelV3CallOptions): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of call.prompt) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) if (p.type === 'tool-result') out.set(p.toolName, p.output.type === 'json' ? p.output.value : p.output.type === 'content' ? p.output.value : (p.output as { value?: unknown }).value);
  }
  return out;
}

function userText(call: LanguageModelV3CallOptions): string {
  return call.prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')))
    .join(' ');
}

/** The script: look the order up (and the FAQ), refund it, email the customer and open a ticket, then answer. */
function answer(call: LanguageModelV3CallOptions, n: number): LanguageModelV3Content[] {
  const id = (i: number) => `call_${n}_${i}`;
  const tc = (i: number, toolName: string, input: unknown): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: id(i), toolName, input: JSON.stringify(input) });
  const text = (t: string): LanguageModelV3Content => ({ type: 'text', text: t });
  const user = userText(call);
  if (user.startsWith('Write the reply')) {
    return [text(`Hi! ${user.replace(/^Write the reply[^:]*:\s*/, '')} We are sorry about the trouble.`)];
  }
  const orderId = /[A-Z]-\d{4}/.exec(user)?.[0] ?? 'A-1001';
  const r = results(call);
  const order = r.get('lookupOrder') as { total?: number; email?: string } | undefined;
  if (!order) return [tc(1, 'lookupOrder', { orderId }), tc(2, 'search_faq', { query: 'refund for a broken item' })];
  if (!r.has('refund')) return [tc(1, 'refund', { orderId, amount: order.total ?? 0, reason: 'arrived broken' })];
  const refund = r.get('refund') as { refundId?: string; amount?: number } | string;
  if (typeof refund !== 'object' || !refund.refundId) return [text(`The refund for ${orderId} could not be made: ${JSON.stringify(refund)}.`)];
  if (!r.has('sendEmail')) {
    return [
      tc(1, 'sendEmail', { to: order.email ?? 'customer@example.com', subject: `Refund for ${orderId}`, body: `Your refund ${refund.refundId} of $${refund.amount} is on its way.` }),
      tc(2, 'open_ticket', { orderId, summary: `refunded ${refund.refundId}` }),
    ];
  }
  return [text(`Refunded ${orderId} (${refund.refundId}, $${refund.amount}), emailed the customer and opened a ticket.`)];
}

function bill(call: LanguageModelV3CallOptions): { content: LanguageModelV3Content[]; n: number } {
  const state = load();
  const key = call.headers?.[KEY_HEADER];
  const cached = key ? state.cache[key] : undefined;
  if (cached) {
    state.cacheHits++;
    writeState(FILE, state);
    return { content: cached, n: -1 };
  }
  const n = state.billed.length + 1;
  const content = answer(call, n);
  state.billed.push({ key: key ?? `unkeyed-${n}`, tokens: 250 + JSON.stringify(call.prompt).length / 4 });
  if (key) state.cache[key] = content;
  writeState(FILE, state);
  return { content, n };
}

const usage = (call: LanguageModelV3CallOptions, content: LanguageModelV3Content[]): LanguageModelV3GenerateResult['usage'] => {
  const input = Math.ceil(JSON.stringify(call.prompt).length / 4);
  const output = Math.ceil(JSON.stringify(content).length / 4);
  return { inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: output, text: output, reasoning: undefined } };
};

const finishReason = (content: LanguageModelV3Content[]): LanguageModelV3GenerateResult['finishReason'] => ({ unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined });

export function supportModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'scripted',
    modelId: MODEL_ID,
    doGenerate: (call) => {
      const { content } = bill(call);
      return Promise.resolve({ content, finishReason: finishReason(content), usage: usage(call, content), warnings: [] });
    },
    doStream: (call) => {
      const { content } = bill(call);
      const chunks: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const [i, c] of content.entries()) {
        if (c.type !== 'text') {
          chunks.push(c as LanguageModelV3StreamPart);
          continue;
        }
        chunks.push({ type: 'text-start', id: `t${i}` });
        for (const word of c.text.split(/(?<= )/)) chunks.push({ type: 'text-delta', id: `t${i}`, delta: word });
        chunks.push({ type: 'text-end', id: `t${i}` });
      }
      chunks.push({ type: 'finish', finishReason: finishReason(content), usage: usage(call, content) });
      const delay = Number(process.env.SUPPORT_MODEL_CHUNK_DELAY_MS ?? '0');
      const dieAfter = Number(process.env.SUPPORT_MODEL_DIE_AFTER_DELTAS ?? '0');
      if (dieAfter > 0) {
        // A crash mid-stream, for the tests: the process is SIGKILLed after that many deltas went out.
        let deltas = 0;
        const stream = simulateReadableStream({ chunks, chunkDelayInMs: delay }).pipeThrough(
          new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
            transform(part, ctl) {
              ctl.enqueue(part);
              if (part.type === 'text-delta' && ++deltas === dieAfter) setTimeout(() => process.kill(process.pid, 'SIGKILL'), 50);
            },
          }),
        );
        return Promise.resolve({ stream });
      }
      return Promise.resolve({ stream: simulateReadableStream({ chunks, chunkDelayInMs: delay }) });
    },
  });
}

export const supportModelRecord = load;
