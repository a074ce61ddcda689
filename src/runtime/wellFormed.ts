// Names and keys are stored as SQLite text (UTF-8): a lone UTF-16 surrogate cannot be, so it is refused up front.

import { ErrorCodes, LogbookError } from './errors';

/** The index of the first lone surrogate in `s`, or -1 when `s` is well-formed UTF-16. */
export function loneSurrogateAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

/**
 * Throws LB_LONE_SURROGATE when `value` holds half of a surrogate pair. Stored, it would come back as U+FFFD, a
 * different string, and every resume would fail as a changed script. `what` names the value, e.g. `The name of step #3`.
 */
export function requireWellFormed(value: string, what: string, details: Record<string, unknown> = {}): void {
  const at = loneSurrogateAt(value);
  if (at < 0) return;
  const unit = `\\u${value.charCodeAt(at).toString(16).padStart(4, '0')}`;
  throw new LogbookError(
    ErrorCodes.LONE_SURROGATE,
    `${what} (${JSON.stringify(value)}) holds a lone UTF-16 surrogate (${unit} at index ${at}): half of a character, as when a string is cut in the middle of an emoji. The journal stores text as UTF-8, which cannot hold it, so it would not read back the same. Nothing was journaled.`,
    'Cut strings by code points, not UTF-16 units (e.g. Array.from(s).slice(0, n).join("")), or pass s.toWellFormed().',
    { ...details, index: at },
  );
}
