// The secrets the suite plants (long, quoted, escaped, non-ASCII), and the check that none shows in what was captured.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES } from '../helpers';

export const VAULT = path.join(FIXTURES, 'secrets', 'vault.ts');

/**
 * Each secret carries a marker of its own: no escaping (JSON, inspect, URL-encoding) changes letters and digits, and a
 * clipped secret still holds it, so "no marker anywhere" means no secret, whole, escaped or cut, anywhere.
 */
export const MARKERS = { apiKey: 'Zq9Xw', dbPassword: 'Hq7Vb', token: 'Tk3Mn', urlPassword: 'Pg5Lr' } as const;

/** 130 characters: longer than any preview; a quote, a backslash, an apostrophe and non-ASCII text inside. */
export const API_KEY = `sk-proj-${MARKERS.apiKey.repeat(22)}"q\\b'ñ€😀-end`;
export const DB_PASSWORD = `p@ss"w\\ord'ß-${MARKERS.dbPassword.repeat(4)}`;
export const GITHUB_TOKEN = `ghp_${MARKERS.token.repeat(8)}`;
/** A password with quotes in a URL: written percent-encoded, used decoded. */
export const URL_PASSWORD = `Url-Pässword"1-${MARKERS.urlPassword.repeat(3)}`;
export const DATABASE_URL = `postgres://app:${encodeURIComponent(URL_PASSWORD)}@db.internal:5432/app`;

/** The environment of a process that holds every secret, the way an agent developer's shell does. */
export const SECRET_ENV = { OPENAI_API_KEY: API_KEY, DB_PASSWORD, GITHUB_TOKEN, DATABASE_URL };

/** A .env file holding two of them, quoted and escaped the way the dotenv format wants. */
export function writeEnvFile(file: string): void {
  const dq = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  fs.writeFileSync(file, `# the agent's credentials\nDB_PASSWORD=${dq(DB_PASSWORD)}\nexport DATABASE_URL=${DATABASE_URL}\n`);
}

/** Asserts that no planted secret, in any form, is in `captured` (text or bytes); `where` names it in the failure. */
export function assertNoSecret(captured: string | Buffer, where: string): void {
  const bytes = typeof captured === 'string' ? Buffer.from(captured, 'utf8') : captured;
  for (const [name, marker] of Object.entries(MARKERS)) {
    const at = bytes.indexOf(marker);
    assert.ok(at < 0, `${where} shows the planted ${name}: …${bytes.subarray(Math.max(0, at - 60), at + 60).toString('utf8')}…`);
  }
  for (const secret of [API_KEY, DB_PASSWORD, GITHUB_TOKEN, URL_PASSWORD]) {
    for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) assert.ok(bytes.indexOf(form) < 0, `${where} holds a secret`);
  }
}

/** The journal file and whatever SQLite keeps beside it (-wal, -shm), as bytes. */
export function journalBytes(db: string): Buffer {
  const dir = path.dirname(db);
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(db)));
  assert.ok(files.includes(path.basename(db)), `no journal at ${db}`);
  return Buffer.concat(files.map((f) => fs.readFileSync(path.join(dir, f))));
}
