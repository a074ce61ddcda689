// Secrets through the CLI (run, show --json, storage errors), the journal reader and the journal file's bytes.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ReaderClient } from '../../src/extension/readerClient';
import { CLI, ROOT, tmpDir } from '../helpers';
import * as fs from 'node:fs';
import { API_KEY, MARKERS, SECRET_ENV, VAULT, assertNoSecret, journalBytes } from './plant';

const READER = path.join(ROOT, 'dist', 'readerMain.js');

/** `logbook <args>` as a real process whose environment holds every planted secret, as a developer's shell does. */
function logbook(dir: string, args: string[], env: Record<string, string> = SECRET_ENV): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' },
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** Every answer the sidebar's reader gives about every run of the journal, as one text. */
async function readerDump(db: string, env: Record<string, string>): Promise<string> {
  const client = new ReaderClient({ node: process.execPath, script: READER, cwd: ROOT, log: () => undefined, env: Promise.resolve(env) });
  try {
    const parts: unknown[] = [await client.open(db)];
    const runs = await client.request('runs', { offset: 0, limit: 100 });
    parts.push(runs);
    for (const r of runs.runs) {
      parts.push(await client.request('run', { runId: r.id }), await client.request('timeline', { runId: r.id }));
      const steps = await client.request('steps', { runId: r.id, from: 0, limit: 100 });
      parts.push(steps);
      for (const s of steps.steps) {
        parts.push(await client.request('checkpoint', { runId: r.id, stepIdx: s.idx }));
        const actions = await client.request('actions', { runId: r.id, stepIdx: s.idx, afterSeq: 0, limit: 100 });
        parts.push(actions);
        for (const a of actions.actions)
          parts.push(await client.request('action', { runId: r.id, actionId: a.id }), await client.request('callRecord', { runId: r.id, actionId: a.id }));
      }
    }
    return JSON.stringify(parts);
  } finally {
    client.dispose();
  }
}

describe('secrets: the CLI, the reader and the journal', function () {
  this.timeout(120_000);

  it("a careful run: no secret in `run` (the script's own console output included), `show --json`, the reader, or the journal bytes", async () => {
    const dir = tmpDir('logbook-secrets-cli-');
    const db = path.join(dir, 'journal.db');
    const run = logbook(dir, ['run', VAULT, '--run-id', 'cli-careful', '--journal', db]);
    assert.equal(run.status, 0, run.out);
    assert.match(run.out, /calling the model with «secret»/);
    assertNoSecret(run.out, '`logbook run`');
    const show = logbook(dir, ['show', 'cli-careful', '--json', '--journal', db]);
    assert.match(show.out, /401 Unauthorized: Incorrect API key provided: «secret»/);
    assert.match(show.out, /"idempotencyKey": "ask:cli-careful:hello"/);
    assertNoSecret(show.out, '`logbook show --json`');
    // Without the secrets in its environment, nothing can be masked: the journal itself must not hold them.
    const bare = logbook(dir, ['show', 'cli-careful', '--json', '--journal', db], {});
    assertNoSecret(bare.out, '`logbook show --json` run without the secrets');
    assertNoSecret(await readerDump(db, {}), 'the journal reader');
    assertNoSecret(journalBytes(db), 'the journal file');
  });

  describe('a careless run (secrets passed in args and returned): shown masked by value', () => {
    let dir = '';
    let db = '';
    let run: { status: number | null; out: string };
    before(() => {
      dir = tmpDir('logbook-secrets-cli-');
      db = path.join(dir, 'journal.db');
      run = logbook(dir, ['run', VAULT, '--run-id', 'cli-careless', '--input', '{"careless":true}', '--journal', db]);
    });

    it('in `logbook run` (its outcome echoes the key)', () => {
      assert.equal(run.status, 0, run.out);
      assert.match(run.out, /"echoed":"«secret»"/);
      assertNoSecret(run.out, '`logbook run`');
    });

    it('in `logbook show` and `ls`, as text and --json', () => {
      for (const args of [['show', 'cli-careless'], ['show', 'cli-careless', '--json'], ['ls'], ['ls', '--json']]) {
        const r = logbook(dir, [...args, '--journal', db]);
        assert.equal(r.status, 0, r.out);
        assertNoSecret(r.out, `\`logbook ${args.join(' ')}\``);
      }
    });

    it("in every answer of the sidebar's journal reader", async () => {
      const dump = await readerDump(db, SECRET_ENV);
      assert.match(dump, /Bearer «secret»/);
      assertNoSecret(dump, 'the journal reader');
    });
  });

  it('redacts a PostgreSQL password holding an @ the way pg parses it, in ls, show, resume, delete, run and their storage errors', () => {
    const dir = tmpDir('logbook-secrets-cli-');
    // Port 1: nothing listens, so every command meets a storage error that names the journal.
    const url = 'postgres://alice:x@Sup3rSecretPw@127.0.0.1:1/db';
    for (const args of [['ls'], ['show', 'r1'], ['show', 'r1', '--json'], ['resume', 'r1'], ['delete', 'r1'], ['run', VAULT, '--run-id', 'r1']]) {
      const r = logbook(dir, [...args, '--journal', url], {});
      assert.equal(r.status, 5, `${args.join(' ')}: ${r.out}`);
      assert.match(r.out, /postgres:\/\/alice:\*\*\*@127\.0\.0\.1:1\/db/, `${args.join(' ')}: ${r.out}`);
      assert.ok(!r.out.includes('Sup3rSecretPw'), `logbook ${args.join(' ')} printed the password: ${r.out}`);
    }
  });

  it('warns on stderr about input and args fields named like secrets, once per field, never printing the value', () => {
    const dir = tmpDir('logbook-secrets-cli-');
    const db = path.join(dir, 'journal.db');
    const typed = `typed-${'Wq4Jd'.repeat(6)}`;
    const r = spawnSync(
      process.execPath,
      [CLI, 'run', VAULT, '--run-id', 'warned', '--input', JSON.stringify({ careless: true, apiKey: typed }), '--journal', db],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, ...SECRET_ENV, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1' },
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    assert.deepEqual(
      warnings.map((w) => /^warning: (\S+) is named like a secret/.exec(w)?.[1]),
      ['input.apiKey', 'args.headers.authorization', 'args.headers["x-db-password"]'],
      r.stderr,
    );
    assert.match(
      warnings[0] ?? '',
      /^warning: input\.apiKey is named like a secret, and the input of run warned \(agent vault\) is journaled in plain text \(a resume reads it back\); its value is not shown\. Keep secrets in the environment/,
    );
    assert.ok(!r.stderr.includes('Wq4Jd') && !r.stdout.includes('Wq4Jd'), 'the warning printed the value');
    assertNoSecret(`${r.stdout}${r.stderr}`, '`logbook run`');
    // Nothing named like a secret, nothing said: idempotencyKey, author and monkey are ordinary fields.
    const quiet = logbook(dir, ['run', VAULT, '--run-id', 'quiet', '--journal', db]);
    assert.ok(!quiet.out.includes('warning:'), quiet.out);
    assert.ok(API_KEY.length > 100);
  });
  it('an OTLP header value and the endpoint credentials are masked in everything `logbook` prints, whoever prints them', () => {
    const dir = tmpDir('logbook-secrets-otlp-');
    const key = `hcaik_${MARKERS.apiKey.repeat(4)}`;
    const script = path.join(dir, 'prints-otel.ts');
    fs.writeFileSync(
      script,
      `import { defineAgent } from 'agent-logbook';\nexport default defineAgent({ name: 'prints-otel', async run(run) {\n  console.log('headers: ' + process.env.OTEL_EXPORTER_OTLP_HEADERS + ' endpoint: ' + process.env.OTEL_EXPORTER_OTLP_ENDPOINT);\n  return run.step('s', () => ({ team: decodeURIComponent(process.env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split('=')[1] }));\n} });\n`,
    );
    // Exported nowhere (the SDK is off), so only the masking rules stand between the values and the terminal.
    const env = {
      OTEL_SDK_DISABLED: 'true',
      OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${encodeURIComponent(key)}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `https://inst-${MARKERS.token}:${MARKERS.dbPassword}-pw@otlp.example.com`,
    };
    const run = logbook(dir, ['run', script, '--run-id', 'otel', '--journal', path.join(dir, 'journal.db')], env);
    assert.equal(run.status, 0, run.out);
    assert.match(run.out, /headers: x-honeycomb-team=«secret» endpoint: https:\/\/«secret»:«secret»@otlp\.example\.com/);
    const show = logbook(dir, ['show', 'otel', '--json', '--journal', path.join(dir, 'journal.db')], env);
    assert.match(show.out, /"team": "«secret»"/);
    assertNoSecret(run.out + show.out, '`logbook run` and `show` with OTLP credentials');
  });
});
