// Reads `.env` files and says which environment values are secrets, for the launch attributes and the extension's setting.

import * as fs from 'node:fs';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { MASK, SecretMask, isSecretEnvName } from '../shared/secrets';

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

function unquote(raw: string, file: string, lineNo: number, name: string): string {
  const q = raw[0];
  if (q === '"' || q === "'" || q === '`') {
    const end = raw.indexOf(q, 1);
    if (end < 0)
      throw new LogbookError(
        ErrorCodes.BAD_LAUNCH_CONFIG,
        `${file}:${lineNo}: the value of ${name} opens a ${q} quote that never closes.`,
        'Close the quote on the same line (write a newline inside double quotes as \\n).',
      );
    const inner = raw.slice(1, end);
    return q === '"' ? inner.replace(/\\([nrt"\\])/g, (_, c: string) => ESCAPES[c] ?? c) : inner;
  }
  // Unquoted: a ` #` starts a comment, as in the dotenv format most tools read.
  const hash = raw.search(/\s#/);
  return (hash >= 0 ? raw.slice(0, hash) : raw).trim();
}

/**
 * A line that is not KEY=VALUE (`OPENAI_API_KEY: sk-…`, a YAML habit) is refused naming the file, the line and the
 * variable, never quoting the line: the rest of it is most likely the secret. A name is told only when it reads as
 * one (followed by `:`, or an UPPER_CASE word followed by a space), so a pasted token alone is not echoed either.
 */
function notAPair(line: string, file: string, lineNo: number): LogbookError {
  const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)(\s*:|\s+)/.exec(line);
  const name = m?.[1] !== undefined && (m[2]?.includes(':') || /^[A-Z_][A-Z0-9_]*$/.test(m[1])) ? m[1] : undefined;
  const what = name ? `the line of ${name} is not KEY=VALUE (its value is not shown)` : 'the line is not KEY=VALUE (it is not shown)';
  return new LogbookError(
    ErrorCodes.BAD_LAUNCH_CONFIG,
    `${file}:${lineNo}: ${what}.`,
    `Write one KEY=VALUE per line${name ? `, e.g. ${name}=…` : ''} (a # starts a comment).`,
  );
}

/** Parses the text of a `.env` file: KEY=VALUE lines, `export` allowed, # comments, '…' "…" quoting. */
export function parseEnv(text: string, file = '.env'): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim() || line.trimStart().startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m?.[1]) throw notAPair(line, file, i + 1);
    out[m[1]] = unquote(m[2] ?? '', file, i + 1, m[1]);
  });
  return out;
}

/** Reads and parses a `.env` file; a missing or unreadable file fails naming the file and who asked for it. */
export function readEnvFile(file: string, origin: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.BAD_LAUNCH_CONFIG,
      `${origin}: cannot read the env file ${file} (${describe(err)}).`,
      `Create the file, or fix the path in ${origin} (relative paths start at the workspace folder).`,
    );
  }
  return parseEnv(text, file);
}

export { MASK, secretValues } from '../shared/secrets';

/** `text` with every occurrence of a secret (as is, JSON-escaped or URL-encoded) replaced by a mask. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  return SecretMask.of(secrets).text(text);
}

/** An env object for logs: every value of a secret-named key masked, and secrets inside other values too. */
export function maskedEnv(env: Record<string, string>): Record<string, string> {
  const mask = SecretMask.ofEnv(env);
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, isSecretEnvName(k) ? MASK : mask.text(v)]));
}
