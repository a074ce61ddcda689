// Reads `.env` files and says which environment values are secrets, for the launch attributes and the extension's setting.

import * as fs from 'node:fs';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

function unquote(raw: string, file: string, lineNo: number): string {
  const q = raw[0];
  if (q === '"' || q === "'" || q === '`') {
    const end = raw.indexOf(q, 1);
    if (end < 0) throw new LogbookError(ErrorCodes.BAD_LAUNCH_CONFIG, `${file}:${lineNo}: the value opens a ${q} quote that never closes.`, 'Close the quote on the same line (write a newline inside double quotes as \\n).');
    const inner = raw.slice(1, end);
    return q === '"' ? inner.replace(/\\([nrt"\\])/g, (_, c: string) => ESCAPES[c] ?? c) : inner;
  }
  // Unquoted: a ` #` starts a comment, as in the dotenv format most tools read.
  const hash = raw.search(/\s#/);
  return (hash >= 0 ? raw.slice(0, hash) : raw).trim();
}

/** Parses the text of a `.env` file: KEY=VALUE lines, `export` allowed, # comments, '…' "…" quoting. */
export function parseEnv(text: string, file = '.env'): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim() || line.trimStart().startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m?.[1]) throw new LogbookError(ErrorCodes.BAD_LAUNCH_CONFIG, `${file}:${i + 1}: "${line.trim().slice(0, 40)}" is not a KEY=VALUE line.`, 'Write one KEY=VALUE per line (a # starts a comment).');
    out[m[1]] = unquote(m[2] ?? '', file, i + 1);
  });
  return out;
}

/** Reads and parses a `.env` file; a missing or unreadable file fails naming the file and who asked for it. */
export function readEnvFile(file: string, origin: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new LogbookError(ErrorCodes.BAD_LAUNCH_CONFIG, `${origin}: cannot read the env file ${file} (${describe(err)}).`, `Create the file, or fix the path in ${origin} (relative paths start at the workspace folder).`);
  }
  return parseEnv(text, file);
}

/** Names that hold credentials by convention: their values are masked wherever the debugger shows a value. */
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PRIVATE/i;
/** Shorter values would mask ordinary words and numbers. */
const MIN_SECRET = 4;

/** The values of `env` that are secrets (by name), longest first so a value containing another is masked whole. */
export function secretValues(env: Record<string, string | undefined>): string[] {
  const vals = Object.entries(env)
    .filter(([k, v]) => SECRET_NAME.test(k) && typeof v === 'string' && v.length >= MIN_SECRET)
    .map(([, v]) => v as string);
  return [...new Set(vals)].sort((a, b) => b.length - a.length);
}

export const MASK = '«secret»';

/** `text` with every occurrence of a secret replaced by a mask. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

/** An env object for logs: every value of a secret-named key masked. */
export function maskedEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, SECRET_NAME.test(k) ? MASK : v]));
}
