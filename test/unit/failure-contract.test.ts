// The failure contract: an error from execute is not proof that nothing happened; only definite failures are `failed`.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { DefiniteFailure, compensateRun, defineAction, defineAgent, openStore, resumeRun, startRun, type Store } from '../../src/runtime';
import { planResume } from '../../src/plan/resumePlan';
import { planCompensation } from '../../src/plan/compensationPlan';
import { actionRegistry } from '../../src/runtime/define';
import { actionJson, showRun } from '../../src/cli/inspect';
import { JournalQueries } from '../../src/reader/queries';
import { MIGRATIONS } from '../../src/runtime/store/migrations';
import { tmpDir } from '../helpers';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { dbOf } from '../../src/runtime/store/db';

const quiet = { log: () => undefined };
const defs = (type: string) => actionRegistry().get(type);

/** An outside system that records every effect by key, like a provider's own log. */
class Provider {
  readonly seen: string[] = [];
  /** The next call performs its effect and then throws this (the answer was lost). */
  throwAfter: Error | undefined;
  /** The next call throws this before doing anything (the system refused). */
  throwBefore: Error | undefined;
  call(key: string): { receipt: string } {
    const before = this.throwBefore;
    this.throwBefore = undefined;
    if (before) throw before;
    this.seen.push(key);
    const after = this.throwAfter;
    this.throwAfter = undefined;
    if (after) throw after;
    return { receipt: `r-${this.seen.length}` };
  }
  find(key: string): { receipt: string } | undefined {
    const i = this.seen.indexOf(key);
    return i < 0 ? undefined : { receipt: `r-${i + 1}` };
  }
}

function timeout(): Error {
  return Object.assign(new Error('connect ETIMEDOUT 10.0.0.7:443'), { code: 'ETIMEDOUT' });
}

describe('failure contract: errors from execute', () => {
  let store: Store;
  let p: Provider;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
    p = new Provider();
  });
  afterEach(() => store.close());

  function charge(type: string, opts: { verify?: boolean; failure?: (err: unknown) => 'not-happened' | 'in-doubt' } = {}) {
    return defineAction({
      type,
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ n: z.number() }),
      key: (a, run) => `${type}:${run.id}:${a.n}`,
      execute: (_a, { idempotencyKey }) => p.call(idempotencyKey),
      ...(opts.verify ? { verify: (_a: unknown, { idempotencyKey }: { idempotencyKey: string }) => p.find(idempotencyKey) } : {}),
      ...(opts.failure ? { failure: opts.failure } : {}),
    });
  }

  function agentOf(name: string, action: ReturnType<typeof charge>) {
    return defineAgent({
      name,
      input: z.object({}),
      run: async (run) => {
        const r = await run.step('charge', () => run.do(action, { n: 1 }));
        // A decision that it happened gives no result (the journal never saw one).
        return (r as { receipt: string } | undefined)?.receipt ?? 'decided';
      },
    });
  }

  it('no verify: the action stays in doubt with its error, the run is resumable, and resume stops for a decision (no second charge)', async () => {
    const action = charge('fc.nv');
    const agent = agentOf('fc-nv', action);
    p.throwAfter = timeout();
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'nv', ...quiet });
    assert.equal(first.status, 'failed');
    assert.match(first.error?.message ?? '', /ETIMEDOUT/, 'the script (and the run) saw the error itself');
    const row = store.reader.action('nv', 'fc.nv:nv:1');
    assert.equal(row?.status, 'started', 'in doubt, not failed');
    assert.match(row?.error ?? '', /ETIMEDOUT/);
    const json = actionJson(row, false);
    assert.equal(json.inDoubt, true);
    assert.equal(json.display, 'in-doubt-after-error');
    assert.match(showRun(store, 'nv', false), /in doubt after an error[\s\S]*ETIMEDOUT/);

    const plan = planResume(store, 'nv', defs, true);
    assert.equal(plan.canResume, true);
    assert.equal(plan.inDoubt[0]?.reconcile, 'needs-decision');
    assert.match(plan.inDoubt[0]?.afterError ?? '', /ETIMEDOUT/);
    assert.deepEqual(plan.stops, { kind: 'needs-decision', actionId: 'fc.nv:nv:1', type: 'fc.nv' });

    const second = await resumeRun(store, agent, 'nv', quiet);
    assert.equal(second.status, 'needs-decision');
    assert.equal(new JournalQueries(store).run({ runId: 'nv' })?.compensationStopped, false, 'stopped going forward: a decision resumes it');
    assert.equal(p.seen.length, 1, 'resume did not execute it again');
    const third = await resumeRun(store, agent, 'nv', { ...quiet, decisions: { 'fc.nv:nv:1': 'happened' } });
    assert.equal(third.status, 'completed');
    assert.equal(p.seen.length, 1);
    assert.equal(store.reader.action('nv', 'fc.nv:nv:1')?.reconciliation, 'decided-happened');
  });

  it("a compensation's stop for a decision is not a forward one: resume is refused (it may have undone actions), and the compensation finishes", async () => {
    const action = charge('fc.cs');
    const agent = agentOf('fc-cs', action);
    p.throwAfter = timeout();
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'cs', ...quiet })).status, 'failed');
    const stopped = await compensateRun(store, 'cs', quiet);
    assert.equal(stopped.status, 'needs-decision');
    const row = store.reader.run('cs')!;
    assert.equal(row.status, 'needs-decision');
    assert.equal(store.reader.view(row).compensationStopped, true);
    assert.equal(planResume(store, 'cs', defs, true).canResume, false);
    const dto = new JournalQueries(store).run({ runId: 'cs' });
    assert.equal(dto?.canResume, false, 'the sidebar offers no Resume');
    assert.equal(dto?.compensationStopped, true, "the sidebar's Decide goes to the compensation");
    const before = JSON.stringify(store.reader.run('cs'));
    await assert.rejects(
      resumeRun(store, agent, 'cs', { ...quiet, decisions: { 'fc.cs:cs:1': 'happened' } }),
      (err: Error & { code?: string }) =>
        err.code === 'LB_RUN_NOT_RESUMABLE' &&
        /compensation stopped for a decision/.test(err.message) &&
        /logbook compensate cs --decide/.test(String((err as { remedy?: string }).remedy ?? err.message)),
    );
    assert.equal(JSON.stringify(store.reader.run('cs')), before, 'the refused resume changed nothing');
    assert.equal(p.seen.length, 1);
    const done = await compensateRun(store, 'cs', { ...quiet, decisions: { 'fc.cs:cs:1': 'not-happened' } });
    assert.equal(done.status, 'compensated');
    assert.equal(p.seen.length, 1, 'nothing was charged again');
  });

  it('a decision answers one episode of doubt: executed again after "not happened" and timing out again, it is asked anew (no blind third send)', async () => {
    const action = charge('fc.twice');
    const agent = agentOf('fc-twice', action);
    p.throwAfter = timeout();
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'tw', ...quiet });
    p.throwAfter = timeout();
    // A wrong "not happened": it executes again with the same key, and times out again.
    const second = await resumeRun(store, agent, 'tw', { ...quiet, decisions: { 'fc.twice:tw:1': 'not-happened' } });
    assert.equal(second.status, 'failed');
    assert.equal(p.seen.length, 2);
    assert.equal(store.reader.action('tw', 'fc.twice:tw:1')?.decision, null, 'the old decision does not carry over');
    const third = await resumeRun(store, agent, 'tw', quiet);
    assert.equal(third.status, 'needs-decision');
    assert.equal(p.seen.length, 2, 'not executed a third time on the strength of the earlier decision');
  });

  it('with verify: resume asks verify; found → committed with the verified result, without executing again', async () => {
    const action = charge('fc.v', { verify: true });
    const agent = agentOf('fc-v', action);
    p.throwAfter = timeout();
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'v', ...quiet })).status, 'failed');
    assert.equal(planResume(store, 'v', defs, true).inDoubt[0]?.reconcile, 'verify');
    const out = await resumeRun(store, agent, 'v', quiet);
    assert.equal(out.status, 'completed');
    assert.equal(out.output, 'r-1', 'the verified result is what the script gets');
    assert.deepEqual(p.seen, ['fc.v:v:1']);
    assert.equal(store.reader.action('v', 'fc.v:v:1')?.reconciliation, 'verified');
    assert.equal(store.reader.action('v', 'fc.v:v:1')?.error, null);
  });

  it('with verify: when the error came before the effect, verify finds nothing and it is executed again with the same key', async () => {
    const action = charge('fc.va', { verify: true });
    const agent = agentOf('fc-va', action);
    p.throwBefore = timeout();
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'va', ...quiet })).status, 'failed');
    assert.equal(store.reader.action('va', 'fc.va:va:1')?.status, 'started');
    const out = await resumeRun(store, agent, 'va', quiet);
    assert.equal(out.status, 'completed');
    assert.deepEqual(p.seen, ['fc.va:va:1']);
    assert.equal(store.reader.action('va', 'fc.va:va:1')?.reconciliation, 'verified-absent');
  });

  it('a DefiniteFailure is journaled failed and executed again with the same key, with no verify and no decision', async () => {
    const action = charge('fc.d');
    const agent = agentOf('fc-d', action);
    p.throwBefore = new DefiniteFailure('card declined', { cause: new Error('402') });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'd', ...quiet });
    assert.equal(first.status, 'failed');
    assert.equal(first.error?.name, 'DefiniteFailure');
    assert.equal(store.reader.action('d', 'fc.d:d:1')?.status, 'failed');
    assert.equal(actionJson(store.reader.action('d', 'fc.d:d:1')!, false).display, 'failed');
    assert.equal(planResume(store, 'd', defs, true).retry.length, 1);
    const out = await resumeRun(store, agent, 'd', quiet);
    assert.equal(out.status, 'completed');
    assert.deepEqual(p.seen, ['fc.d:d:1']);
  });

  it('the failure classifier decides: not-happened → failed; in-doubt, a bad answer or a throwing classifier → in doubt', async () => {
    const classify = (err: unknown) => ((err as { status?: number }).status === 400 ? 'not-happened' : 'in-doubt');
    const refused = charge('fc.c1', { failure: classify });
    p.throwBefore = Object.assign(new Error('bad request'), { status: 400 });
    await startRun(store, agentOf('fc-c1', refused), { script: 'inline', input: {}, runId: 'c1', ...quiet });
    assert.equal(store.reader.action('c1', 'fc.c1:c1:1')?.status, 'failed');

    const gateway = charge('fc.c2', { failure: classify });
    p.throwAfter = Object.assign(new Error('bad gateway'), { status: 502 });
    await startRun(store, agentOf('fc-c2', gateway), { script: 'inline', input: {}, runId: 'c2', ...quiet });
    assert.equal(store.reader.action('c2', 'fc.c2:c2:1')?.status, 'started');

    const warnings: string[] = [];
    const broken = charge('fc.c3', {
      failure: () => {
        throw new Error('classifier bug');
      },
    });
    p.throwAfter = timeout();
    await startRun(store, agentOf('fc-c3', broken), { script: 'inline', input: {}, runId: 'c3', log: (l) => warnings.push(l) });
    assert.equal(store.reader.action('c3', 'fc.c3:c3:1')?.status, 'started');
    assert.match(warnings.join('\n'), /classifier of fc\.c3 threw \(classifier bug\); the action is kept in doubt/);
  });

  it('idempotent and read-only actions that throw are failed and simply run again', async () => {
    let calls = 0;
    const idem = defineAction({
      type: 'fc.idem',
      version: 1,
      effect: 'idempotent',
      args: z.object({}),
      key: (_a, run) => `idem:${run.id}`,
      execute: (_a, { idempotencyKey }) => {
        calls++;
        if (calls === 1) throw timeout();
        return idempotencyKey;
      },
    });
    const agent = defineAgent({ name: 'fc-idem', input: z.object({}), run: (run) => run.step('s', () => run.do(idem, {})) });
    assert.equal((await startRun(store, agent, { script: 'inline', input: {}, runId: 'i', ...quiet })).status, 'failed');
    assert.equal(store.reader.action('i', 'idem:i')?.status, 'failed');
    const out = await resumeRun(store, agent, 'i', quiet);
    assert.equal(out.status, 'completed');
    assert.equal(out.output, 'idem:i', 'the same key');
  });

  it('the script sees the error (try/catch around run.do); a doubt it caught is settled by verify before the run completes', async () => {
    const action = charge('fc.caught', { verify: true });
    const seen: string[] = [];
    const agent = defineAgent({
      name: 'fc-caught',
      input: z.object({}),
      run: async (run) => {
        const r = await run.step('charge', async () => {
          try {
            return await run.do(action, { n: 1 });
          } catch (err) {
            seen.push((err as Error).message);
            return { receipt: 'none' };
          }
        });
        return r.receipt;
      },
    });
    p.throwAfter = timeout();
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'caught', ...quiet });
    assert.deepEqual(seen, ['connect ETIMEDOUT 10.0.0.7:443']);
    assert.equal(out.status, 'completed');
    const row = store.reader.action('caught', 'fc.caught:caught:1');
    assert.equal(row?.status, 'committed', 'verify found that it happened: a completed run holds nothing in doubt');
    assert.equal(row?.reconciliation, 'verified');
    assert.deepEqual(
      out.stats.reconciled.map((r) => r.outcome),
      ['verified'],
    );
  });

  it('a caught doubt with no verify stops the run for a decision at its end; decided, the resume completes without re-executing', async () => {
    const action = charge('fc.caught2');
    const agent = defineAgent({
      name: 'fc-caught2',
      input: z.object({}),
      run: async (run) => {
        let outcome = 'charged';
        try {
          await run.step('charge', () => run.do(action, { n: 1 }));
        } catch {
          outcome = 'gave up';
        }
        await run.step('after', () => outcome);
        return outcome;
      },
    });
    p.throwAfter = timeout();
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'c2x', ...quiet });
    assert.equal(out.status, 'needs-decision');
    assert.equal(out.waitingOn?.actionId, 'fc.caught2:c2x:1');
    const plan = planResume(store, 'c2x', defs, true);
    assert.equal(plan.replayedFailures.length, 1, 'the failed step is replayed, not run again');
    assert.equal(plan.inDoubt[0]?.reconcile, 'needs-decision');
    const done = await resumeRun(store, agent, 'c2x', { ...quiet, decisions: { 'fc.caught2:c2x:1': 'not-happened' } });
    assert.equal(done.status, 'completed');
    assert.equal(done.output, 'gave up');
    assert.equal(store.reader.action('c2x', 'fc.caught2:c2x:1')?.status, 'failed');
    assert.deepEqual(p.seen, ['fc.caught2:c2x:1'], 'marked not happened, never executed again');
  });

  it("the decision prompt for a caught doubt at the run's end carries the error execute threw, as one reached again does", async () => {
    const action = charge('fc.caught4');
    const agent = defineAgent({
      name: 'fc-caught4',
      input: z.object({}),
      run: async (run) => {
        try {
          await run.step('charge', () => run.do(action, { n: 1 }));
        } catch {
          // gave up
        }
        return run.step('after', () => 'done');
      },
    });
    p.throwAfter = timeout();
    const asked: Array<{ afterError?: boolean; error?: { message: string } }> = [];
    const out = await startRun(store, agent, {
      script: 'inline',
      input: {},
      runId: 'c4',
      ...quiet,
      hooks: {
        decision: (ev) => {
          if (ev.action) asked.push(ev.action);
          return Promise.resolve(undefined);
        },
      },
    });
    assert.equal(out.status, 'needs-decision');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.afterError, true);
    assert.match(asked[0]?.error?.message ?? '', /ETIMEDOUT/, 'the host is told which error left it in doubt');
  });

  it('a caught doubt in a completed step, then the run fails: no verify, the run stops for a decision, which the next resume applies', async () => {
    const action = charge('fc.caught3');
    let fail = true;
    const agent = defineAgent({
      name: 'fc-caught3',
      input: z.object({}),
      run: async (run) => {
        const r = await run.step('charge', async () => {
          try {
            return await run.do(action, { n: 1 });
          } catch {
            return 'ignored';
          }
        });
        // A step that fails the run after it: a resume replays "charge" from its checkpoint, never reaching the doubt.
        await run.step('then', () => {
          if (fail) throw new Error('the next step broke');
          return 'ok';
        });
        return r;
      },
    });
    p.throwAfter = timeout();
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'c3', ...quiet });
    assert.equal(out.status, 'needs-decision', 'the run does not end failed holding a doubt nobody is asked about');
    assert.equal(out.waitingOn?.actionId, 'fc.caught3:c3:1');
    const decided = await resumeRun(store, agent, 'c3', { ...quiet, decisions: { 'fc.caught3:c3:1': 'happened' } });
    assert.equal(decided.status, 'failed', 'the step after it still fails');
    assert.equal(store.reader.action('c3', 'fc.caught3:c3:1')?.status, 'committed', 'the decision was applied');
    assert.equal(store.reader.action('c3', 'fc.caught3:c3:1')?.reconciliation, 'decided-happened');
    fail = false;
    const done = await resumeRun(store, agent, 'c3', quiet);
    assert.equal(done.status, 'completed');
    assert.deepEqual(p.seen, ['fc.caught3:c3:1'], 'charged once');
  });

  it('a caught doubt in a completed step, then the run fails: verify settles it first, so the declared compensation undoes it', async () => {
    const undone: string[] = [];
    const action = defineAction({
      type: 'fc.caught4',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `c4:${run.id}`,
      execute: (_a, { idempotencyKey }) => p.call(idempotencyKey),
      verify: (_a, { idempotencyKey }) => p.find(idempotencyKey),
      compensate: (_a, r) => void undone.push(r.receipt),
    });
    const agent = defineAgent({
      name: 'fc-caught4',
      input: z.object({}),
      onFailure: 'compensate',
      run: async (run) => {
        await run.step('charge', async () => {
          try {
            return await run.do(action, {});
          } catch {
            return 'ignored';
          }
        });
        await run.step('then', () => {
          throw new DefiniteFailure('the next step was refused');
        });
      },
    });
    p.throwAfter = timeout();
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'c4', ...quiet });
    assert.equal(store.reader.action('c4', 'c4:c4')?.reconciliation, 'verified', 'verified before the failure was recorded');
    assert.equal(out.status, 'compensated', 'its outcome is known, so the declared policy undoes it');
    assert.deepEqual(undone, ['r-1']);
  });

  it('onFailure: compensate does not fire on an unknown outcome; compensating settles the doubt first (verify), as plan --compensate predicts', async () => {
    const undone: string[] = [];
    const action = defineAction({
      type: 'fc.comp',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `comp:${run.id}`,
      execute: (_a, { idempotencyKey }) => p.call(idempotencyKey),
      verify: (_a, { idempotencyKey }) => p.find(idempotencyKey),
      compensate: (_a, r) => void undone.push(r.receipt),
    });
    const agent = defineAgent({ name: 'fc-comp', input: z.object({}), onFailure: 'compensate', run: (run) => run.step('s', () => run.do(action, {})) });
    p.throwAfter = timeout();
    const logged: string[] = [];
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'comp', log: (l) => logged.push(l) });
    // Its outcome is unknown, so the declared policy does not fire: the run stays failed and resumable.
    assert.equal(out.status, 'failed');
    assert.equal(out.compensation, undefined);
    assert.match(logged.join('\n'), /not compensated: resume reconciles it/);
    const before = planCompensation(store, 'comp', defs, true);
    assert.deepEqual(
      before.settleFirst.map((x) => [x.how, x.detail]),
      [['verify', 'in doubt after an error; verify asks the outside system; if found it is undone like the rest']],
    );
    const report = await compensateRun(store, 'comp', quiet);
    assert.equal(report.status, 'compensated');
    assert.deepEqual(
      report.settled.map((x) => x.outcome),
      ['verified: it happened'],
    );
    assert.deepEqual(undone, ['r-1'], 'the effect that happened behind the error was undone');
    const cp = planCompensation(store, 'comp', defs, true);
    assert.equal(cp.alreadyCompensated.length, 1);
  });
});

describe('failure contract: the journal schema', () => {
  it('migration 2 adds the in-doubt-after-error index to a version-1 journal; a read-only open of a version-1 file still reads it', () => {
    const file = path.join(tmpDir(), 'v1.db');
    const raw = new Database(file);
    raw.exec(MIGRATIONS.find((m) => m.version === 1)!.sql);
    raw.pragma('user_version = 1');
    raw.prepare("INSERT INTO runs (id, agent, script, status, attempt, created_at, updated_at) VALUES ('old', 'a', 's', 'failed', 1, 0, 0)").run();
    raw
      .prepare(
        "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, error, attempt, started_at) VALUES ('old', 'k', 1, 0, 't', 1, 'non-idempotent', '{}', 'started', '{\"message\":\"ETIMEDOUT\"}', 1, 0)",
      )
      .run();
    raw.close();
    const ro = openStore(file, { readonly: true });
    try {
      assert.deepEqual(
        ro.reader.inDoubtAfterError('old').map((a) => a.id),
        ['k'],
      );
    } finally {
      ro.close();
    }
    const rw = openStore(file);
    try {
      assert.ok((sqliteOf(rw.db).pragma('user_version', { simple: true }) as number) >= 2, 'migrated past version 2');
      const plan = dbOf(rw.db)
        .prepare("EXPLAIN QUERY PLAN SELECT * FROM actions WHERE run_id = ? AND status = 'started' AND error IS NOT NULL ORDER BY seq")
        .all('old') as Array<{ detail: string }>;
      assert.match(plan.map((p) => p.detail).join(' '), /actions_in_doubt_after_error/);
      assert.deepEqual(
        rw.reader.inDoubtAfterError('old').map((a) => a.id),
        ['k'],
      );
    } finally {
      rw.close();
    }
  });
});
