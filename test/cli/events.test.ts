// run.waitFor and `logbook send` with real processes on a real SQLite file: an event sent before the wait, the same
// dedupe id twice, a timeout then a late send, a send racing a resume, a kill between the delivery and the step that
// uses the event, and the exit codes of every outcome.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { CLI, FIXTURES, ROOT, cli, cliEnded, cliJson, foldRows, show, tmpDir } from '../helpers';

const SCRIPT = path.join(FIXTURES, 'events', 'replier.ts');
const FOLLOW_UP = path.join(ROOT, 'examples', 'follow-up.ts');

interface Wait {
  name: string;
  timeout?: string | number;
}

const input = (waits: Wait[]): string => JSON.stringify({ waits });

function read<T>(dir: string, fn: (db: Database.Database) => T): T {
  // Steps and actions folded from the log first, as any reader does (a live or killed writer may not have yet).
  foldRows(path.join(dir, 'journal.db'));
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const inboxRows = (dir: string, runId: string): Array<{ name: string; id: string; status: string; step_idx: number | null }> =>
  read(dir, (db) => db.prepare('SELECT name, id, status, step_idx FROM inbox WHERE run_id = ? ORDER BY seq').all(runId) as never);

/** The provider's record: one line per execute of answer.send. */
const ledger = (dir: string): string[] => {
  const f = path.join(dir, 'ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean) : [];
};

const runStatus = (dir: string, runId: string): string => show(dir, runId).run.status as string;

describe('run.waitFor and logbook send (SQLite, real processes)', function () {
  this.timeout(180_000);

  it('a foreground run exits 3 when it starts to wait; send continues it (exit 0), and the event reaches the step that uses it once', () => {
    const dir = tmpDir('logbook-events-');
    const first = cliJson(dir, ['run', SCRIPT, '--run-id', 'r']);
    assert.equal(first.status, 3, first.stderr);
    assert.equal(first.json.status, 'waiting');
    assert.deepEqual(first.json.waitingFor, { event: 'reply', until: null });
    const row = read(dir, (db) => db.prepare('SELECT status, waiting_for, lease_token FROM runs WHERE id = ?').get('r')) as Record<string, unknown>;
    assert.deepEqual(row, { status: 'waiting', waiting_for: 'reply', lease_token: null }, 'released: no process holds a waiting run');
    assert.match(cli(dir, ['ls']).stdout, /r\s+replier\s+waiting\s.*waiting for event "reply" \(no timeout\)/);
    assert.match(
      cli(dir, ['plan', 'r']).stdout,
      /waiting\s+for event "reply" with no timeout: `logbook send r reply --data JSON` continues it; resume before it comes stops waiting again \(exit 3\)/,
    );
    // A resume before the event comes stops at the same wait again.
    assert.equal(cli(dir, ['resume', 'r']).status, 3);

    const sent = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"yes"}', '--id', 'mail-1']);
    assert.equal(sent.status, 0, sent.stdout + sent.stderr);
    assert.match(sent.stdout, /^sent event "reply" \(id mail-1\) to run r: it waits for it now$/m);
    assert.match(sent.stdout, /r {2}replier {2}completed/);
    assert.match(sent.stdout, /event {4}"reply" delivered to the wait at step #2/);
    const s = show(dir, 'r');
    assert.deepEqual(s.run.output, { replies: ['yes'], sent: { answered: 'yes' } });
    assert.deepEqual(
      s.inbox.map((e: Record<string, unknown>) => [e.name, e.id, e.status, e.step]),
      [['reply', 'mail-1', 'delivered', 1]],
    );
    assert.deepEqual(ledger(dir), ['answer:r yes']);
  });

  it('an event sent before the run reaches its wait is kept, reported as not awaited now, and taken when the run gets there', () => {
    const dir = tmpDir('logbook-events-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r', '--input', input([{ name: 'first' }, { name: 'reply' }])]).status, 3);
    const early = cliJson(dir, ['send', 'r', 'reply', '--data', '{"text":"early"}', '--id', 'e1']);
    assert.equal(early.status, 0, early.stderr);
    assert.equal(early.json.outcome, 'kept');
    assert.equal(early.json.expect, 'later');
    assert.equal(early.json.waitingFor, 'first');
    assert.equal(early.json.continued, 'not-waiting', 'a run that waits for another event is not resumed');
    assert.match(
      cli(dir, ['send', 'r', 'reply', '--data', '{"text":"x"}', '--no-resume']).stdout,
      /it waits for "first", not for this event\. It is kept until/,
    );
    assert.equal(runStatus(dir, 'r'), 'waiting');
    // The second wait finds the early event in the inbox at once: the run completes in the send's own process.
    const go = cliJson(dir, ['send', 'r', 'first', '--data', '{"text":"go"}']);
    assert.equal(go.status, 0, go.stderr);
    assert.equal(go.json.outcome.status, 'completed');
    assert.deepEqual(go.json.outcome.output.replies, ['go', 'early']);
    // First in, first out: the later "x" is left, and listed as never delivered now that the run ended.
    const s = show(dir, 'r');
    assert.deepEqual(
      s.inbox.map((e: Record<string, unknown>) => [e.name, e.status, e.neverDelivered ?? false]),
      [
        ['reply', 'delivered', false],
        ['reply', 'pending', true],
        ['first', 'delivered', false],
      ],
    );
    assert.match(cli(dir, ['show', 'r']).stdout, /never delivered: the run ended before it waited for it/);
  });

  it('the same dedupe id twice is a no-op that says so, before and after the event is taken', () => {
    const dir = tmpDir('logbook-events-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r', '--input', input([{ name: 'first' }, { name: 'reply' }])]).status, 3);
    assert.equal(cli(dir, ['send', 'r', 'reply', '--data', '{"text":"a"}', '--id', 'hook-7', '--no-resume']).status, 0);
    const again = cliJson(dir, ['send', 'r', 'reply', '--data', '{"text":"b"}', '--id', 'hook-7', '--no-resume']);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.json.outcome, 'duplicate');
    assert.equal(again.json.before.status, 'pending');
    assert.equal(inboxRows(dir, 'r').length, 1, 'nothing was written');
    assert.equal(cli(dir, ['send', 'r', 'first', '--data', '{"text":"go"}']).status, 0);
    const late = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"c"}', '--id', 'hook-7']);
    assert.equal(late.status, 0, late.stdout + late.stderr);
    assert.match(late.stdout, /event "reply" \(id hook-7\) was already sent to run r at .* \(delivered to the wait at step #3\): nothing was written/);
    assert.deepEqual(show(dir, 'r').run.output.replies, ['go', 'a']);
    assert.deepEqual(ledger(dir), ['answer:r go / a']);
    assert.equal(inboxRows(dir, 'r').length, 2);
  });

  it('the timeout is journaled when the wait starts: a resume before it waits again until the same deadline, not a new one', () => {
    const dir = tmpDir('logbook-events-');
    const first = cliJson(dir, ['run', SCRIPT, '--run-id', 'r', '--input', input([{ name: 'reply', timeout: '1h' }])]);
    assert.equal(first.status, 3, first.stderr);
    const until = first.json.waitingFor.until as number;
    assert.match(cli(dir, ['ls']).stdout, new RegExp(`waiting for event "reply" until ${new Date(until).toISOString().replace(/\./g, '\\.')}`));
    const again = cliJson(dir, ['resume', 'r']);
    assert.equal(again.status, 3);
    assert.equal(again.json.waitingFor.until, until);
    assert.equal(show(dir, 'r').run.waitingFor.until, new Date(until).toISOString());
  });

  it('a durable timeout returns undefined; a send after it is reported late (kept), and one to the ended run is refused', async () => {
    const dir = tmpDir('logbook-events-');
    const first = cliJson(dir, ['run', SCRIPT, '--run-id', 'r', '--input', input([{ name: 'reply', timeout: '1500ms' }, { name: 'other' }])]);
    assert.equal(first.status, 3, first.stderr);
    const until = first.json.waitingFor.until as number;
    assert.equal(typeof until, 'number');
    while (Date.now() <= until) await new Promise((r) => setTimeout(r, 100));
    // Sent after the deadline, before any process saw it pass: late, and the resume it starts takes the timeout.
    const lateNow = cliJson(dir, ['send', 'r', 'reply', '--data', '{"text":"too late"}', '--id', 'late-1']);
    assert.equal(lateNow.status, 3, lateNow.stderr);
    assert.equal(lateNow.json.expect, 'late');
    assert.equal(lateNow.json.timedOutAt, until);
    assert.equal(lateNow.json.outcome.status, 'waiting');
    assert.equal(lateNow.json.outcome.waitingFor.event, 'other');
    // After the timeout is journaled: still late, and said so in words.
    const later = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"later still"}', '--id', 'late-2']);
    assert.equal(later.status, 0, later.stdout + later.stderr);
    assert.match(
      later.stdout,
      /to run r too late: its wait for "reply" timed out at .*, before the event came\. It is kept, and taken only if the run waits for "reply" again/,
    );
    const done = cliJson(dir, ['send', 'r', 'other', '--data', '{"text":"ok"}']);
    assert.equal(done.status, 0, done.stderr);
    assert.deepEqual(done.json.outcome.output.replies, [null, 'ok']);
    assert.deepEqual(
      inboxRows(dir, 'r').map((e) => [e.id, e.status]),
      [
        ['late-1', 'pending'],
        ['late-2', 'pending'],
        [inboxRows(dir, 'r')[2]?.id, 'delivered'],
      ],
    );
    const refused = cli(dir, ['send', 'r', 'other', '--data', '{"text":"again"}']);
    assert.equal(refused.status, 2);
    assert.match(
      refused.stderr,
      /\[LB_EVENT_REFUSED\] Run r no longer waits for anything: it completed, so event "other" was not kept \(nothing was written\)/,
    );
    assert.equal(inboxRows(dir, 'r').length, 3);
  });

  it('a send racing a resume: whichever takes the lease, the event is delivered once and the run completes', async () => {
    for (let i = 0; i < 4; i++) {
      const dir = tmpDir('logbook-events-race-');
      assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r']).status, 3);
      const [resumed, sent] = await Promise.all([cliEnded(dir, ['resume', 'r']), cliEnded(dir, ['send', 'r', 'reply', '--data', `{"text":"race ${i}"}`])]);
      // The resume ends completed (it took the event), waiting (it stopped before the event came: the send resumed it),
      // busy (the send's own resume held the lease), or refused (the send's resume had completed it already).
      assert.ok([0, 3, 4].includes(resumed.code ?? -1) || /LB_RUN_NOT_RESUMABLE\] Run r already completed/.test(resumed.out), resumed.out);
      assert.equal(sent.code, 0, sent.out);
      assert.equal(runStatus(dir, 'r'), 'completed', `${resumed.out}\n${sent.out}`);
      assert.deepEqual(ledger(dir), [`answer:r race ${i}`]);
      assert.deepEqual(
        inboxRows(dir, 'r').map((e) => e.status),
        ['delivered'],
      );
    }
  });

  it('killed between the delivery and the step that uses it, the resume uses the event once and takes no other', () => {
    const dir = tmpDir('logbook-events-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r']).status, 3);
    const killed = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"one"}', '--id', 'one', '--crash-at', 'reply@event:after-deliver']);
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    assert.match(killed.stderr, /--crash-at reply#1@event:after-deliver reached in run r/);
    // The delivery and the wait's checkpoint are one commit: both are there, and nothing after them.
    const steps = read(dir, (db) => db.prepare('SELECT idx, name, status, result FROM steps WHERE run_id = ? ORDER BY idx').all('r')) as Array<{
      name: string;
      status: string;
      result: string | null;
    }>;
    assert.deepEqual(
      steps.map((s) => [s.name, s.status]),
      [
        ['ask', 'completed'],
        ['reply', 'completed'],
      ],
    );
    assert.equal((JSON.parse(steps[1]?.result ?? 'null') as { event: { id: string } }).event.id, 'one');
    assert.deepEqual(
      inboxRows(dir, 'r').map((e) => [e.id, e.status]),
      [['one', 'delivered']],
    );
    assert.deepEqual(ledger(dir), []);
    // Another event of the same name, sent before the resume: the replayed wait must not take it.
    const two = cliJson(dir, ['send', 'r', 'reply', '--data', '{"text":"two"}', '--id', 'two', '--no-resume']);
    assert.equal(two.json.expect, 'later');
    const r = cliJson(dir, ['resume', 'r']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json.output.replies, ['one']);
    assert.equal(r.json.stats.stepsReplayed, 2);
    assert.deepEqual(ledger(dir), ['answer:r one']);
    assert.deepEqual(
      inboxRows(dir, 'r').map((e) => [e.id, e.status]),
      [
        ['one', 'delivered'],
        ['two', 'pending'],
      ],
    );
  });

  it("an event the wait's schema refuses is kept as refused, and the wait goes on for the next", () => {
    const dir = tmpDir('logbook-events-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r']).status, 3);
    const bad = cliJson(dir, ['send', 'r', 'reply', '--data', '{"txt":"typo"}', '--id', 'bad']);
    assert.equal(bad.status, 3, 'resumed, refused the event, waits again');
    assert.equal(bad.json.event.status, 'refused');
    assert.match(JSON.stringify(bad.json.event.error), /text/);
    assert.match(cli(dir, ['show', 'r']).stdout, /refused by the wait's schema at step #2: text: /);
    const good = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"fixed"}']);
    assert.equal(good.status, 0, good.stdout + good.stderr);
    assert.deepEqual(show(dir, 'r').run.output.replies, ['fixed']);
  });

  it('a secret planted in an event is never printed: send warns by field name, show masks it by value', () => {
    const dir = tmpDir('logbook-events-');
    const env = { PLANTED_API_KEY: 'sk-planted-8f3a9d2e71' };
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r']).status, 3);
    const sent = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"sk-planted-8f3a9d2e71","apiKey":"sk-planted-8f3a9d2e71"}'], env);
    assert.equal(sent.status, 0, sent.stdout + sent.stderr);
    assert.match(sent.stderr, /warning: data\.apiKey is named like a secret, and the data of event "reply" is journaled in plain text/);
    for (const out of [sent.stdout, sent.stderr, cli(dir, ['show', 'r'], env).stdout, cli(dir, ['show', 'r', '--json'], env).stdout])
      assert.doesNotMatch(out, /sk-planted-8f3a9d2e71/);
    assert.match(cli(dir, ['show', 'r', '--json'], env).stdout, /«secret»/);
  });

  it('examples/follow-up.ts: emails, sleeps, waits for the reply (exit 3), hands drafting to a child run, and answers once, across a kill in the child', () => {
    const dir = tmpDir('logbook-events-');
    const first = cliJson(dir, ['run', FOLLOW_UP, '--run-id', 'f', '--input', '{"to":"ada@example.com","pause":"0s"}']);
    assert.equal(first.status, 3, first.stderr);
    assert.equal(first.json.waitingFor.event, 'reply');
    // The reply continues the run; it dies inside the drafting child, its draft checkpointed, before the child ends.
    const killed = cli(dir, ['send', 'f', 'reply', '--data', '{"text":"Tuesday works"}', '--crash-at', 'draft#1@after-checkpoint']);
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    const kids = (cliJson(dir, ['ls']).json as Array<{ id: string; parent: { runId: string } | null }>).filter((r) => r.id !== 'f');
    assert.deepEqual(
      kids.map((k) => k.parent?.runId),
      ['f'],
      'one child run, started by f',
    );
    const child = kids[0]?.id ?? '';
    assert.equal(runStatus(dir, child), 'interrupted');
    const done = cliJson(dir, ['resume', 'f']);
    assert.equal(done.status, 0, done.stderr);
    assert.deepEqual(done.json.output, { replied: true, reply: 'Tuesday works' });
    assert.equal(runStatus(dir, child), 'completed', 'the parent re-attached to its child and resumed it');
    assert.equal((cliJson(dir, ['ls']).json as unknown[]).length, 2, 'one child, never a second');
    const sent = (JSON.parse(fs.readFileSync(path.join(dir, 'email-outbox.json'), 'utf8')) as { sent: Array<{ key: string }> }).sent.map((e) => e.key);
    assert.deepEqual(sent, ['email:f:intro', 'email:f:answer']);
    const bodies = (show(dir, 'f').actions as Array<{ args: { body: string } }>).map((a) => a.args.body);
    assert.deepEqual(bodies.slice(1), ['Thanks for your reply: "Tuesday works". Talk soon!'], "the child's draft is what was sent");
  });

  it('logbook rehearse: --event feeds a waiting run, event:after-deliver is a kill point, and a rehearsal without it says which event to pass', () => {
    const dir = tmpDir('logbook-events-');
    const input = '{"to":"ada@example.com","pause":"0s"}';
    // A rehearsal keeps its own journals: no --journal.
    const rehearse = (args: string[]) => {
      const r = spawnSync(process.execPath, [CLI, 'rehearse', FOLLOW_UP, '--input', input, ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
        timeout: 300_000,
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const listed = rehearse(['--event', 'reply={"text":"yes"}', '--list', '--json']);
    assert.equal(listed.status, 0, listed.stderr);
    const specs = (JSON.parse(listed.stdout) as { available: Array<{ spec: string }> }).available.map((p) => p.spec);
    assert.ok(specs.includes('reply#1@event:after-deliver'), specs.join(' '));
    const one = rehearse(['--event', 'reply={"text":"yes"}', '--point', 'reply#1@event:after-deliver', '--json']);
    assert.equal(one.status, 0, one.stdout + one.stderr);
    assert.equal((JSON.parse(one.stdout) as { ok: boolean }).ok, true);
    const without = rehearse(['--list']);
    assert.notEqual(without.status, 0);
    assert.match(without.stderr, /the run waits for event "reply": pass --event reply=JSON to rehearse past it/);
  });

  it('refuses bad sends with exit 2 and writes nothing; --no-resume only delivers', () => {
    const dir = tmpDir('logbook-events-');
    assert.equal(cli(dir, ['run', SCRIPT, '--run-id', 'r']).status, 3);
    const cases: Array<[string[], RegExp]> = [
      [['send', 'r', 'reply', '--data', '{not json'], /\[LB_USAGE\] --data is not valid JSON: .*Nothing was written/],
      [['send', 'nope', 'reply'], /\[LB_RUN_NOT_FOUND\]/],
      [['send', 'r', 'logbook:approval:x', '--no-resume'], /\[LB_USAGE\] logbook send: event names that start with "logbook:" are Logbook's own/],
      [['send', 'r', '', '--no-resume'], /\[LB_USAGE\] logbook send: the event name is missing or empty/],
      [['send', 'r'], /\[LB_USAGE\] Expected 2 argument\(s\), got 1/],
    ];
    for (const [args, re] of cases) {
      const r = cli(dir, args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
    }
    assert.equal(inboxRows(dir, 'r').length, 0);
    const only = cli(dir, ['send', 'r', 'reply', '--data', '{"text":"later"}', '--no-resume']);
    assert.equal(only.status, 0, only.stderr);
    assert.equal(runStatus(dir, 'r'), 'waiting', '--no-resume only delivers');
    assert.match(cli(dir, ['plan', 'r']).stdout, /resume takes the event kept for it/);
    assert.equal(cli(dir, ['resume', 'r']).status, 0);
    assert.deepEqual(ledger(dir), ['answer:r later']);
  });
});
