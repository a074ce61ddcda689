// A journaled model call in a few lines (model, last messages, answer, tool calls, tokens) for the debugger's views.

import { clip, messageText } from './fingerprint';

export interface ModelCallView {
  readonly model: string;
  /** The prompt's last messages, each clipped; the whole prompt stays in the action's args. */
  readonly lastMessages: string[];
  readonly text: string;
  readonly toolCalls: string[];
  readonly tokens?: { readonly input: number; readonly output: number };
  readonly finishReason?: string;
}

export const MODEL_CALL_TYPES: readonly string[] = ['model.generate', 'model.stream'];
const LAST = 3;
const TEXT = 300;

type Part = { type?: unknown; text?: unknown; delta?: unknown; toolName?: unknown; input?: unknown; usage?: unknown; finishReason?: unknown };

function usageOf(u: unknown): { input: number; output: number } | undefined {
  const x = u as { inputTokens?: { total?: unknown }; outputTokens?: { total?: unknown } } | undefined;
  const input = x?.inputTokens?.total;
  const output = x?.outputTokens?.total;
  return typeof input === 'number' || typeof output === 'number' ? { input: typeof input === 'number' ? input : 0, output: typeof output === 'number' ? output : 0 } : undefined;
}

function reasonOf(r: unknown): string | undefined {
  if (typeof r === 'string') return r;
  const u = (r as { unified?: unknown } | undefined)?.unified;
  return typeof u === 'string' ? u : undefined;
}

/** The view of a model.generate / model.stream action from its journaled args and result (undefined for others). */
export function modelCallView(type: string, args: unknown, result: unknown): ModelCallView | undefined {
  if (!MODEL_CALL_TYPES.includes(type)) return undefined;
  const a = (args ?? {}) as { model?: unknown; params?: { prompt?: unknown } };
  const prompt = Array.isArray(a.params?.prompt) ? (a.params.prompt as unknown[]) : [];
  const r = (result ?? {}) as { content?: unknown; parts?: unknown; usage?: unknown; finishReason?: unknown };
  const parts = (Array.isArray(r.content) ? r.content : Array.isArray(r.parts) ? r.parts : []) as Part[];
  let text = '';
  const toolCalls: string[] = [];
  let usage = usageOf(r.usage);
  let finishReason = reasonOf(r.finishReason);
  for (const p of parts) {
    if (p.type === 'text' && typeof p.text === 'string') text += p.text;
    else if (p.type === 'text-delta' && typeof p.delta === 'string') text += p.delta;
    else if (p.type === 'tool-call') toolCalls.push(`${String(p.toolName)}(${clip(typeof p.input === 'string' ? p.input : JSON.stringify(p.input), 120)})`);
    else if (p.type === 'finish') {
      usage ??= usageOf(p.usage);
      finishReason ??= reasonOf(p.finishReason);
    }
  }
  return {
    model: typeof a.model === 'string' ? a.model : '?',
    lastMessages: prompt.slice(-LAST).map((m) => messageText(m, 160)),
    text: clip(text, TEXT),
    toolCalls,
    ...(usage ? { tokens: usage } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}
