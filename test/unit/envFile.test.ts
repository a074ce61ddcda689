// .env parsing, which values count as secrets, and how they are masked.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MASK, maskSecrets, maskedEnv, parseEnv, readEnvFile, secretValues } from '../../src/adapter/envFile';
import { tmpDir } from '../helpers';

describe('env files and secrets', () => {
  it('parses KEY=VALUE lines with export, comments and quotes', () => {
    const env = parseEnv(
      [
        '# a comment',
        '',
        'export OPENAI_API_KEY=sk-abc # trailing comment',
        'REGION = "eu-west"',
        "RAW='a # not a comment'",
        'MULTI="line1\\nline2"',
        'URL=https://example.com/#frag',
        'EMPTY=',
      ].join('\n'),
    );
    assert.deepEqual(env, {
      OPENAI_API_KEY: 'sk-abc',
      REGION: 'eu-west',
      RAW: 'a # not a comment',
      MULTI: 'line1\nline2',
      URL: 'https://example.com/#frag',
      EMPTY: '',
    });
  });

  it('refuses a line that is not KEY=VALUE and an unclosed quote, with the file and line', () => {
    assert.throws(() => parseEnv('A=1\nnot a pair', 'x.env'), /x\.env:2: the line is not KEY=VALUE \(it is not shown\)\. Write one KEY=VALUE per line/);
    assert.throws(() => parseEnv('A="open', 'x.env'), /x\.env:1: the value of A opens a " quote that never closes/);
  });

  it('names the file, the line and the variable of a YAML-style line, never its value', () => {
    const key = `sk-proj-${'Zq9'.repeat(12)}`;
    for (const line of [`OPENAI_API_KEY: ${key}`, `OPENAI_API_KEY:${key}`, `export OPENAI_API_KEY ${key}`]) {
      const err = (() => {
        try {
          parseEnv(`# keys\nREGION=eu\n${line}\n`, '/w/agent.env');
        } catch (e) {
          return e as Error;
        }
        return assert.fail('accepted');
      })();
      assert.match(
        err.message,
        /^\/w\/agent\.env:3: the line of OPENAI_API_KEY is not KEY=VALUE \(its value is not shown\)\. Write one KEY=VALUE per line, e\.g\. OPENAI_API_KEY=…/,
      );
      for (const part of [key, key.slice(0, 8), 'sk-proj']) assert.ok(!err.message.includes(part), `the error shows ${part}: ${err.message}`);
    }
    // A token pasted alone on a line is not taken for a name and echoed.
    assert.throws(
      () => parseEnv(`ghp_${'x'.repeat(36)} trailing`, 'a.env'),
      (e: Error) => !e.message.includes('ghp_') && /a\.env:1: the line is not KEY=VALUE/.test(e.message),
    );
  });

  it('reads a file, and a missing one names who asked for it', () => {
    const dir = tmpDir('logbook-env-');
    fs.writeFileSync(path.join(dir, '.env'), 'A_TOKEN=t0k3n-value\r\nB=2\r\n');
    assert.deepEqual(readEnvFile(path.join(dir, '.env'), 'the setting logbook.envFile'), { A_TOKEN: 't0k3n-value', B: '2' });
    assert.throws(
      () => readEnvFile(path.join(dir, 'nope.env'), 'the setting logbook.envFile'),
      /the setting logbook\.envFile: cannot read the env file .*nope\.env.*fix the path in the setting logbook\.envFile/,
    );
  });

  it('counts values of KEY, TOKEN, SECRET and PASSWORD names as secrets, and masks every occurrence', () => {
    const secrets = secretValues({
      OPENAI_API_KEY: 'sk-123456',
      GITHUB_TOKEN: 'ghp_abcdef',
      DB_PASSWORD: 'hunter22',
      REGION: 'eu-west',
      SHORT_KEY: 'ab',
      UNSET_SECRET: undefined,
    });
    assert.deepEqual(secrets.sort(), ['ghp_abcdef', 'hunter22', 'sk-123456']);
    assert.equal(maskSecrets('{auth: "sk-123456", again: "sk-123456", region: "eu-west"}', secrets), `{auth: "${MASK}", again: "${MASK}", region: "eu-west"}`);
    assert.deepEqual(maskedEnv({ OPENAI_API_KEY: 'sk-123456', REGION: 'eu-west' }), { OPENAI_API_KEY: MASK, REGION: 'eu-west' });
  });

  it('masks the longer of two overlapping secrets whole', () => {
    const secrets = secretValues({ A_KEY: 'abcd', B_KEY: 'abcdefgh' });
    assert.equal(maskSecrets('x abcdefgh y abcd', secrets), `x ${MASK} y ${MASK}`);
  });
});
