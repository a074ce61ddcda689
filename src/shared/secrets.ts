// Which values are secrets, and how they are masked by value wherever Logbook shows, logs or journals an error.
// A name only says which environment values are secrets; masking then goes by those values, never by a field's name.

import { OTLP_ENDPOINT_VARIABLE, OTLP_HEADERS_VARIABLE, otlpHeaderSecrets } from './otlpHeaders';

export const MASK = '«secret»';

/** Shorter values would mask ordinary words and numbers. */
const MIN_SECRET = 4;
/** What a clipped preview ends with (cli/format.ts's clip). */
const ELLIPSIS = '…';
/**
 * Values of secret-named variables that are settings (a flag like DEBUG_AUTH=true) or well-known defaults (a local
 * server's PGPASSWORD=postgres): masking them would hide every `postgres://` and every word "password", and they
 * protect nothing. A URL's password is still redacted where the URL is printed, whatever it is.
 */
const NOT_SECRETS = new Set([
  'true',
  'false',
  'null',
  'none',
  'undefined',
  'yes',
  'no',
  'on',
  'off',
  'postgres',
  'postgresql',
  'password',
  'secret',
  'admin',
  'root',
  'test',
  'guest',
  'user',
  'changeme',
  'example',
  'default',
  'localhost',
]);

/** The words of a name: `OPENAI_API_KEY` → OPENAI API KEY, `apiKey` → API KEY, upper-cased. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toUpperCase());
}

/** Inside a word (PGPASSWORD, CLIENTSECRET); KEY and TOKEN only as whole words, so MONKEY and TOKENIZERS are not. */
const SECRET_PART = /PASSWORD|PASSWD|PASSPHRASE|SECRET|CREDENTIAL/;
const SECRET_WORD = /^(?:KEY|KEYS|APIKEY|ACCESSKEY|PRIVATEKEY|TOKEN|\w*TOKEN|AUTH|PASS|PWD|PRIVATE|DSN)$/;

/** Whether an environment variable's name says it holds a credential (OPENAI_API_KEY, GITHUB_TOKEN, PGPASSWORD, DB_PASS). */
export function isSecretEnvName(name: string): boolean {
  // PWD and OLDPWD are the working directory, not a password.
  if (name === 'PWD' || name === 'OLDPWD') return false;
  return words(name).some((w) => SECRET_PART.test(w) || SECRET_WORD.test(w));
}

/**
 * Whether a field of an input or of an action's args is named like a secret (`apiKey`, `password`, `authToken`), for a
 * warning: these are journaled. Decided by the last words, so `idempotencyKey`, `maxTokens` and `tokenCount` are not.
 */
export function isSecretFieldName(name: string): boolean {
  const w = words(name);
  const last = w[w.length - 1] ?? '';
  const before = w[w.length - 2] ?? '';
  if (SECRET_PART.test(last) || /^(?:TOKEN|APIKEY|PASS|PWD|AUTH|AUTHORIZATION|CREDENTIALS|PRIVATEKEY|ACCESSKEY|COOKIE)$/.test(last)) return true;
  return last === 'KEY' && /^(?:API|SECRET|PRIVATE|ACCESS|SIGNING|ENCRYPTION|CLIENT|AUTH|LICENSE)$/.test(before);
}

/**
 * The password of a URL with credentials (`postgres://u:pw@h/db`, `redis://:pw@h`), read both ways a client may: the
 * userinfo ends at the last `@` of the authority (WHATWG URL, so the `pg` client), or, when a `#` or `/` in the
 * password ends the authority early, at the last `@` of the string. The password starts after the first `:`.
 */
export function urlPasswords(value: string): string[] {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([\s\S]*)$/.exec(value);
  const rest = m?.[1];
  if (rest === undefined) return [];
  const delimiter = rest.search(/[/?#]/);
  const out = new Set<string>();
  for (const userinfoEnd of [rest.lastIndexOf('@', delimiter < 0 ? rest.length : delimiter), rest.lastIndexOf('@')]) {
    const colon = rest.indexOf(':');
    if (userinfoEnd >= 0 && colon >= 0 && colon < userinfoEnd && (delimiter < 0 || colon < delimiter)) out.add(rest.slice(colon + 1, userinfoEnd));
  }
  return [...out];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The password of a URL, as written and decoded: what is masked wherever the URL's password may show. */
export function urlSecrets(value: string): string[] {
  return [...new Set(urlPasswords(value).flatMap((pw) => [pw, decoded(pw)]))];
}

/**
 * A URL's credentials, as written and decoded: its password, and its user too (an OTLP endpoint's `user:password@` is
 * sent as Basic authorization, where the user is often a key's id). Empty for a URL without a password.
 */
export function urlCredentials(value: string): string[] {
  const passwords = urlPasswords(value);
  if (passwords.length === 0) return [];
  const rest = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([\s\S]*)$/.exec(value)?.[1] ?? '';
  const user = rest.slice(0, rest.indexOf(':'));
  return [...new Set([...passwords, user].filter((v) => v !== '').flatMap((v) => [v, decoded(v)]))];
}

/**
 * The secrets of an environment: the values of secret-named variables, the password of any URL-valued variable
 * (DATABASE_URL, LOGBOOK_JOURNAL), every value of OTEL_EXPORTER_OTLP_HEADERS (and its per-signal forms), and the user
 * and password of an OTLP endpoint, as written and decoded. Longest first, so a value containing another is masked whole.
 */
export function secretValues(env: Readonly<Record<string, string | undefined>>, extra: ReadonlyArray<string | undefined> = []): string[] {
  const out = new Set<string>();
  const add = (v: string | undefined): void => {
    if (v !== undefined && v.length >= MIN_SECRET && !NOT_SECRETS.has(v.toLowerCase())) out.add(v);
  };
  for (const [k, v] of Object.entries(env)) {
    if (typeof v !== 'string') continue;
    if (isSecretEnvName(k)) add(v);
    if (v.includes('://') && v.includes('@')) {
      for (const pw of urlSecrets(v)) add(pw);
      if (OTLP_ENDPOINT_VARIABLE.test(k)) for (const c of urlCredentials(v)) add(c);
    }
    if (OTLP_HEADERS_VARIABLE.test(k)) for (const h of otlpHeaderSecrets(v)) add(h);
  }
  for (const v of extra) add(v);
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * The forms a secret takes inside shown text: as is, JSON-escaped (once, and inside JSON in a string), as Node's
 * inspect and the debugger quote it (backslashes, then quotes, escaped), and URL-encoded.
 */
function formsOf(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  const inspected = secret.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  let uri = secret;
  try {
    uri = encodeURIComponent(secret);
  } catch {
    // A lone surrogate cannot be URL-encoded; its other forms still are masked.
  }
  return [secret, once, twice, inspected, inspected.replace(/'/g, "\\'"), inspected.replace(/"/g, '\\"'), inspected.replace(/`/g, '\\`'), uri];
}

/** Masks a set of secrets, in all their forms, in text and in any JSON-like value. */
export class SecretMask {
  private readonly forms: string[];

  private constructor(readonly values: readonly string[]) {
    const forms = new Set<string>();
    // Each line of a multi-line secret (a PEM key) too: Node's inspect prints a string with newlines line by line.
    const parts = values.flatMap((v) => (v.includes('\n') ? [v, ...v.split(/\r?\n/)] : [v]));
    for (const v of parts) for (const f of formsOf(v)) if (f.length >= MIN_SECRET) forms.add(f);
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  static of(values: Iterable<string>): SecretMask {
    return new SecretMask([...new Set(values)].filter((v) => v.length >= MIN_SECRET));
  }

  /** The secrets of `env` (see secretValues), plus `extra` ones (a journal password). */
  static ofEnv(env: Readonly<Record<string, string | undefined>>, extra: ReadonlyArray<string | undefined> = []): SecretMask {
    return new SecretMask(secretValues(env, extra));
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  /** The same secrets, and these too. */
  with(values: Iterable<string>): SecretMask {
    return SecretMask.of([...this.values, ...values]);
  }

  text(text: string): string {
    let out = text;
    for (const f of this.forms) if (out.includes(f)) out = out.split(f).join(MASK);
    return out.includes(ELLIPSIS) ? this.clipped(out) : out;
  }

  /**
   * A secret cut short by a preview (`clip`: its start, then "…") is not the secret's value, yet shows most of it: the
   * start just before each "…" that begins a secret is masked too.
   */
  private clipped(text: string): string {
    let out = '';
    let from = 0;
    for (let at = text.indexOf(ELLIPSIS); at >= 0; at = text.indexOf(ELLIPSIS, at + 1)) {
      let cut = 0;
      for (const f of this.forms)
        for (let k = Math.min(f.length - 1, at - from); k >= MIN_SECRET && k > cut; k--)
          if (text.startsWith(f.slice(0, k), at - k)) {
            cut = k;
            break;
          }
      if (cut === 0) continue;
      out += text.slice(from, at - cut) + MASK;
      from = at;
    }
    return out + text.slice(from);
  }

  /** The length of the longest end of `text` that is the start of a secret (not all of it): what may still be written. */
  partialTail(text: string): number {
    let best = 0;
    for (const f of this.forms) {
      for (let k = Math.min(f.length - 1, text.length); k > best; k--) {
        if (text.endsWith(f.slice(0, k))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }

  /** A copy of a value as JSON would carry it (objects, arrays, strings) with every string and every key masked. */
  deep<T>(value: T): T {
    if (this.empty) return value;
    const walk = (v: unknown, depth: number): unknown => {
      if (typeof v === 'string') return this.text(v);
      if (typeof v !== 'object' || v === null || depth > 64) return v;
      if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
      // A Date or a Buffer is left as it is: JSON shows it by its own toJSON. Other objects, as JSON does: own properties.
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return v;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[this.text(k)] = walk(x, depth + 1);
      return out;
    };
    return walk(value, 0) as T;
  }
}

/** The paths of the fields of a JSON-like value named like a secret (`input.apiKey`, `args.auth.password`). */
export function secretFieldPaths(value: unknown, root: string): string[] {
  const found: string[] = [];
  const walk = (v: unknown, at: string, depth: number): void => {
    if (typeof v !== 'object' || v === null || depth > 8 || found.length >= 20) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${at}[${i}]`, depth + 1));
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const p = /^[A-Za-z_$][\w$]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`;
      if (isSecretFieldName(k) && x !== undefined && x !== null && x !== '') found.push(p);
      else walk(x, p, depth + 1);
    }
  };
  walk(value, root, 0);
  return found;
}
