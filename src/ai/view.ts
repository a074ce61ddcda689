// A journaled model call in a few lines (model, last messages, answer, tool calls, tokens) for the debugger's views.

import { clip, messageText } from './fingerprint';
import { jsonOrUndefined } from './codec';

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
  return typeof input === 'number' || typeof output === 'number'
    ? { input: typeof input === 'number' ? input : 0, output: typeof output === 'number' ? output : 0 }
    : undefined;
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

/** Tool actions by the convention logbookTools and logbookMcpTools name them: `tool.<name>`, `mcp.<server>.<tool>`. */
export function toolNameOf(type: string): string | undefined {
  if (type.startsWith('tool.')) return type.slice(5);
  if (type.startsWith('mcp.')) return type.slice(4);
  return undefined;
}

/** A journaled model or tool call in a few clipped lines: what the tree and the timeline show of it. */
export interface AiCallSummary {
  readonly kind: 'model' | 'tool';
  /** The model id (`provider/model`) or the tool's name. */
  readonly name: string;
  readonly lastMessages: string[];
  readonly text: string;
  readonly toolCalls: string[];
  readonly tokens: { readonly input: number; readonly output: number } | null;
  readonly finishReason: string | null;
  /** A tool's input and result, clipped; null for model calls. */
  readonly input: string | null;
  readonly output: string | null;
}

/** The summary of an action row's journaled args and result (JSON text), or undefined for an action of no AI call. */
export function aiCallSummary(type: string, argsJson: string, resultJson: string | null): AiCallSummary | undefined {
  const model = modelCallView(type, jsonOrUndefined(argsJson), jsonOrUndefined(resultJson));
  if (model) {
    return {
      kind: 'model',
      name: model.model,
      lastMessages: model.lastMessages,
      text: model.text,
      toolCalls: model.toolCalls,
      tokens: model.tokens ?? null,
      finishReason: model.finishReason ?? null,
      input: null,
      output: null,
    };
  }
  const tool = toolNameOf(type);
  if (tool === undefined) return undefined;
  return {
    kind: 'tool',
    name: tool,
    lastMessages: [],
    text: '',
    toolCalls: [],
    tokens: null,
    finishReason: null,
    input: clip(argsJson, TEXT),
    output: resultJson === null ? null : clip(resultJson, TEXT),
  };
}

/** One line for a tree row or a timeline bar: model, tokens and the answer's start; or tool(input) → result. */
export function aiCallLine(s: AiCallSummary): string {
  if (s.kind === 'tool') return `${s.name}(${clip(s.input ?? '', 60)})${s.output !== null ? ` → ${clip(s.output, 60)}` : ''}`;
  const tokens = s.tokens ? ` · ${s.tokens.input}→${s.tokens.output} tokens` : '';
  const answer = s.text ? ` · "${clip(s.text, 60)}"` : '';
  const tools = s.toolCalls.length ? ` · calls ${s.toolCalls.map((t) => t.replace(/\(.*$/s, '')).join(', ')}` : '';
  return `${s.name}${tokens}${answer}${tools}`;
}

const fence = (value: unknown): string => '```json\n' + JSON.stringify(value, null, 2).replace(/```/g, '`\u200b``') + '\n```';

/** A journaled model or tool call whole, as Markdown: every prompt message, the answer, its tool calls, then the raw JSON. */
export function aiCallMarkdown(a: {
  readonly id: string;
  readonly type: string;
  readonly args: string;
  readonly result: string | null;
  readonly error: string | null;
  readonly durationMs: number | null;
}): string {
  const args = jsonOrUndefined(a.args);
  const result = jsonOrUndefined(a.result);
  const out: string[] = [];
  const model = modelCallView(a.type, args, result);
  const took = a.durationMs === null ? 'not finished' : `${a.durationMs} ms`;
  if (model) {
    out.push(
      `# Model call \`${a.id}\``,
      '',
      `- model: \`${model.model}\``,
      `- action: ${a.type}`,
      `- tokens: ${model.tokens ? `${model.tokens.input} in, ${model.tokens.output} out` : 'not recorded'}`,
      `- finish reason: ${model.finishReason ?? 'none'}`,
      `- duration: ${took}`,
      '',
    );
    const prompt = (args as { params?: { prompt?: unknown } } | undefined)?.params?.prompt;
    const messages = Array.isArray(prompt) ? (prompt as unknown[]) : [];
    out.push(`## Prompt (${messages.length} message${messages.length === 1 ? '' : 's'})`, '');
    messages.forEach((m, i) => out.push(`### ${i + 1}. ${messageText(m, Number.MAX_SAFE_INTEGER)}`, ''));
    const r = (result ?? {}) as { content?: unknown; parts?: unknown };
    const parts = (Array.isArray(r.content) ? r.content : Array.isArray(r.parts) ? r.parts : []) as Array<Record<string, unknown>>;
    const text = parts.map((p) => (p.type === 'text' ? String(p.text) : p.type === 'text-delta' ? String(p.delta) : '')).join('');
    out.push('## Response', '', text || '_(no text)_', '');
    const calls = parts.filter((p) => p.type === 'tool-call');
    if (calls.length) {
      out.push('## Tool calls', '');
      for (const c of calls)
        out.push(`- \`${String(c.toolName)}\` (${String(c.toolCallId)}): \`${typeof c.input === 'string' ? c.input : JSON.stringify(c.input)}\``);
      out.push('');
    }
  } else {
    const tool = toolNameOf(a.type) ?? a.type;
    out.push(`# Tool call \`${tool}\``, '', `- action: ${a.type}`, `- idempotency key: \`${a.id}\``, `- duration: ${took}`, '');
  }
  out.push('## Journaled args', '', fence(args ?? a.args), '');
  if (a.result !== null) out.push('## Journaled result', '', fence(result ?? a.result), '');
  if (a.error !== null) out.push('## Error', '', fence(jsonOrUndefined(a.error) ?? a.error), '');
  return out.join('\n');
}
