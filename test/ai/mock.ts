// Scripted mock models for the AI integration tests: answers in order, counting what the provider was asked.

import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

export const usage = (input: number, output: number): LanguageModelV3GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

export const text = (t: string): LanguageModelV3Content => ({ type: 'text', text: t });
export const toolCall = (toolName: string, input: unknown, toolCallId: string): LanguageModelV3Content => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});

export type Answer = (call: LanguageModelV3CallOptions, n: number) => LanguageModelV3Content[];

/** The last user or tool message of a prompt, as text: what a scripted answer usually looks at. */
export function lastMessage(call: LanguageModelV3CallOptions): string {
  const m = call.prompt[call.prompt.length - 1];
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  return m.content.map((p) => ('text' in p ? p.text : 'output' in p ? JSON.stringify(p.output) : p.type)).join(' ');
}

/** A model that answers by `answer` (generate and stream), counting the calls it was paid for. */
export function scriptedModel(answer: Answer, modelId = 'scripted-1') {
  let calls = 0;
  const result = (call: LanguageModelV3CallOptions): LanguageModelV3GenerateResult => {
    const content = answer(call, calls++);
    return {
      content,
      finishReason: { unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
      usage: usage(100, 20),
      response: { id: `resp-${calls}`, modelId, timestamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, calls)) },
      warnings: [],
    };
  };
  const model = new MockLanguageModelV3({
    provider: 'mock',
    modelId,
    doGenerate: (call) => Promise.resolve(result(call)),
    doStream: (call) => {
      const r = result(call);
      const chunks: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const [i, c] of r.content.entries()) {
        if (c.type === 'text') {
          chunks.push({ type: 'text-start', id: `t${i}` });
          for (const word of c.text.split(/(?<= )/)) chunks.push({ type: 'text-delta', id: `t${i}`, delta: word });
          chunks.push({ type: 'text-end', id: `t${i}` });
        } else chunks.push(c as LanguageModelV3StreamPart);
      }
      chunks.push({ type: 'finish', finishReason: r.finishReason, usage: r.usage });
      return Promise.resolve({ stream: simulateReadableStream({ chunks }) });
    },
  });
  return { model, calls: () => calls };
}
