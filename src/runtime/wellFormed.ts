// Names, keys and notes are stored as text columns (UTF-8) in both journals: text one of them cannot hold (a lone
// UTF-16 surrogate; a NUL, which PostgreSQL refuses in text) is refused up front, the same on SQLite and PostgreSQL.

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
 * Throws LB_LONE_SURROGATE when `value` holds half of a surrogate pair (stored, it would come back as U+FFFD, a
 * different string, and every resume would fail as a changed script), and LB_NUL_CHARACTER when it holds U+0000
 * (PostgreSQL cannot store it in text; SQLite can, and one journal must not accept a script the other refuses).
 * `what` names the value, e.g. `The name of step #3`. Inside JSON values (args, results, input, output) neither needs
 * refusing: JSON escapes both (\ud83d, \u0000) and they read back exactly from either journal.
 */
export function requireWellFormed(value: string, what: string, details: Record<string, unknown> = {}): void {
  const nul = value.indexOf('\u0000');
  if (nul >= 0) {
    throw new LogbookError(
      ErrorCodes.NUL_CHARACTER,
      `${what} (${JSON.stringify(value)}) holds a NUL character (\\u0000 at index ${nul}). PostgreSQL cannot store it in text, so neither journal (SQLite nor PostgreSQL) accepts it in a name, a key or a note. Nothing was journaled.`,
      'Remove it (e.g. s.replaceAll("\\u0000", "")) where the name or key is made; inside args and results it may stay: JSON escapes it and it reads back exactly.',
      { ...details, index: nul },
    );
  }
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
