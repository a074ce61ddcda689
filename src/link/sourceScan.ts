// Reads an agent script's text for debugger positions: breakable run.step/run.do/run.sleep lines, the run function, actions.

export type BreakKind = 'step' | 'action' | 'both';

function runParamNames(text: string): Set<string> {
  const names = new Set(['run']);
  for (const m of text.matchAll(/\brun\s*(?::\s*(?:async\s*)?(?:function\s*)?)?\(\s*([A-Za-z_$][\w$]*)\s*[,):]/g)) if (m[1]) names.add(m[1]);
  return names;
}

function isComment(line: string): boolean {
  const t = line.trimStart();
  return t.startsWith('//') || t.startsWith('*') || t.startsWith('/*');
}

/**
 * A LangGraph graph's steps and actions (agent-logbook/langgraph): a node's `.addNode(` line stands for its steps,
 * and a `logbookDo(` line inside a node for its action.
 */
const GRAPH_CALL = /(\.\s*addNode|\blogbookDo)\s*(?:<[^>\n]*>)?\s*\(/g;

/** 1-based lines holding a `run.step(`, `run.sleep(`, `run.waitFor(` or `run.do(` call (or the same through the run parameter's own
 *  name; a sleep is a step), or a LangGraph node's `.addNode(` or a `logbookDo(` call. */
// run.waitFor is a step of its own (it stops at its step boundary, and the debugger's event-wait filter stops there).
export function breakableLines(text: string): Map<number, BreakKind> {
  const names = [...runParamNames(text)].map((n) => n.replace(/\$/g, '\\$')).join('|');
  const call = new RegExp(`\\b(?:${names})\\s*\\.\\s*(step|do|sleep|waitFor)\\s*(?:<[^>\\n]*>)?\\s*\\(`, 'g');
  const out = new Map<number, BreakKind>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (isComment(line)) return;
    let kind: BreakKind | undefined;
    for (const m of line.matchAll(call)) {
      const k: BreakKind = m[1] === 'do' ? 'action' : 'step';
      kind = kind === undefined || kind === k ? k : 'both';
    }
    for (const m of line.matchAll(GRAPH_CALL)) {
      const k: BreakKind = m[1]?.endsWith('addNode') ? 'step' : 'action';
      kind = kind === undefined || kind === k ? k : 'both';
    }
    if (kind) out.set(i + 1, kind);
  });
  return out;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** The line of the agent's `run` function (the run frame), else of defineAgent, else 1. */
export function runFunctionLine(text: string): number {
  const agent = text.search(/\bdefineAgent\s*\(/);
  const from = agent < 0 ? 0 : agent;
  const re = /\b(?:async\s+)?run\s*(?:\(|:\s*(?:async\s*)?(?:function\s*)?\()/g;
  re.lastIndex = from;
  const m = re.exec(text);
  if (m) return lineOf(text, m.index);
  return agent < 0 ? 1 : lineOf(text, agent);
}

/** Where an action type is defined, and its `compensate` inverse (for frames during compensation). */
export function actionLines(text: string, type: string): { typeLine: number; compensateLine?: number } | undefined {
  const quoted = [`'${type}'`, `"${type}"`, `\`${type}\``];
  const re = /\btype\s*:\s*/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const after = text.slice(m.index + m[0].length);
    if (!quoted.some((q) => after.startsWith(q))) continue;
    const typeLine = lineOf(text, m.index);
    const next = text.slice(m.index + m[0].length).search(/\bdefineAction\s*\(/);
    const body = next < 0 ? after : after.slice(0, next);
    const c = body.search(/\bcompensate\s*[:(]/);
    return c < 0 ? { typeLine } : { typeLine, compensateLine: lineOf(text, m.index + m[0].length + c) };
  }
  return undefined;
}
