// The LangGraph refund desk (examples/langgraph-refund.ts) as a Logbook run: its interrupt() waits for a person and is
// answered from the CLI, and a real SIGKILL in the middle of a node's email (or around the interrupt) sends nothing twice.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
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

function driveToEnd(dir: string, note = '{"approve":true}', runId = 'r'): any {
  for (let i = 0; i < 6; i++) {
    const j = show(dir, runId);
    if (j.run.status === 'completed' || j.run.status === 'failed') return j;
    const gate = j.actions.find((a: any) => a.status === 'awaiting-approval' && a.approval === 'pending');
    const r = gate ? cli(dir, ['approve', runId, gate.id, '--note', note], NO_DEDUPE) : cli(dir, ['resume', runId], NO_DEDUPE);
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

describe("LangGraph's time travel is a fork in the journal (examples/langgraph-refund.ts)", function () {
  this.timeout(600_000);

  /** The checkpoint run `runId`'s node step `name` ran from (what graph.getStateHistory would list). */
  const ranFrom = (dir: string, runId: string, name: string): string => {
    const step = show(dir, runId).steps.find((s: any) => s.name === name);
    assert.ok(typeof step?.result?.checkpoint === 'string', `${runId} has a ${name} step with its checkpoint`);
    return step.result.checkpoint as string;
  };

  it('runGraph from a past checkpoint of another run: a new run recorded as its fork, its thread branched there, its effects its own', () => {
    const dir = tmpDir();
    cli(dir, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    assert.equal(cliJson(dir, ['approve', 'r', 'langgraph:r:interrupt:review@3:0', '--note', '{"approve":false}']).json.output.approved, false);
    const before = ranFrom(dir, 'r', 'review@3');
    const from = JSON.stringify({ customer: 'ada@example.com', amount: 40, from: { thread: 'r', checkpoint: before } });
    const t = cli(dir, ['run', SCRIPT, '--input', from, '--run-id', 't']);
    assert.equal(t.status, 3, `it waits at the interrupt again, for its own answer: ${t.stdout}${t.stderr}`);
    let j = show(dir, 't');
    // The sidebar and `logbook show` read the origin off the run's row: r, at its step #4 (review@3), the first to run from it.
    assert.deepEqual(j.run.forkedFrom, { runId: 'r', step: 3 });
    assert.match(cli(dir, ['show', 't']).stdout, /^ {2}fork of r at step #4$/m);
    assert.deepEqual(j.steps[0].result.from, { run: 'r', checkpoint: before, step: 3 });
    assert.deepEqual(
      j.steps.map((s: any) => s.name),
      ['refund desk', 'review@3', 'interrupt: review@3'],
      'the fork runs on from the checkpoint: nothing before it runs again',
    );
    const journaled = (sql: string, ...args: unknown[]): unknown[] => {
      const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
      try {
        return db.prepare(sql).all(...args);
      } finally {
        db.close();
      }
    };
    assert.deepEqual(
      journaled("SELECT data FROM events WHERE run_id = 't' AND kind = 'run.forked'").map((e: any) => JSON.parse(e.data)),
      [{ from: 'r', atStep: 3, checkpoint: before, via: 'langgraph' }],
    );
    // Its thread is r's up to that checkpoint (the same checkpoints, so LangGraph's history reads the same)...
    const upTo = (thread: string): unknown[] =>
      journaled(
        "SELECT checkpoint_id, parent_id FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id <= ? ORDER BY checkpoint_id",
        thread,
        before,
      );
    assert.deepEqual(upTo('t'), upTo('r'));
    const done = cliJson(dir, ['approve', 't', 'langgraph:t:interrupt:review@3:0', '--note', '{"approve":true}']);
    assert.equal(done.status, 0, done.stderr);
    j = show(dir, 't');
    assert.equal(j.run.output.approved, true);
    assert.deepEqual(j.run.output.log, ['acknowledged', 'model: refund 40 EUR in full', 'approved', 'replied msg-3']);
    assert.deepEqual(sentKeys(dir), [
      'langgraph:r:acknowledge@1/email:ada@example.com',
      'langgraph:r:reply@4/email:ada@example.com',
      'langgraph:t:reply@4/email:ada@example.com',
    ]);
    assert.equal(show(dir, 'r').run.output.approved, false, "the origin's thread and output are as they were");
    // ...and its own branch from there: one child of the past checkpoint in each thread.
    for (const thread of ['r', 't'])
      assert.equal(journaled("SELECT 1 FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND parent_id = ?", thread, before).length, 1);

    // A fork of that fork (logbook fork, at its gate): it inherits the time travel and waits for its own answer.
    const g = cli(dir, ['fork', 't', '--step', '3', '--run-id', 'g']);
    assert.equal(g.status, 3, g.stdout + g.stderr);
    assert.equal(cliJson(dir, ['approve', 'g', 'langgraph:g:interrupt:review@3:0', '--note', '{"approve":false}']).json.output.approved, false);
    assert.deepEqual(show(dir, 'g').run.forkedFrom, { runId: 't', step: 2 });
    // And time travel from the fork's own thread (a fork of a fork by checkpoint).
    const u = cli(dir, ['run', SCRIPT, '--input', JSON.stringify({ from: { thread: 't', checkpoint: ranFrom(dir, 't', 'review@3') } }), '--run-id', 'u']);
    assert.equal(u.status, 3, u.stdout + u.stderr);
    assert.equal(cliJson(dir, ['approve', 'u', 'langgraph:u:interrupt:review@3:0', '--note', '{"approve":true}']).json.output.approved, true);
    assert.deepEqual(show(dir, 'u').run.forkedFrom, { runId: 't', step: 1 });
    const keys = sentKeys(dir);
    assert.equal(new Set(keys).size, keys.length);
    assert.deepEqual(keys.slice(3), ['langgraph:g:reply@4/email:ada@example.com', 'langgraph:u:reply@4/email:ada@example.com']);
  });

  it('a crash in the time-travelling run (after its start, in the first node, after it) resumes on the branch: nothing twice, one branch', () => {
    const base = tmpDir();
    cli(base, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    cliJson(base, ['approve', 'r', 'langgraph:r:interrupt:review@3:0', '--note', '{"approve":false}']);
    for (const at of ['refund desk#1@after-checkpoint', 'review@3#1@step:before', 'review@3#1@after-checkpoint']) {
      const dir = tmpDir();
      fs.cpSync(path.join(base, 'journal.db'), path.join(dir, 'journal.db'));
      for (const f of ['email-outbox.json']) if (fs.existsSync(path.join(base, f))) fs.cpSync(path.join(base, f), path.join(dir, f));
      const from = JSON.stringify({ from: { thread: 'r', checkpoint: ranFrom(dir, 'r', 'review@3') } });
      const k = cli(dir, ['run', SCRIPT, '--input', from, '--run-id', 't', '--crash-at', at], NO_DEDUPE);
      assert.equal(k.signal, 'SIGKILL', `${at}: ${k.stdout}${k.stderr}`);
      const end = driveToEnd(dir, '{"approve":true}', 't');
      assert.equal(end.run.output.approved, true, at);
      const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
      try {
        const forks = db.prepare("SELECT COUNT(*) AS n FROM graph_checkpoints WHERE thread_id = 't' AND parent_id = ?").get(ranFrom(dir, 'r', 'review@3')) as {
          n: number;
        };
        assert.equal(forks.n, 1, `${at}: the thread branched from the past checkpoint once`);
      } finally {
        db.close();
      }
      const keys = sentKeys(dir);
      assert.deepEqual(
        keys,
        ['langgraph:r:acknowledge@1/email:ada@example.com', 'langgraph:r:reply@4/email:ada@example.com', 'langgraph:t:reply@4/email:ada@example.com'],
        at,
      );
    }
  });

  it("graph.invoke from a past checkpoint of a run's thread, outside runGraph, is refused before any node runs (LB_USAGE), and the thread is unchanged", async () => {
    const dir = tmpDir();
    cli(dir, ['run', SCRIPT, '--input', INPUT, '--run-id', 'r']);
    cliJson(dir, ['approve', 'r', 'langgraph:r:interrupt:review@3:0', '--note', '{"approve":false}']);
    const journal = path.join(dir, 'journal.db');
    const count = (): number => {
      const db = new Database(journal, { readonly: true });
      try {
        return (db.prepare("SELECT COUNT(*) AS n FROM graph_checkpoints WHERE thread_id = 'r'").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const n = count();
    // The example's graph, in this process, on the run's journal: LangGraph's own time-travel call.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { graph } = require(SCRIPT) as { graph: { invoke(input: unknown, config: unknown): Promise<unknown> } };
    const was = process.env.LOGBOOK_JOURNAL;
    process.env.LOGBOOK_JOURNAL = journal;
    try {
      await assert.rejects(
        graph.invoke(null, { configurable: { thread_id: 'r', checkpoint_id: ranFrom(dir, 'r', 'review@3') } }),
        (err: any) => err.code === 'LB_USAGE' && /is Logbook run r/.test(err.message) && /runGraph\(run, graph, null/.test(err.remedy),
      );
    } finally {
      if (was === undefined) delete process.env.LOGBOOK_JOURNAL;
      else process.env.LOGBOOK_JOURNAL = was;
    }
    assert.equal(count(), n, 'nothing was written to the thread');
    assert.deepEqual(sentKeys(dir).length, 2, 'no node ran');
  });
});
