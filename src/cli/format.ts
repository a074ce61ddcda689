// Human output: aligned tables, colour only on a TTY, status words a person understands.

import { ACTION_WORDS, RUN_WORDS, actionDisplay, type Tone } from '../runtime/policy';
import type { ActionStatus, CompensationStatus, RunStatus } from '../runtime/types';

const useColor = (): boolean => process.stdout.isTTY === true && !process.env.NO_COLOR;

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1 } as const;
export type Color = keyof typeof CODES;

export function paint(color: Color, text: string): string {
  return useColor() ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
}

// eslint-disable-next-line no-control-regex -- stripping ANSI colour codes is the point
const visible = (s: string): number => s.replace(/\u001b\[[0-9;]*m/g, '').length;

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visible(c))))
      .join('  ')
      .trimEnd();
  return [paint('bold', line(headers)), ...rows.map(line)].join('\n');
}

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
