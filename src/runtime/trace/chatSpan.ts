// A model call's attributes (chat, GenAI conventions): model, response, token usage, finish reason, and the prompt and
// answer when content capture is on (masked); and the tool call ids it chose, which name the tools' spans.

import type { ActionRow } from '../store';
import type { SecretMask } from '../../shared/secrets';
import { num, str } from './journalWalk';
import type { Attrs } from './spanTypes';

export const MODEL_TYPES = new Set(['model.generate', 'model.stream']);

export function jsonOf(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A token count as AI SDK 5 (a number) or 6+ (`{ total }`) records it. */
function tokens(v: unknown): number | undefined {
  return num(v) ?? num((v as { total?: unknown } | null | undefined)?.total);
}

function finishReason(v: unknown): string | undefined {
  return str(v) ?? str((v as { unified?: unknown } | null | undefined)?.unified);
}

/** What a model call's journaled result says: usage, finish reason, response id and model, tool call ids, content. */
function modelResult(type: string, result: unknown): { usage: unknown; finish: unknown; response: unknown; toolCallIds: string[]; content: unknown } {
  const toolCallIds: string[] = [];
  const list = Array.isArray(result) ? result : (result as { parts?: unknown } | null | undefined)?.parts;
  if (type === 'model.stream' && Array.isArray(list)) {
    const parts = list as Array<Record<string, unknown>>;
    const finish = parts.find((p) => p?.type === 'finish');
    const meta = parts.find((p) => p?.type === 'response-metadata');
    for (const p of parts) if (p?.type === 'tool-call' && typeof p.toolCallId === 'string') toolCallIds.push(p.toolCallId);
    const text = parts
      .filter((p) => p?.type === 'text-delta')
      .map((p) => str(p.delta) ?? str(p.textDelta) ?? '')
      .join('');
    return { usage: finish?.usage, finish: finish?.finishReason, response: meta, toolCallIds, content: text };
  }
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  if (Array.isArray(r.content))
    for (const p of r.content as Array<Record<string, unknown>>)
      if (p?.type === 'tool-call' && typeof p.toolCallId === 'string') toolCallIds.push(p.toolCallId);
  return { usage: r.usage, finish: r.finishReason, response: r.response, toolCallIds, content: r.content };
}

/** The tool call ids each model call chose (tool call id → the model call's action id). */
export function toolCallsOf(rows: Iterable<ActionRow>): Map<string, string> {
  const toolCalls = new Map<string, string>();
  for (const row of rows) {
    if (!MODEL_TYPES.has(row.type)) continue;
    for (const tc of modelResult(row.type, jsonOf(row.result)).toolCallIds) toolCalls.set(tc, row.id);
  }
  return toolCalls;
}

/** A model call's span name and chat attributes; `mask` set means content is captured (masked by it). */
export function chatAttributes(type: string, row: ActionRow | undefined, actionId: string, mask: SecretMask | undefined): { name: string; attrs: Attrs } {
  const args = (jsonOf(row?.args ?? null) ?? {}) as Record<string, unknown>;
  const model = str(args.model) ?? 'model';
  const r = modelResult(type, jsonOf(row?.result ?? null));
  const usage = (r.usage ?? {}) as Record<string, unknown>;
  const input = tokens(usage.inputTokens) ?? tokens(usage.promptTokens);
  const output = tokens(usage.outputTokens) ?? tokens(usage.completionTokens);
  const finish = finishReason(r.finish);
  const response = (r.response ?? {}) as Record<string, unknown>;
  const attrs: Attrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': model,
    ...(str(response.modelId) ? { 'gen_ai.response.model': str(response.modelId) ?? '' } : {}),
    ...(str(response.id) ? { 'gen_ai.response.id': str(response.id) ?? '' } : {}),
    ...(input !== undefined ? { 'gen_ai.usage.input_tokens': input } : {}),
    ...(output !== undefined ? { 'gen_ai.usage.output_tokens': output } : {}),
    ...(finish ? { 'gen_ai.response.finish_reasons': [finish] } : {}),
    'logbook.model.call': str(args.call) ?? actionId,
  };
  if (mask) {
    const params = (args.params ?? {}) as Record<string, unknown>;
    if (params.prompt !== undefined) attrs['gen_ai.input.messages'] = mask.text(JSON.stringify(mask.deep(params.prompt)));
    if (r.content !== undefined) attrs['gen_ai.output.messages'] = mask.text(JSON.stringify(mask.deep(r.content)));
  }
  return { name: `chat ${model}`, attrs };
}
