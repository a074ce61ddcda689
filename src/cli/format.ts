// Human output: aligned tables, colour only on a TTY, status words a person understands.

import { ACTION_WORDS, RUN_WORDS, actionDisplay, type Tone } from '../runtime/policy';
import type { ActionStatus, CompensationStatus, RunStatus } from '../runtime/types';
import { paint, type Color } from '../shared/terminal';

export { paint, table, type Color } from '../shared/terminal';

const TONE_COLOR: Record<Tone, Color> = { ok: 'green', bad: 'red', warn: 'yellow', busy: 'blue', undone: 'magenta', plain: 'gray' };

/** A run status in the policy's word, coloured by its tone. */
export function runStatusWord(s: RunStatus): string {
  const { word, tone } = RUN_WORDS[s];
  return paint(TONE_COLOR[tone], word);
}

/** An action's status in the policy's word (the same the sidebar shows), coloured by its tone. */
export function actionStatusWord(a: { status: ActionStatus; error: string | null; compensation: CompensationStatus | null }, leaseLive: boolean): string {
  const { word, tone } = ACTION_WORDS[actionDisplay(a, leaseLive)];
  return paint(TONE_COLOR[tone], word);
}

export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Characters a terminal shows as nothing, or as something another string shows too. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufffd\\]/gu;
const MARK = /\p{M}/gu;

function escapeUnit(ch: string): string {
  if (ch === '\\') return '\\\\';
  return Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
}

/**
 * A name or key as a person should read it: two different strings never print alike. Invisible and control
 * characters, odd spaces, U+FFFD, lone surrogates and the backslash are escaped as \uXXXX (\\); a string that
 * Unicode normalisation would change (decomposed accents) has its combining marks escaped too.
 */
export function printable(s: string): string {
  const out = s.replace(HIDDEN, escapeUnit);
  return s.normalize('NFC') === s ? out : out.replace(MARK, escapeUnit);
}

/** Clips by code points, so a clipped string never ends in half a character. */
export function clipChars(s: string, n: number): string {
  const chars = Array.from(s);
  return chars.length > n ? `${chars.slice(0, n - 1).join('')}…` : s;
}
