// The support agent's paused run (a refund over 100) under real SIGKILL: while its state is written, at its gate, and in
// the segment that resumes from it; a damaged state; a second driver. Nothing twice, no committed model call bought again.

import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EXAMPLES, cli, cliAsync, cliJson, show, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'openai-agents-support.ts');
const OFFLINE = { OPENAI_API_KEY: '' };
const INPUT = ['--input', '{"orderId":"A-1002"}'];
const GATE = 'approval:refund:big:A-1002';

function read(dir: string, f: string): any {
  return fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {};
}
const refunds = (dir: string): string[] => (read(dir, 'shop.json').refunds ?? []).map((r: { reference: string }) => r.reference);
const emails = (dir: string): string[] => (read(dir, 'email-outbox.json').sent ?? []).map((s: { key: string }) => s.key);
const billed = (dir: string): string[] => read(dir, 'agents-model.json').billed ?? [];

function sql(dir: string, statement: string, ...params: unknown[]): void {
  const db = new Database(path.join(dir, 'journal.db'));
  try {
    db.prepare(statement).run(...params);
  } finally {
    db.close();
  }
}
function stepResult(dir: string, name: string): string {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return (db.prepare("SELECT result FROM steps WHERE run_id = 'big' AND name = ?").get(name) as { result: string }).result;
  } finally {
    db.close();
  }
}

/** Each committed model call made once, each non-idempotent action executed at most once. */
function assertOnce(dir: string): void {
  for (const a of show(dir, 'big').actions as Array<{ id: string; type: string; effect: string; status: string; executions: number }>) {
    if (a.effect === 'non-idempotent' || a.type.startsWith('model.')) assert.ok(a.executions <= 1, `${a.id} executed ${a.executions} times`);
  }
}

/** Drives the run to its end as a person would: resume until it waits, approve, resume until it completes. */
function finish(dir: string): { status: number | null; json: any } {
  for (let i = 0; i < 4; i++) {
    const s = show(dir, 'big').run.status as string;
    if (s === 'completed') return { status: 0, json: show(dir, 'big').run };
    const r = s === 'awaiting-approval' ? cliJson(dir, ['approve', 'big', GATE], OFFLINE) : cliJson(dir, ['resume', 'big'], OFFLINE);
    assert.ok(r.status === 0 || r.status === 3, `${s}: exit ${r.status}\n${r.stderr}`);
  }
  return { status: 1, json: show(dir, 'big').run };
}

describe('openai-agents: the paused support agent under real SIGKILL', function () {
  this.timeout(600_000);
  let baseline: { output: unknown; billed: number; refunds: string[] };

  before(() => {
    const dir = tmpDir('logbook-agents-paused-');
    const first = cliJson(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE);
    assert.equal(first.status, 3, first.stderr);
    const done = cliJson(dir, ['approve', 'big', GATE], OFFLINE);
    assert.equal(done.status, 0, done.stderr);
    baseline = { output: done.json.output ?? done.json.run?.output, billed: billed(dir).length, refunds: refunds(dir) };
    assert.deepEqual(baseline.refunds, ['refund:big:A-1002']);
    assert.equal(baseline.billed, 5, billed(dir).join(', '));
  });

  /** `extraBilled`: model calls a kill caught in flight, paid and never committed; undefined where the kill's moment is not known. */
  function check(dir: string, extraBilled: number | undefined): void {
    const end = finish(dir);
    assert.equal(end.json.status, 'completed', JSON.stringify(end.json));
    assert.deepEqual(show(dir, 'big').run.output, baseline.output);
    assert.deepEqual(refunds(dir), baseline.refunds, 'refunded once');
    assert.equal(emails(dir).length, 1, 'one email');
    if (extraBilled !== undefined) assert.equal(billed(dir).length, baseline.billed + extraBilled, `billed ${billed(dir).join(', ')}`);
    else assert.ok(billed(dir).length <= baseline.billed + 1, `at most the call in flight bought again: ${billed(dir).join(', ')}`);
    assertOnce(dir);
  }

  // Before the pause: the second model call answered (the refund asked for), its state not yet written; the state
  // written and the gate not yet asked; the gate asked. After the approval, inside the segment that resumed from it.
  for (const [point, extra, when] of [
    ['model.generate#2@after-commit', 0, 'first'],
    ['resolve@after-checkpoint', 0, 'first'],
    ['resolve: approval@before', 0, 'first'],
    ['resolve: resume 1@before', 0, 'approve'],
    ['tool.refund#1@after-start', 0, 'approve'],
    ['tool.refund#1@after-execute', 0, 'approve'],
    // Counted in the attempt that resumes: its first model call, answered and not yet committed.
    ['model.generate#1@after-execute', 1, 'approve'],
    ['resolve: resume 1@after-checkpoint', 0, 'approve'],
  ] as const) {
    it(`killed at ${point} (${when === 'first' ? 'before the pause' : 'after the approval'}): finishes with one refund, no committed call bought again`, () => {
      const dir = tmpDir('logbook-agents-paused-');
      if (when === 'first') {
        const r = cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT, '--crash-at', point], OFFLINE);
        assert.equal(r.signal, 'SIGKILL', `${r.stdout}\n${r.stderr}`);
      } else {
        assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE).status, 3);
        assert.equal(cli(dir, ['approve', 'big', GATE, '--no-resume'], OFFLINE).status, 0);
        const r = cli(dir, ['resume', 'big', '--crash-at', point], OFFLINE);
        assert.equal(r.signal, 'SIGKILL', `${r.stdout}\n${r.stderr}`);
      }
      assert.deepEqual(refunds(dir).length <= 1, true);
      check(dir, extra);
    });
  }

  it('killed by SIGKILL in the middle of the approved refund (refunded, the journal not told): verify finds it, once', () => {
    const dir = tmpDir('logbook-agents-paused-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE).status, 3);
    const r = cli(dir, ['approve', 'big', GATE], { ...OFFLINE, AGENTS_DIE_IN: 'refund' });
    assert.equal(r.signal, 'SIGKILL', r.stderr);
    assert.deepEqual(refunds(dir), ['refund:big:A-1002'], 'the processor refunded before the kill');
    check(dir, 0);
  });

  it('SIGKILLed from outside the moment the refund is asked for, while the paused state is being written: each resumes to one refund', async () => {
    const outcomes: string[] = [];
    // The write takes ~170 ms here (the state read back by the SDK, masked, hashed, checkpointed): kills across it and past it.
    for (const delayMs of [0, 100, 150, 200, 400]) {
      const dir = tmpDir('logbook-agents-paused-');
      const child = cliAsync(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE);
      const ended = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
      // Watches the journal as a reader may: the second model call's commit is the start of the pause's write.
      let db: Database.Database | undefined;
      const watch = setInterval(() => {
        try {
          db ??= new Database(path.join(dir, 'journal.db'), { readonly: true, fileMustExist: true });
          const row = db.prepare("SELECT status FROM actions WHERE run_id = 'big' AND id = 'model:1.2'").get() as { status: string } | undefined;
          if (row?.status === 'committed') {
            clearInterval(watch);
            setTimeout(() => child.kill('SIGKILL'), delayMs);
          }
        } catch {
          // Not created yet.
        }
      }, 1);
      const how = await ended;
      clearInterval(watch);
      db?.close();
      const resolve = show(dir, 'big').steps?.find((x: { name: string }) => x.name === 'resolve')?.status ?? 'not checkpointed';
      outcomes.push(`+${delayMs} ms: ${how}, step resolve ${resolve}`);
      check(dir, 0);
    }
    process.stderr.write(`      kills: ${outcomes.join('; ')}\n`);
    assert.ok(
      outcomes.some((o) => /SIGKILL/.test(o)),
      outcomes.join('\n'),
    );
  });

  it('a damaged paused state is LB_JOURNAL_INVALID (exit 5) with its remedy: nothing refunded, and once repaired the run finishes', () => {
    const dir = tmpDir('logbook-agents-paused-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE).status, 3);
    const good = stepResult(dir, 'resolve');
    // One byte of the SDK's state changed, as a disk or a hand might: the hash no longer matches.
    const bad = JSON.parse(good);
    bad.paused.state = bad.paused.state.replace('"support"', '"suppOrt"');
    assert.notEqual(bad.paused.state, JSON.parse(good).paused.state);
    sql(dir, "UPDATE steps SET result = ? WHERE run_id = 'big' AND name = 'resolve'", JSON.stringify(bad));
    const r = cli(dir, ['approve', 'big', GATE], OFFLINE);
    assert.equal(r.status, 5, `${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stderr,
      /\[LB_JOURNAL_INVALID\] The paused Agents SDK run that step "resolve" of run big journaled is damaged \(its sha256 does not match the state\)/,
    );
    assert.match(r.stderr, /Restore the journal from a backup and resume; or start that part again in a new run: logbook fork big --step "resolve"/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack');
    assert.deepEqual(refunds(dir), [], 'nothing refunded from a damaged state');
    assert.notEqual(show(dir, 'big').run.status, 'failed', 'a journal error is not the script failing');
    // Not the shape Logbook writes at all.
    sql(dir, "UPDATE steps SET result = ? WHERE run_id = 'big' AND name = 'resolve'", JSON.stringify({ paused: { state: 'x' } }));
    const shape = cli(dir, ['resume', 'big'], OFFLINE);
    assert.equal(shape.status, 5, shape.stderr);
    assert.match(shape.stderr, /\[LB_JOURNAL_INVALID\] .*not the shape Logbook writes/);
    // Repaired (the backup restored): the run goes on from the state, refunding once.
    sql(dir, "UPDATE steps SET result = ? WHERE run_id = 'big' AND name = 'resolve'", good);
    check(dir, 0);
  });

  it('a state edited with its hash made to match, for agents the script does not have: LB_NONDETERMINISM names the change, nothing runs', () => {
    const dir = tmpDir('logbook-agents-paused-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE).status, 3);
    const bad = JSON.parse(stepResult(dir, 'resolve'));
    bad.paused.state = bad.paused.state.replaceAll('"support"', '"billing"');
    bad.paused.sha256 = createHash('sha256').update(bad.paused.state).digest('hex');
    sql(dir, "UPDATE steps SET result = ? WHERE run_id = 'big' AND name = 'resolve'", JSON.stringify(bad));
    const r = cli(dir, ['approve', 'big', GATE], OFFLINE);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /failed/);
    assert.match(
      r.stdout,
      /\[LB_NONDETERMINISM\] Run big paused in step "resolve" with agents the script no longer has: the Agents SDK cannot resume the state it kept then \(Agent billing not found\)/,
    );
    assert.deepEqual(refunds(dir), []);
  });

  it('a second driver: two resumes racing after the approval, one drives and the other is refused LB_LEASE_HELD; one refund', async () => {
    const dir = tmpDir('logbook-agents-paused-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'big', ...INPUT], OFFLINE).status, 3);
    assert.equal(cli(dir, ['approve', 'big', GATE, '--no-resume'], OFFLINE).status, 0);
    const race = [0, 1].map(() => {
      const c = cliAsync(dir, ['resume', 'big'], { ...OFFLINE, AGENTS_CHUNK_DELAY_MS: '200' });
      let err = '';
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      return new Promise<{ code: number | null; err: string }>((resolve) => c.on('exit', (code) => resolve({ code, err })));
    });
    const ends = await Promise.all(race);
    const codes = ends.map((e) => e.code).sort();
    assert.deepEqual(codes, [0, 4], ends.map((e) => `${e.code}: ${e.err}`).join('\n'));
    assert.match(ends.find((e) => e.code === 4)!.err, /LB_LEASE_HELD/);
    check(dir, 0);
  });
});
