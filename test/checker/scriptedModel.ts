// The checker's scripted mock model (AI SDK's MockLanguageModelV3), shared by the step kinds that drive one model turn
// (ai: agent-logbook/ai; agents: the OpenAI Agents SDK): it calls the step's actions as tools, then reports their results.

import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import type { StepContext } from './steps';

/** A tool result part of the prompt, as the model reads it back. */
export type ToolResultPart = Extract<LanguageModelV3CallOptions['prompt'][number], { role: 'tool' }>['content'][number];

/**
 * The model's answer is a function of its prompt only, so a call made again after a crash answers the same: first the
 * tool calls (one per call of the step, in one response, which the SDK runs in parallel), then a text that reports
 * what the tools returned (each result as `said` words it), as a model telling its user would.
 */
function answer(c: StepContext, call: LanguageModelV3CallOptions, said: (part: ToolResultPart) => unknown): LanguageModelV3Content[] {
  const results = call.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  if (results.length > 0) return [{ type: 'text', text: JSON.stringify(results.map(said)) }];
  return c.calls.map((k, i): LanguageModelV3Content => ({ type: 'tool-call', toolCallId: `c${i}`, toolName: `t${i}`, input: JSON.stringify(c.args(k.n)) }));
}

/** A mock model named `modelId` that plays the step's calls as tools `t0`, `t1`…, then reports them with `said`. */
export function scriptedModel(c: StepContext, modelId: string, said: (part: ToolResultPart) => unknown): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'checker',
    modelId,
    doGenerate: (call): Promise<LanguageModelV3GenerateResult> => {
      const content = answer(c, call, said);
      return Promise.resolve({
        content,
        finishReason: { unified: content.some((x) => x.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        response: { id: 'resp', modelId, timestamp: new Date(Date.UTC(2026, 0, 1)) },
        warnings: [],
      });
    },
  });
}
