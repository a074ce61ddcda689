// What a model call is asked (prompt, tools, settings), as journaled args, and a readable diff of two of them.

import { encode, sortKeys } from './codec';

/** The args a model call is journaled with: its place, the model, and every parameter that shapes the answer. */
export interface ModelCallArgs {
  readonly call: string;
  readonly model: string;
  readonly params: Record<string, unknown>;
}

/** Abort signals and headers do not change what the model is asked, so they are not part of the fingerprint. */
export function callParams(params: object): Record<string, unknown> {
  const { abortSignal: _signal, headers: _headers, ...rest } = params as Record<string, unknown>;
  return sortKeys(encode(rest)) as Record<string, unknown>;
}

const CLIP = 100;

export function clip(s: string, max = CLIP): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function show(v: unknown): string {
  return v === undefined ? '(none)' : clip(typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v));
}

/** A message as a person reads it: its role and its text, tool calls and tool results. */
export function messageText(m: unknown, max = CLIP): string {
  if (typeof m !== 'object' || m === null) return show(m);
  const msg = m as { role?: unknown; content?: unknown };
  const content = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : Array.isArray(msg.content) ? (msg.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((p) => {
    switch (p.type) {
      case 'text':
      case 'reasoning':
        return String(p.text);
      case 'tool-call':
        return `${String(p.toolName)}(${JSON.stringify(p.input)})`;
      case 'tool-result':
        return `${String(p.toolName)} → ${JSON.stringify(p.output)}`;
      default:
        return `[${String(p.type)}]`;
    }
  });
  return `${String(msg.role)}: ${clip(parts.join(' '), max)}`;
}

function toolsByName(tools: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (Array.isArray(tools)) for (const t of tools as Array<Record<string, unknown>>) map.set(String(t.name), JSON.stringify(t));
  return map;
}

/** What changed between the journaled call and this one, one line per difference, prompt first. */
export function diffCalls(before: ModelCallArgs, now: ModelCallArgs): string[] {
  const lines: string[] = [];
  if (before.model !== now.model) lines.push(`model: ${before.model} → ${now.model}`);
  const bp = Array.isArray(before.params.prompt) ? (before.params.prompt as unknown[]) : [];
  const np = Array.isArray(now.params.prompt) ? (now.params.prompt as unknown[]) : [];
  for (let i = 0; i < Math.max(bp.length, np.length); i++) {
    const b = bp[i];
    const n = np[i];
    if (b === undefined) lines.push(`prompt[${i}] added      ${messageText(n)}`);
    else if (n === undefined) lines.push(`prompt[${i}] removed    ${messageText(b)}`);
    else if (JSON.stringify(b) !== JSON.stringify(n)) {
      lines.push(`prompt[${i}] was        ${messageText(b)}`);
      lines.push(`prompt[${i}] is now     ${messageText(n)}`);
    }
  }
  const bt = toolsByName(before.params.tools);
  const nt = toolsByName(now.params.tools);
  for (const [name, def] of nt) {
    if (!bt.has(name)) lines.push(`tool ${name} added`);
    else if (bt.get(name) !== def) lines.push(`tool ${name} changed (description or input schema)`);
  }
  for (const name of bt.keys()) if (!nt.has(name)) lines.push(`tool ${name} removed`);
  const keys = new Set([...Object.keys(before.params), ...Object.keys(now.params)]);
  for (const k of [...keys].sort()) {
    if (k === 'prompt' || k === 'tools') continue;
    const b = before.params[k];
    const n = now.params[k];
    if (JSON.stringify(b) !== JSON.stringify(n)) lines.push(`${k}: ${show(b)} → ${show(n)}`);
  }
  return lines;
}
