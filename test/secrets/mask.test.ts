// The masking rules: which names make an environment value a secret, the forms a secret is masked in, URL passwords.

import { strict as assert } from 'node:assert';
import { inspect } from 'node:util';
import { MaskedStream } from '../../src/adapter/outputMask';
import { redactUrl } from '../../src/shared/journalTarget';
import { withoutPassword } from '../../src/shared/pgUrl';
import { MASK, SecretMask, isSecretEnvName, isSecretFieldName, secretValues } from '../../src/shared/secrets';
import { API_KEY, DATABASE_URL, DB_PASSWORD, URL_PASSWORD, assertNoSecret } from './plant';

describe('secrets: the masking rules', () => {
  it('masks a secret cut short by a preview (its start, then …), not only its whole value', () => {
    const token = `ghp_${'Tk3Mn'.repeat(8)}`;
    const mask = SecretMask.of([token]);
    const clipped = `{"secret":"${token.slice(0, 30)}…`;
    assert.equal(mask.text(clipped), `{"secret":"${MASK}…`);
    assert.equal(mask.text(`a ${token.slice(0, 10)}… b ${token}`), `a ${MASK}… b ${MASK}`);
    // A preview that cuts other text is left as it is.
    assert.equal(mask.text('{"text":"hello wor…'), '{"text":"hello wor…');
  });

  it('takes an environment value for a secret by its name, and not names that merely contain KEY or AUTH', () => {
    for (const n of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'GITHUB_TOKEN',
      'HF_TOKEN',
      'PGPASSWORD',
      'DB_PASSWORD',
      'DB_PASS',
      'MYSQL_PWD',
      'AWS_SECRET_ACCESS_KEY',
      'CLIENT_SECRET',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'BASIC_AUTH',
      'PRIVATE_KEY',
      'SENTRY_DSN',
      'stripeApiKey',
    ]) {
      assert.ok(isSecretEnvName(n), n);
    }
    for (const n of [
      'MONKEY',
      'KEYBOARD_LAYOUT',
      'TOKENIZERS_PARALLELISM',
      'GIT_AUTHOR_NAME',
      'PWD',
      'OLDPWD',
      'PATH',
      'HOME',
      'BYPASS_PROXY',
      'LOGBOOK_STATE_DIR',
    ]) {
      assert.ok(!isSecretEnvName(n), n);
    }
    assert.deepEqual(secretValues({ OPENAI_API_KEY: 'sk-1234', MONKEY: 'banana', DEBUG_AUTH: 'true', A_TOKEN: 'ab', PGPASSWORD: 'postgres' }), ['sk-1234']);
  });

  it('finds the password of any URL-valued variable (DATABASE_URL), as written and decoded', () => {
    const values = secretValues({ DATABASE_URL, HOME: '/home/ada' });
    assert.ok(values.includes(URL_PASSWORD) && values.includes(encodeURIComponent(URL_PASSWORD)), values.join(' | '));
    assert.deepEqual(secretValues({ REDIS_URL: 'redis://cache.internal:6379/0' }), []);
  });

  it("takes every OTLP header value and an OTLP endpoint's user and password for secrets, as written and decoded, wherever Logbook prints", () => {
    const key = 'hcaik_01j9Zq7PlantedHeaderValue';
    const values = secretValues({
      OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${key},authorization=Bearer%20${key}x, Bearer pasted-without-equals `,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://instance-4711:glc_Zm9vYmFy%2Fend@otlp.example.com/v1/traces',
      DATABASE_URL: 'postgres://alice:pw-of-alice@db/x',
    });
    for (const v of [key, `Bearer%20${key}x`, `Bearer ${key}x`, 'Bearer pasted-without-equals', 'instance-4711', 'glc_Zm9vYmFy%2Fend', 'glc_Zm9vYmFy/end'])
      assert.ok(values.includes(v), `${v} in ${values.join(' | ')}`);
    // A database URL's user is no secret (it is printed with the password redacted); header names are not either.
    assert.ok(!values.includes('alice') && !values.includes('x-honeycomb-team') && !values.includes('authorization'), values.join(' | '));
    const mask = SecretMask.ofEnv({ OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${key}` });
    assert.equal(mask.text(`sent to the collector with ${JSON.stringify({ team: key })}`), `sent to the collector with {"team":"${MASK}"}`);
    // Negative control: a headers variable under another name is not read as one.
    assert.deepEqual(secretValues({ MY_HEADERS: `x-honeycomb-team=${key}` }), []);
  });

  it('warns about input and args fields named like secrets, not idempotencyKey, author, monkey or maxTokens', () => {
    for (const n of [
      'apiKey',
      'api_key',
      'password',
      'dbPassword',
      'token',
      'authToken',
      'accessToken',
      'secret',
      'clientSecret',
      'privateKey',
      'authorization',
      'credentials',
      'passphrase',
    ])
      assert.ok(isSecretFieldName(n), n);
    for (const n of ['idempotencyKey', 'key', 'author', 'monkey', 'maxTokens', 'tokens', 'tokenCount', 'keyboard', 'passwordHint', 'secretName'])
      assert.ok(!isSecretFieldName(n), n);
  });

  it('masks a secret as is, JSON-escaped (once and twice), as inspect and the debugger quote it, URL-encoded, line by line', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC${'Hq7Vb'.repeat(8)}\n-----END PRIVATE KEY-----`;
    const mask = SecretMask.of([API_KEY, DB_PASSWORD, URL_PASSWORD, pem]);
    const texts = [
      API_KEY,
      JSON.stringify({ k: API_KEY, p: DB_PASSWORD }),
      JSON.stringify(JSON.stringify({ k: API_KEY })),
      inspect({ k: API_KEY, p: DB_PASSWORD, pem }),
      inspect([API_KEY]),
      `'${DB_PASSWORD.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`,
      `https://api.example/v1?key=${encodeURIComponent(API_KEY)}&pw=${encodeURIComponent(URL_PASSWORD)}`,
    ];
    for (const t of texts) assertNoSecret(mask.text(t), `masked ${t.slice(0, 30)}`);
    assert.equal(mask.text(`x ${API_KEY} y`), `x ${MASK} y`);
    assert.deepEqual(mask.deep({ [API_KEY]: [DB_PASSWORD, 1, null], n: 2 }), { [MASK]: [MASK, 1, null], n: 2 });
  });

  it('masks a secret the runner wrote in two pieces: the end of a chunk that may start one waits for the next', () => {
    const mask = SecretMask.of([API_KEY]);
    const stream = new MaskedStream(() => mask);
    const cut = 57;
    const shown = [stream.push(`key=${API_KEY.slice(0, cut)}`), stream.push(`${API_KEY.slice(cut)} done\n`), stream.flush()].join('');
    assert.equal(shown, `key=${MASK} done\n`);
    // Output that only looks like the start of a secret is shown in full at the flush.
    assert.equal(stream.push('sk-pro') + stream.flush(), 'sk-pro');
    assert.equal(stream.push('plain line\n'), 'plain line\n');
  });

  it("redacts a PostgreSQL URL's password at the last @ of its user part, as pg reads it, and in URLs pg cannot read", () => {
    assert.equal(redactUrl('postgres://alice:x@Sup3rSecretPw@host/db'), 'postgres://alice:***@host/db');
    assert.equal(
      redactUrl('postgresql://alice:x@y@host:5433/db?sslmode=require&password=z@z'),
      'postgresql://alice:***@host:5433/db?sslmode=require&password=***',
    );
    assert.equal(redactUrl('postgres://alice:pa#ss@host/db'), 'postgres://alice:***@host/db');
    assert.equal(redactUrl('postgres://alice:pa/ss@host/db'), 'postgres://alice:***@host/db');
    assert.equal(redactUrl('postgres://alice@host/db'), 'postgres://alice@host/db');
    assert.equal(redactUrl('postgres://host:5432/db?application_name=a@b'), 'postgres://host:5432/db?application_name=a@b');
    assert.equal(withoutPassword('postgres://alice:x@Sup3rSecretPw@host/db'), 'postgres://alice@host/db');
    assert.equal(withoutPassword('postgres://alice:pa#ss@host/db'), 'postgres://alice@host/db');
  });
});
