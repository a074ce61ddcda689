// The LangGraph refund desk (examples/langgraph-refund.ts) as a Logbook run: its interrupt() waits for a person and is
// answered from the CLI, and a real SIGKILL in the middle of a node's email (or around the interrupt) sends nothing twice.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EXAMPLES, cli, cliJson, show, tmpDir } from '../helpers';
import { pointsOf, readJson } from './crash';
import { rehearse } from '../rehearse/util';

const SCRIPT = path.join(EXAMPLES, 'langgraph-refund.ts');
const INPUT = '{"customer":"ada@example.com","amount":40}';

function sentKeys(dir: string): string[] {
  try {
    return (readJson(dir, 'email-outbox.json').sent as { key: string }[]).map((s) => s.key);
  } catch {
    return [];
  }
}

/** Resumes (approving each interrupt with `note`) until the run ends; returns the last `logbook resume` answer. */
/** The provider ignores idempotency keys, as many real APIs do: a repeated send is a second email. */
const NO_DEDUPE = { OUTBOX_IGNORE_KEYS: '1' };

function driveToEnd(dir: string, note = '{"approve":true}'): any {
  for (let i = 0; i < 6; i++) {
    const j = show(dir, 'r');
    if (j.run.status === 'completed' || j.run.status === 'failed') return j;
    const gate = j.actions.find((a: any) => a.status === 'awaiting-approval' && a.approval === 'pending');
    const r = gate ? cli(dir, ['approve', 'r', gate.id, '--note', note], NO_DEDUPE) : cli(dir, ['resume', 'r'], NO_DEDUPE);
    assert.ok(r.status !== 1 && r.status !== 2, `${r.stdout}${r.stderr}`);
  }
  assert.fail('the run did not end after six resumes');
}

describe('LangGraph: a thread is a Logbook run (examples/langgraph-refund.ts)', function () {
  this.timeout(600_000);

  it('waits at interrupt() as an approval gate, resumes from the CLI with the note as the answer, and sends each email once', () => {
    const dir = tmpDir();
    const first = cli(dir, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    assert.equal(first.status, 3, first.stdout + first.stderr);
    assert.match(first.stdout, /awaiting approval/);
    let j = show(dir, 'r');
    assert.equal(j.run.status, 'awaiting-approval');
    const gate = j.actions.find((a: any) => a.type === 'langgraph.interrupt');
    assert.equal(gate.status, 'awaiting-approval');
    assert.equal(gate.id, 'langgraph:r:interrupt:review@3:0', 'keyed by the node and superstep that raised it');
    assert.equal(sentKeys(dir).length, 1, 'the acknowledgement went out before the interrupt');

    const done = cliJson(dir, ['approve', 'r', gate.id, '--note', '{"approve":false}']);
    assert.equal(done.status, 0, done.stderr);
    j = show(dir, 'r');
    assert.equal(j.run.status, 'completed');
    assert.equal(j.run.output.approved, false, 'the note answered interrupt()');
    // The thread is the run: its nodes' executions are its steps (review twice: stopped at interrupt(), then answered).
    assert.deepEqual(
      j.steps.map((s: any) => s.name),
      ['refund desk', 'acknowledge@1', 'propose@2', 'review@3', 'interrupt: review@3', 'review@3', 'reply@4', 'refund desk: end'],
    );
    assert.deepEqual(
      j.steps.map((s: any) => s.result?.outcome ?? null),
      [null, 'done', 'done', 'interrupted', null, 'done', 'done', null],
    );
    // Each email is an action of the node step that sent it.
    const stepOf = (id: string): string => j.steps[j.actions.find((a: any) => a.id === id).step].name;
    assert.equal(stepOf('langgraph:r:acknowledge@1/email:ada@example.com'), 'acknowledge@1');
    assert.equal(stepOf('langgraph:r:reply@4/email:ada@example.com'), 'reply@4');
    assert.equal(stepOf('langgraph:r:interrupt:review@3:0'), 'interrupt: review@3');
    const keys = sentKeys(dir);
    assert.equal(keys.length, 2);
    assert.ok(
      keys.every((k) => /^langgraph:r:(acknowledge@1|reply@4)\/email:ada@example.com$/.test(k)),
      `keyed by thread, namespace and task: ${keys.join(', ')}`,
    );
    // The checkpoints are in the run's own journal, channel values by version.
    const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
    try {
      const n = (t: string): number => (db.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE thread_id = 'r'`).get() as { n: number }).n;
      assert.ok(n('graph_checkpoints') >= 5, 'one checkpoint per superstep');
      assert.ok(n('graph_blobs') < n('graph_checkpoints') * 4, 'not every channel stored at every checkpoint');
    } finally {
      db.close();
    }
    // Deleting the run deletes its thread.
    assert.equal(cli(dir, ['delete', 'r']).status, 0);
    const after = new Database(path.join(dir, 'journal.db'), { readonly: true });
    try {
      assert.equal((after.prepare("SELECT COUNT(*) AS n FROM graph_checkpoints WHERE thread_id = 'r'").get() as { n: number }).n, 0);
    } finally {
      after.close();
    }
  });

  it('SIGKILL in the middle of each email and around the interrupt, against a provider that ignores keys: same output, no email twice', () => {
    const base = tmpDir();
    cli(base, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    const clean = driveToEnd(base);
    assert.equal(clean.run.status, 'completed');
    // In the middle of each email (started, or sent and not yet committed), and around the interrupt: the rehearsal
    // below tries every other point.
    const points = pointsOf(clean).filter(
      (p) =>
        p.phase === 'action:after-start' ||
        p.phase === 'action:after-execute' ||
        p.type === 'langgraph.interrupt' ||
        ['review@3', 'reply@4', 'refund desk: end'].includes(p.target),
    );
    assert.ok(points.some((p) => p.spec === 'email.send#1@after-execute') && points.some((p) => p.spec === 'email.send#2@after-start'));
    for (const p of points) {
      const dir = tmpDir();
      let r = cli(dir, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r', '--crash-at', p.spec], NO_DEDUPE);
      // A point after the gate is reached on the resume that the approval starts.
      if (r.signal !== 'SIGKILL') {
        const stopped = show(dir, 'r');
        const gate = stopped.actions.find((a: any) => a.status === 'awaiting-approval' && a.approval === 'pending');
        assert.ok(gate, `${p.spec}: ${r.stdout}${r.stderr}`);
        // A crash point counts occurrences in its own process: the resume's first email is its email.send#1.
        const [, target, n, phase] = /^(.*)#(\d+)@(.*)$/.exec(p.spec) ?? [];
        const before = p.type
          ? stopped.actions.filter((a: any) => a.type === p.type && a.id !== gate.id).length
          : stopped.steps.filter((st: any) => st.name === target && st.status === 'completed').length;
        const spec = `${target}#${Number(n) - before}@${phase}`;
        r = cli(dir, ['approve', 'r', gate.id, '--note', '{"approve":true}', '--crash-at', spec], NO_DEDUPE);
      }
      assert.equal(r.signal, 'SIGKILL', `expected a kill at ${p.spec}: ${r.stdout}${r.stderr}`);
      const end = driveToEnd(dir);
      assert.deepEqual(end.run.output, clean.run.output, `same output after a crash at ${p.spec}`);
      const keys = sentKeys(dir);
      assert.equal(new Set(keys).size, keys.length, `an email went out twice after a crash at ${p.spec}`);
      assert.equal(keys.length, 2, `both emails went out after a crash at ${p.spec}`);
    }
  });

  it('logbook rehearse --points all: every run finishes with the uncrashed output and the same effects, none twice', () => {
    const cwd = tmpDir();
    const r = rehearse(cwd, [SCRIPT, '--input', INPUT, '--points', 'all', '--jobs', '2']);
    const sum = r.report.summary;
    assert.ok(sum.points >= 20, `points tried: ${sum.points}`);
    assert.equal(sum.finished, sum.points, r.stdout + r.stderr);
    assert.equal(sum.sameOutput, sum.points);
    assert.equal(
      sum.sameEffects.matched,
      sum.sameEffects.compared,
      JSON.stringify(r.report.campaigns.map((c: any) => c.effectsDiff).filter((d: any) => d?.length)),
    );
    assert.equal(sum.withDuplicates, 0);
    assert.equal(sum.unsettled, 0);
    assert.deepEqual(sum.errors, []);
    assert.equal(r.status, 0, r.stderr);
  });

  it("time travel is `logbook fork`: the fork records its origin, its thread starts from the origin's checkpoint at the fork point, and a new answer takes another branch", () => {
    const dir = tmpDir();
    cli(dir, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    assert.equal(cliJson(dir, ['approve', 'r', 'langgraph:r:interrupt:review@3:0', '--note', '{"approve":false}']).json.output.approved, false);
    // Back to the interrupt (step #5, its gate): the fork waits there again, for its own answer.
    const f = cli(dir, ['fork', 'r', '--step', '5', '--run-id', 'f']);
    assert.equal(f.status, 3, f.stdout + f.stderr);
    const done = cliJson(dir, ['approve', 'f', 'langgraph:f:interrupt:review@3:0', '--note', '{"approve":true}']);
    assert.equal(done.status, 0, done.stderr);
    const j = show(dir, 'f');
    assert.deepEqual(j.run.forkedFrom, { runId: 'r', step: 4 });
    assert.deepEqual(
      j.steps.map((st: any) => st.name),
      ['refund desk', 'acknowledge@1', 'propose@2', 'review@3', 'interrupt: review@3', 'review@3', 'reply@4', 'refund desk: end'],
    );
    assert.equal(j.run.output.approved, true, 'the fork went on from the interrupt with its own answer');
    assert.deepEqual(j.run.output.log.slice(0, 2), ['acknowledged', 'model: refund 40 EUR in full'], "the thread before the fork point is the origin's");
    // The acknowledgement was replayed, not sent again; the fork's reply is its own effect.
    assert.deepEqual(sentKeys(dir), [
      'langgraph:r:acknowledge@1/email:ada@example.com',
      'langgraph:r:reply@4/email:ada@example.com',
      'langgraph:f:reply@4/email:ada@example.com',
    ]);
  });
});
