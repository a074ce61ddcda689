// `logbook rehearse --junit`: the file validates against the JUnit schema CI reads, and its reproduction reproduces.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { CLI, FIXTURES, ROOT, tmpDir } from '../helpers';
import { readSummary } from '../../src/rehearse/campaignReadout';

const XSD = fs.readFileSync(path.join(__dirname, 'junit.xsd'), 'utf8');

async function validate(xml: string): Promise<{ valid: boolean; errors: string }> {
  const r = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit.xsd', contents: XSD }] });
  return { valid: r.valid, errors: r.errors.map((e) => e.rawMessage).join('\n') };
}

function logbook(cwd: string, args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 300_000 });
}

/** The <testcase> elements, each with its name and its failure's message and text (a small reader for this shape). */
function testcases(xml: string): Array<{ name: string; failure?: { message: string; body: string } }> {
  const unescape = (s: string): string =>
    s
      .replace(/&#10;/g, '\n')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return [...xml.matchAll(/<testcase name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => {
    const f = /<failure message="([^"]*)"[^>]*>([\s\S]*?)<\/failure>/.exec(m[2] ?? '');
    return { name: unescape(m[1] ?? ''), ...(f ? { failure: { message: unescape(f[1] ?? ''), body: unescape(f[2] ?? '') } } : {}) };
  });
}

describe('rehearse --junit', function () {
  this.timeout(600_000);
  const ignoreKeys = { OUTBOX_IGNORE_KEYS: '1' };

  it('the schema check is real: a testcase without a name, or a time that is not a number, is refused', async () => {
    assert.equal((await validate('<testsuites><testsuite name="a" tests="1"><testcase name="x" time="0.5"/></testsuite></testsuites>')).valid, true);
    assert.equal((await validate('<testsuites><testsuite name="a" tests="1"><testcase classname="x"/></testsuite></testsuites>')).valid, false);
    assert.equal((await validate('<testsuites><testsuite name="a" tests="1"><testcase name="x" time="soon"/></testsuite></testsuites>')).valid, false);
    assert.equal((await validate('<testsuites><testsuite name="a"><testcase name="x"/></testsuite></testsuites>')).valid, false, 'tests is required');
  });

  it('one testcase per kill point, failures with the invariant; the reproduction, run as written, sends the email twice', async () => {
    const cwd = tmpDir();
    const script = path.join(cwd, 'agent.ts');
    // The agent in the working directory, as in a project: the reproduction names it by its relative path.
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(cwd, 'node_modules'), 'dir');
    fs.writeFileSync(
      script,
      fs
        .readFileSync(path.join(FIXTURES, 'control-no-verify.ts'), 'utf8')
        .replace('../../examples/providers/outbox', path.join(ROOT, 'examples', 'providers', 'outbox')),
    );
    const r = logbook(cwd, ['rehearse', 'agent.ts', '--input', '{"recipients":1}', '--points', 'all', '--jobs', '2', '--junit', 'report.xml'], ignoreKeys);
    assert.equal(r.status, 1, 'exit codes stay as they are: an invariant broke');
    assert.match(r.stdout, /3 of 7 campaign\(s\) broke an invariant/, 'the human report is still printed');
    const xml = fs.readFileSync(path.join(cwd, 'report.xml'), 'utf8');
    const v = await validate(xml);
    assert.ok(v.valid, v.errors);
    assert.match(xml, /<testsuite name="rehearse control-no-verify" tests="7" failures="3" errors="0"/);
    const cases = testcases(xml);
    assert.equal(cases.length, 7);
    assert.equal(cases.filter((c) => c.failure).length, 3);
    const ok = cases.find((c) => c.name === 'email.send#1@after-commit');
    assert.ok(ok && !ok.failure, 'a point that held passes');
    const bad = cases.find((c) => c.name === 'email.send#1@after-execute');
    assert.ok(bad?.failure, JSON.stringify(cases));
    assert.equal(bad.failure.message, 'effect twice: email.send `email:rehearsal:user1@example.com` ×2 (the journal executed it 2 times)');
    assert.match(bad.failure.body, /needs a decision: no verify: email\.send `email:rehearsal:user1@example\.com` was in doubt at after-execute/);
    const repro = bad.failure.body
      .split('\n')
      .filter((l) => /^ {2}logbook /.test(l))
      .map((l) => l.trim());
    assert.equal(repro.length, 3, bad.failure.body);
    assert.match(
      repro[0] ?? '',
      /^logbook run agent\.ts --input '\{"recipients":1\}' --run-id rehearsal --crash-at email\.send#1@after-execute --journal \S+$/,
    );
    assert.match(repro[1] ?? '', /^logbook resume rehearsal --journal /);
    assert.match(repro[2] ?? '', /^logbook resume rehearsal --decide email:rehearsal:user1@example\.com=not-happened --journal /);

    // Run as written, in a shell, with `logbook` on PATH: a real SIGKILL, a stop for a decision, a second send.
    const bin = path.join(cwd, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'logbook'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, { mode: 0o755 });
    const env: NodeJS.ProcessEnv = { ...process.env, ...ignoreKeys, NO_COLOR: '1', PATH: `${bin}:${process.env.PATH ?? ''}` };
    delete env.LOGBOOK_STATE_DIR;
    delete env.LOGBOOK_JOURNAL;
    const codes = repro.map((line) => spawnSync('/bin/sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 120_000 }).status);
    assert.deepEqual(codes, [137, 3, 0], 'killed by SIGKILL, stopped for a decision, then completed');
    const db = /--journal (\S+)$/.exec(repro[0] ?? '')?.[1] ?? '';
    const summary = readSummary(path.join(cwd, db), 'rehearsal');
    const send = summary?.actions.find((a) => a.type === 'email.send');
    // Replayed by hand, the killed call is in no count (the rehearsal added it from the kill's last words); the
    // provider's own record has both sends.
    assert.equal(send?.executions, 1);
    const state = path.dirname(path.join(cwd, db));
    const outbox = JSON.parse(fs.readFileSync(path.join(state, 'email-outbox.json'), 'utf8')) as { calls: number };
    assert.equal(outbox.calls, 2, 'the reproduction sent the email twice, as the failure warns');
  });

  it('an uncrashed run that fails: one testcase in error with its message, exit 1', async () => {
    const cwd = tmpDir();
    const r = logbook(cwd, ['rehearse', path.join(FIXTURES, 'fails-uncrashed.ts'), '--junit', 'report.xml'], {});
    assert.equal(r.status, 1);
    const xml = fs.readFileSync(path.join(cwd, 'report.xml'), 'utf8');
    const v = await validate(xml);
    assert.ok(v.valid, v.errors);
    assert.match(xml, /tests="1" failures="0" errors="1"/);
    assert.match(
      xml,
      /<testcase name="uncrashed run" classname="fails-uncrashed\.baseline"[^>]*>\s*<error message="The uncrashed run of [^"]* ended failed: [^"]*the warehouse API said 503/,
    );
  });
});
