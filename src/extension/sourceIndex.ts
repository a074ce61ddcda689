// Finds run.step / run.do calls, and the AI SDK's model calls and tools entries, in an agent script's text, so journal
// entries map back to lines (no vscode here).

export interface StepSite {
  readonly line: number;
  readonly column: number;
  /** The name as written, e.g. `email ${r.email}`. */
  readonly source: string;
  /** Matches the step names this call produces (template holes match anything). */
  readonly regex: string;
}

export interface ActionSite {
  readonly line: number;
  readonly column: number;
  readonly type: string;
}

export interface SourceIndex {
  readonly steps: readonly StepSite[];
  readonly actions: readonly ActionSite[];
}

const DEFINE = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*defineAction\s*(?:<[^>]*>)?\s*\(\s*\{[\s\S]*?\btype\s*:\s*(['"`])([^'"`]+)\2/g;
const STEP = /\.step\s*\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;
const DO = /\.do\s*\(\s*([A-Za-z_$][\w$.]*)/g;

/** The AI SDK calls whose model calls `agent-logbook/ai` journals, and the action type each journals as. */
const MODEL_CALL = /\b(generateText|streamText)\s*\(/g;
const MODEL_TYPES: Record<string, string> = { generateText: 'model.generate', streamText: 'model.stream' };
const TOOLS_CALL = /\blogbookTools\s*\(/g;
const KEY = /(['"]?)([A-Za-z_$][\w$]*)\1\s*([:,})])/y;
/** How far past `logbookTools(` its object may reach: a miss only costs a decoration. */
const MAX_TOOLS_CHARS = 20_000;

/**
 * The entries of each `logbookTools(run, { … })` object, at their keys, with the action type each journals as: the
 * type of a `defineAction` given as `{ action }` (or as the entry itself), a `type` written in the entry, else
 * `tool.<name>` (the integration's default). A spread or a variable declares nothing here.
 */
function toolSites(text: string, types: ReadonlyMap<string, string>): Array<{ offset: number; type: string }> {
  const out: Array<{ offset: number; type: string }> = [];
  for (const m of text.matchAll(TOOLS_CALL)) {
    let depth = 0;
    const start = (m.index ?? 0) + m[0].length - 1;
    for (let i = start; i < Math.min(text.length, start + MAX_TOOLS_CHARS); i++) {
      const c = text[i] ?? '';
      if (c === '(' || c === '{' || c === '[') depth++;
      else if (c === ')' || c === '}' || c === ']') {
        if (--depth === 0) break;
      }
      if (depth !== 2 || !(c === '{' || c === ',')) continue;
      let j = i + 1;
      while (/\s/.test(text[j] ?? '')) j++;
      if (text.startsWith('...', j)) continue;
      KEY.lastIndex = j;
      const k = KEY.exec(text);
      if (!k?.[2]) continue;
      const name = k[2];
      let type = types.get(name) ?? `tool.${name}`;
      if (k[3] === ':') {
        let v = KEY.lastIndex;
        while (/\s/.test(text[v] ?? '')) v++;
        if (text[v] === '{') {
          const body = entryBody(text, v);
          const action = /\baction\s*:\s*([A-Za-z_$][\w$.]*)/.exec(body)?.[1]?.split('.').pop();
          const written = /\btype\s*:\s*(['"`])([^'"`]+)\1/.exec(body)?.[2];
          type = written ?? (action ? types.get(action) : undefined) ?? `tool.${name}`;
        } else {
          const ident = /^[A-Za-z_$][\w$.]*/.exec(text.slice(v))?.[0]?.split('.').pop();
          type = (ident ? types.get(ident) : undefined) ?? `tool.${name}`;
        }
      }
      out.push({ offset: j, type });
    }
  }
  return out;
}

/** The text of the object literal that opens at `open`, up to its closing brace. */
function entryBody(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '(' || c === '[') depth++;
    else if ((c === '}' || c === ')' || c === ']') && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `email ${r.email}` → ^email .*$ ; plain strings match exactly. */
export function stepNameRegex(source: string, quote: string): string {
  if (quote !== '`') return `^${escapeRe(source)}$`;
  const parts = source.split(/\$\{[^}]*\}/);
  return `^${parts.map(escapeRe).join('.*')}$`;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function position(starts: number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, column: offset - (starts[lo] ?? 0) };
}

export function indexSource(text: string): SourceIndex {
  const starts = lineStarts(text);
  const types = new Map<string, string>();
  for (const m of text.matchAll(DEFINE)) if (m[1] && m[3]) types.set(m[1], m[3]);
  const steps: StepSite[] = [];
  for (const m of text.matchAll(STEP)) {
    const at = position(starts, (m.index ?? 0) + 1);
    steps.push({ ...at, source: m[2] ?? '', regex: stepNameRegex(m[2] ?? '', m[1] ?? "'") });
  }
  const actions: ActionSite[] = [];
  for (const m of text.matchAll(DO)) {
    const ident = (m[1] ?? '').split('.').pop() ?? '';
    const type = types.get(ident);
    if (type) actions.push({ ...position(starts, (m.index ?? 0) + 1), type });
  }
  for (const m of text.matchAll(MODEL_CALL)) {
    const type = MODEL_TYPES[m[1] ?? ''];
    if (type) actions.push({ ...position(starts, m.index ?? 0), type });
  }
  for (const t of toolSites(text, types)) actions.push({ ...position(starts, t.offset), type: t.type });
  actions.sort((a, b) => a.line - b.line || a.column - b.column);
  return { steps, actions };
}

export function findStep(index: SourceIndex, name: string): StepSite | undefined {
  return index.steps.find((s) => new RegExp(s.regex).test(name));
}

export function findAction(index: SourceIndex, type: string): ActionSite | undefined {
  return index.actions.find((a) => a.type === type);
}

const DEFINE_AGENT = /\bdefineAgent\s*(?:<[^>(]*>)?\s*\(/g;

/** The lines where the text calls `defineAgent(`: a file with one is an agent script (one regex pass, no parse). */
export function agentLines(text: string): number[] {
  const starts = lineStarts(text);
  return [...text.matchAll(DEFINE_AGENT)].map((m) => position(starts, m.index ?? 0).line);
}
