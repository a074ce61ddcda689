// Finds run.step / run.do calls in an agent script's text, so journal entries map back to lines (no vscode here).

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
