// Where the user's code asked for a model or tool call: the line the debugger shows for its action (docs/integrations.md).

import { AsyncLocalStorage } from 'node:async_hooks';
import * as fs from 'node:fs';
import { callSite, type SourceLocation } from 'agent-logbook';

/** The user's generateText / streamText line, noted when the SDK entered the model, for work the SDK detaches. */
const entered = new AsyncLocalStorage<SourceLocation>();

/**
 * Called synchronously inside the user's generateText / streamText (the SDK reads the model's spec version there):
 * streamText makes its model calls from a task the caller does not await, whose stack no longer has the user's
 * line, but which inherits the async context of this moment.
 */
export function noteEntry(): void {
  const at = callSite();
  if (at) entered.enterWith(at);
}

/** The user's line of the model call made now: on the stack when the caller awaits it (generateText), else where the
 *  SDK was entered (streamText). Read it before the first await of the integration's entry. */
export function modelCallSite(): SourceLocation | undefined {
  return callSite() ?? entered.getStore();
}

/** The text of the files named so far (a file read once per process; null when it cannot be read). */
const files = new Map<string, string | null>();

function textOf(file: string): string | null {
  let text = files.get(file);
  if (text === undefined) {
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      text = null;
    }
    files.set(file, text);
  }
  return text;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** How far past the call its arguments may reach: a bigger tools object is rare, and a miss only costs precision. */
const MAX_CHARS = 20_000;

/**
 * The line of the entry `name` in the arguments of the call at `site` (`logbookTools(run, { refund: … })`): the
 * place that declared the tool. The call's own line when the entry is not written there (a spread, a variable).
 */
export function entrySite(site: SourceLocation | undefined, name: string): SourceLocation | undefined {
  if (!site) return undefined;
  const text = textOf(site.file);
  if (text === null) return site;
  let offset = 0;
  for (let l = 1; l < site.line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return site;
    offset = nl + 1;
  }
  const open = text.indexOf('(', offset + site.column - 1);
  if (open < 0) return site;
  // An entry of the object the call is given: a key at depth 2 (inside the call's parentheses and the object's braces),
  // so that a nested `{ tool: …, effect: … }` never answers for a tool named `tool`. Strings rarely hold brackets.
  const key = new RegExp(`(['"]?)${escape(name)}\\1\\s*[:,}(]`, 'y');
  let depth = 0;
  let at = -1;
  for (let i = open; i < Math.min(text.length, open + MAX_CHARS) && at < 0; i++) {
    const c = text[i] ?? '';
    if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      if (--depth === 0) break;
    }
    if (depth === 2 && (c === '{' || c === ',' || /\s/.test(c))) {
      key.lastIndex = i + 1;
      if (key.test(text)) at = i + 1;
    }
  }
  if (at < 0) return site;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { file: site.file, line, column: at - before.lastIndexOf('\n') };
}
