// Bad input through the real CLI: each gets its stable code, a message with the remedy, and an untouched journal.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, EXAMPLES, FIXTURES, cli, cliAsync, fileHash, show, tmpDir } from '../helpers';

const knobs = path.join(FIXTURES, 'knobs.ts');

function expectError(r: { status: number | null; stderr: string }, exit: number, code: string, re?: RegExp): void {
  assert.equal(r.status, exit, r.stderr);
  assert.match(r.stderr, new RegExp(`\\[${code}\\]`));
  if (re) assert.match(r.stderr, re);
}

/** Counts of journal rows, to assert nothing was written. */
function journalCounts(dir: string): string {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return ['runs', 'steps', 'actions', 'events'].map((t) => `${t}=${String(db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get())}`).join(' ');
  } finally {
    db.close();
  }
}

describe('cli: bad input', () => {
  it('usage errors exit 2 and point at --help', () => {
    const dir = tmpDir();
    expectError(cli(dir, ['frobnicate']), 2, 'LB_USAGE', /Unknown command "frobnicate".*logbook --help/);
    expectError(cli(dir, ['run']), 2, 'LB_USAGE', /Expected 1 argument/);
    expectError(cli(dir, ['run', 'x.ts', '--bogus']), 2, 'LB_USAGE', /bogus/);
  });

  it('a missing script, no default export, a throw at load and a syntax error each say what to fix', () => {
    const dir = tmpDir();
    expectError(cli(dir, ['run', path.join(dir, 'nope.ts')]), 2, 'LB_SCRIPT_NOT_FOUND', /does not exist\. Check the path/);
    expectError(cli(dir, ['run', path.join(FIXTURES, 'no-default.ts')]), 2, 'LB_NO_DEFAULT_AGENT', /export default defineAgent/);
    expectError(cli(dir, ['run', path.join(FIXTURES, 'throws-at-load.ts')]), 2, 'LB_SCRIPT_LOAD_FAILED', /missing API_TOKEN.*nothing was journaled/);
    expectError(cli(dir, ['run', path.join(FIXTURES, 'syntax-error.ts')]), 2, 'LB_SCRIPT_LOAD_FAILED', /syntax-error\.ts:2:\d+/);
    assert.ok(!fs.existsSync(path.join(dir, 'journal.db')), 'nothing was journaled');
  });

  it('invalid input: not JSON, or not matching the schema (zod message); no run is created', () => {
    const dir = tmpDir();
    const script = path.join(EXAMPLES, 'email-campaign.ts');
    expectError(cli(dir, ['run', script, '--input', '{recipients: 3']), 2, 'LB_INVALID_INPUT', /not valid JSON.*--input '\{"recipients": 50\}'/);
    expectError(cli(dir, ['run', script, '--input', '{"recipients": -2}']), 2, 'LB_INVALID_INPUT', /recipients: .*(>0|positive|greater)/i);
    expectError(cli(dir, ['run', script, '--input-file', path.join(dir, 'missing.json')]), 2, 'LB_INVALID_INPUT', /Cannot read the input file/);
    const ls = cli(dir, ['ls', '--json']);
    assert.deepEqual(JSON.parse(ls.stdout), []);
  });

  it('a malformed --crash-at and a malformed --decide', () => {
    const dir = tmpDir();
    expectError(cli(dir, ['run', knobs, '--crash-at', 'knob.act@whenever']), 2, 'LB_BAD_CRASH_SPEC', /after-execute/);
    expectError(cli(dir, ['resume', 'r', '--decide', 'act:r:first=maybe']), 2, 'LB_BAD_DECISION', /happened\|not-happened/);
  });

  it('a corrupt journal and one from a newer version are refused untouched', () => {
    const dir = tmpDir();
    const db = path.join(dir, 'journal.db');
    fs.writeFileSync(db, 'garbage'.repeat(1000));
    const h = fileHash(db);
    expectError(cli(dir, ['run', knobs]), 2, 'LB_DB_CORRUPT', /it was not modified/);
    expectError(cli(dir, ['ls']), 2, 'LB_DB_CORRUPT');
    assert.equal(fileHash(db), h);

    const dir2 = tmpDir();
    const db2 = path.join(dir2, 'journal.db');
    const raw = new Database(db2);
    raw.exec('CREATE TABLE runs (id TEXT)');
    raw.pragma('user_version = 99');
    raw.close();
    const h2 = fileHash(db2);
    expectError(cli(dir2, ['run', knobs]), 2, 'LB_DB_TOO_NEW', /schema version 99.*Upgrade agent-logbook/);
    assert.equal(fileHash(db2), h2);
  });

  it('unknown runs, completed runs and bad decisions are refused with the next step to take', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', knobs, '--run-id', 'done']).status, 0);
    const before = journalCounts(dir);
    expectError(cli(dir, ['resume', 'ghost']), 2, 'LB_RUN_NOT_FOUND', /logbook ls/);
    expectError(cli(dir, ['resume', 'done']), 2, 'LB_RUN_NOT_RESUMABLE', /already completed/);
    expectError(cli(dir, ['show', 'ghost']), 2, 'LB_RUN_NOT_FOUND');
    assert.equal(journalCounts(dir), before, 'nothing was written');
  });

  it('a changed step order on resume stops before any new side effect', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', knobs, '--run-id', 'k', '--crash-at', 'second@step:before']);
    assert.equal(r.signal, 'SIGKILL');
    const actionsBefore = show(dir, 'k').actions;
    const r2 = cli(dir, ['resume', 'k'], { KNOB_ORDER: 'reversed' });
    assert.equal(r2.status, 1, r2.stdout + r2.stderr);
    assert.match(r2.stdout, /LB_NONDETERMINISM.*Step #1 is "second" in the script, but the journal of run k has "first".*Restore the original step order/s);
    assert.deepEqual(show(dir, 'k').actions, actionsBefore);
    const world = JSON.parse(fs.readFileSync(path.join(dir, 'knobs-world.json'), 'utf8'));
    assert.deepEqual(world.done, ['act:k:first']);
    assert.equal(cli(dir, ['resume', 'k']).status, 0, 'with the original order it completes');
  });

  it('verify that throws keeps the action in doubt; compensate that throws can be retried', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', knobs, '--run-id', 'v', '--crash-at', 'knob.act#1@after-execute']).signal, 'SIGKILL');
    const r = cli(dir, ['resume', 'v'], { KNOB_VERIFY_THROWS: '1' });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /LB_VERIFY_FAILED.*verify backend unreachable.*still in doubt/);
    const a = show(dir, 'v').actions.find((x: { id: string }) => x.id === 'act:v:first');
    assert.equal(a.status, 'started');
    assert.equal(a.executions, 0, 'the call is counted with its end, which the kill took away');
    assert.equal(cli(dir, ['resume', 'v']).status, 0);

    const c = cli(dir, ['compensate', 'v'], { KNOB_COMPENSATE_THROWS: '1' });
    assert.equal(c.status, 1);
    assert.match(c.stdout, /LB_COMPENSATE_FAILED|undo endpoint returned 500/);
    assert.equal(show(dir, 'v').run.status, 'compensation-failed');
    const c2 = cli(dir, ['compensate', 'v']);
    assert.equal(c2.status, 0, c2.stdout);
    assert.equal(show(dir, 'v').run.status, 'compensated');
  });

  it('a run leased by another live process is refused naming the owner; once it dies it is interrupted and resumable', async () => {
    const dir = tmpDir();
    const child = cliAsync(dir, ['run', knobs, '--run-id', 'held'], { KNOB_HOLD: '1' });
    try {
      const holding = path.join(dir, 'holding');
      for (let i = 0; i < 400 && !fs.existsSync(holding); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(fs.existsSync(holding), 'the run reached its hold');
      const r = cli(dir, ['resume', 'held']);
      expectError(r, 4, 'LB_LEASE_HELD', new RegExp(`pid ${child.pid} on .*\\(cli\\)`));
      assert.equal(show(dir, 'held').run.status, 'running');
      child.kill('SIGKILL');
      await new Promise((res) => child.once('exit', res));
      assert.equal(show(dir, 'held').run.status, 'interrupted');
      assert.match(cli(dir, ['ls']).stdout, /held\s+knobs\s+interrupted/);
      fs.writeFileSync(path.join(dir, 'release'), '');
      const resumed = cli(dir, ['resume', 'held'], { KNOB_HOLD: '1' });
      assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
      assert.match(resumed.stdout, /2 replayed, 1 redone/);
    } finally {
      child.kill('SIGKILL');
    }
    assert.ok(fs.existsSync(CLI));
  });
});
