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
  return flat.length > max ? `${flat.slice(0, whole(flat, max - 1))}…` : flat;
}

/** An index moved back off the middle of a surrogate pair: a cut there would leave a lone surrogate, which the
 *  journal refuses (a drift error's lines are journaled with the run's error). */
function whole(s: string, at: number): number {
  const c = s.charCodeAt(at);
  return at > 0 && at < s.length && c >= 0xdc00 && c <= 0xdfff ? at - 1 : at;
}

function json(v: unknown): string {
  return v === undefined ? '(none)' : JSON.stringify(v);
}

/** Characters before the first difference that a diff line keeps, so the reader sees where the change sits. */
const BEFORE = 30;

/** Control characters made visible, so that a change in line breaks or tabs shows in a one-line diff. */
function visible(s: string): string {
  return s.replace(/[\r\n\t]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/**
 * The changed part of two texts, one line each: both cut at the same offset, a little before their first difference,
 * and clipped to `width` with an ellipsis at each cut end, so a change at character 9,000 of a 10 KB prompt shows on
 * both sides (where a plain clip of each would show two identical beginnings).
 */
export function changedParts(before: string, now: string, width = CLIP): [string, string] {
  const b = visible(before);
  const n = visible(now);
  let first = 0;
  while (first < b.length && first < n.length && b[first] === n[first]) first++;
  const start = first <= BEFORE ? 0 : whole(b, first - BEFORE);
  const cut = (s: string): string => {
    const end = start + width >= s.length ? s.length : whole(s, start + width - 1);
    return `${start > 0 ? '…' : ''}${s.slice(start, end)}${end < s.length ? '…' : ''}`;
  };
  return [cut(b), cut(n)];
}

/** A message as a person reads it: its role and its text, tool calls and tool results. */
export function messageText(m: unknown, max = CLIP): string {
  if (typeof m !== 'object' || m === null) return clip(json(m), max);
  const { role, body } = messageParts(m);
  return `${role}: ${clip(body, max)}`;
}

/** A message's role, and its parts as one text. */
function messageParts(m: object): { role: string; body: string } {
  const msg = m as { role?: unknown; content?: unknown };
  const content =
    typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : Array.isArray(msg.content) ? (msg.content as Array<Record<string, unknown>>) : [];
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
  return { role: String(msg.role), body: parts.join(' ') };
}

/** Two versions of a message, each as the changed part of its text after its role; of its JSON when the texts are the
 *  same (the change is in a field the text does not show, such as provider options). */
function changedMessages(b: unknown, n: unknown): [string, string] {
  const bt = typeof b === 'object' && b !== null ? messageParts(b) : undefined;
  const nt = typeof n === 'object' && n !== null ? messageParts(n) : undefined;
  if (bt && nt && bt.role === nt.role && bt.body !== nt.body) {
    const [x, y] = changedParts(bt.body, nt.body);
    return [`${bt.role}: ${x}`, `${nt.role}: ${y}`];
  }
  return changedParts(json(b), json(n));
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
      const [was, now] = changedMessages(b, n);
      lines.push(`prompt[${i}] was        ${was}`);
      lines.push(`prompt[${i}] is now     ${now}`);
    }
  }
  const bt = toolsByName(before.params.tools);
  const nt = toolsByName(now.params.tools);
  for (const [name, def] of nt) {
    if (!bt.has(name)) lines.push(`tool ${name} added`);
    else if (bt.get(name) !== def) {
      const [was, now] = changedParts(bt.get(name) ?? '', def);
      lines.push(`tool ${name} changed (description or input schema): ${was} → ${now}`);
    }
  }
  for (const name of bt.keys()) if (!nt.has(name)) lines.push(`tool ${name} removed`);
  const keys = new Set([...Object.keys(before.params), ...Object.keys(now.params)]);
  for (const k of [...keys].sort()) {
    if (k === 'prompt' || k === 'tools') continue;
    const b = before.params[k];
    const n = now.params[k];
    if (JSON.stringify(b) !== JSON.stringify(n)) {
      const [was, now] = changedParts(json(b), json(n));
      lines.push(`${k}: ${was} → ${now}`);
    }
  }
  return lines;
}
