// One policy: every (effect × hooks × status × decision) journal state, and resume, compensation, plan, the debugger's
// words and the tree's DTOs must all do and say what src/runtime/policy.ts decides for it.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { compensateRun, defineAction, defineAgent, openStore, resumeRun, startRun, type PauseEvent, type Store } from '../../src/runtime';
import { actionRegistry, type ActionDefinition, type Effect } from '../../src/runtime/define';
import {
  actionDisplay,
  actionPlan,
  reconcilePlan,
  runAllows,
  runExitCode as exitCodeOf,
  RUN_WORDS,
  ACTION_WORDS,
  type ReconcileHow,
} from '../../src/runtime/policy';
import { EXIT } from '../../src/runtime/errors';
import { createRun } from '../../src/runtime/store/lease';
import { beginSession } from '../../src/runtime/store/owner';
import { RunWriter } from '../../src/runtime/store/writer';
import type { Decision, RunStatus } from '../../src/runtime/types';
import { planResume } from '../../src/plan/resumePlan';
import { planCompensation } from '../../src/plan/compensationPlan';
import { JournalQueries } from '../../src/reader/queries';
import { actionJson, showRun } from '../../src/cli/inspect';
import { outcomeExit } from '../../src/cli/cliMain';
import { exitCodeFor } from '../../src/adapter/crashReport';
import { RECONCILE_WHY, boundaryText } from '../../src/runner/boundaryText';
import { tmpDir } from '../helpers';
import { dbOf } from '../../src/runtime/store/db';

const quiet = { log: () => undefined };
const EFFECTS: Effect[] = ['read-only', 'idempotent', 'non-idempotent'];
type Journaled = 'in-flight-crash' | 'after-error' | 'committed' | 'failed';
const STATES: Journaled[] = ['in-flight-crash', 'after-error', 'committed', 'failed'];

interface Combo {
  readonly effect: Effect;
  readonly verify: boolean;
  readonly compensate: boolean;
  readonly state: Journaled;
  readonly decision: Decision | null;
}

function combos(): Combo[] {
  const out: Combo[] = [];
  for (const effect of EFFECTS)
    for (const verify of [false, true])
      for (const compensate of [false, true])
        for (const state of STATES)
          for (const decision of state === 'in-flight-crash' || state === 'after-error' ? ([null, 'happened', 'not-happened'] as const) : [null])
            out.push({ effect, verify, compensate, state, decision });
  return out;
}

const calls = new Map<string, { execute: number; verify: number; inverse: number }>();
const count = (key: string) => calls.get(key) ?? calls.set(key, { execute: 0, verify: 0, inverse: 0 }).get(key)!;

function typeOf(c: Combo): string {
  return `agree.${c.effect}.${c.verify ? 'v' : 'nv'}.${c.compensate ? 'c' : 'nc'}`;
}

function define(c: Combo): ActionDefinition {
  const type = typeOf(c);
  return (
    actionRegistry().get(type) ??
    (defineAction({
      type,
      version: 1,
      effect: c.effect,
      args: z.object({}),
      key: (_a, run) => `${type}:${run.id}`,
      execute: (_a, { idempotencyKey }) => {
        count(idempotencyKey).execute++;
        return { ok: idempotencyKey };
      },
      // The effect of a journaled action always happened in these states: verify finds it.
      ...(c.verify
        ? { verify: (_a: unknown, { idempotencyKey }: { idempotencyKey: string }) => (count(idempotencyKey).verify++, { ok: idempotencyKey }) }
        : {}),
      ...(c.compensate
        ? {
            compensate: (_a: unknown, _r: unknown, { idempotencyKey }: { idempotencyKey: string }) =>
              void count(idempotencyKey.replace(/^compensate:/, '')).inverse++,
          }
        : {}),
    }) as unknown as ActionDefinition)
  );
}

/** Writes the combination's journal through the real writer, then lets the lease go (the process "died"). */
function journal(store: Store, c: Combo, runId: string): string {
  const def = define(c);
  const id = `${def.type}:${runId}`;
  const lease = createRun(dbOf(store.db), store.reader, { id: runId, agent: 'agree', script: 'inline', input: '{}' }, beginSession('test'));
  const w = new RunWriter(store.db, lease, store.reader.nextActionSeq(runId));
  w.stepStarted(0, 's0', false);
  const na = { id, stepIdx: 0, type: def.type, version: 1, effect: c.effect, args: '{}' };
  w.actionStarted(na, false);
  w.actionExecuting(0, id);
  if (c.state === 'after-error') w.actionInDoubt(0, id, { name: 'Error', message: 'socket hang up' });
  if (c.state === 'committed') w.actionCommitted(0, id, JSON.stringify({ ok: id }));
  if (c.state === 'failed') w.actionFailed(0, id, { name: 'DefiniteFailure', message: 'refused' });
  if (c.decision) w.decision(0, id, c.decision);
  w.release();
  return id;
}

/** What the resume did, read from the calls and the journal, in the policy's terms. */
function didOnResume(c: Combo, key: string, status: RunStatus, store: Store, runId: string): string {
  const n = count(key);
  const row = store.reader.action(runId, key);
  if (status === 'needs-decision') return 'needs-decision';
  if (n.verify > 0) return 'verify';
  if (row?.reconciliation === 'decided-happened') return 'decided-happened';
  if (row?.reconciliation === 'decided-not-happened') return 'decided-not-happened';
  if (row?.reconciliation === 're-executed') return c.effect === 'read-only' ? 'run-again' : 're-execute-with-key';
  if (n.execute > 0) return 'retry';
  return 'skip';
}

/** The design's rules, written out independently of the policy module, so a wrong policy cannot agree with itself. */
function designRule(c: Combo): string {
  if (c.state === 'committed') return 'skip';
  if (c.state === 'failed') return 'retry';
  if (c.effect === 'read-only') return 'run-again';
  if (c.decision) return `decided-${c.decision}`;
  if (c.verify) return 'verify';
  return c.effect === 'idempotent' ? 're-execute-with-key' : 'needs-decision';
}

describe('one policy: resume, compensation, plan, the debugger and the tree agree on every combination', () => {
  let store: Store;
  before(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  after(() => store.close());

  const all = combos();
  it(`covers ${all.length} combinations`, () => assert.equal(all.length, 3 * 2 * 2 * (2 * 3 + 2)));

  for (const [i, c] of all.entries()) {
    const label = `${c.effect}, ${c.verify ? 'verify' : 'no verify'}, ${c.compensate ? 'compensate' : 'no compensate'}, ${c.state}${c.decision ? `, decided ${c.decision}` : ''}`;
    it(label, async () => {
      const def = define(c);
      const defs = (t: string) => actionRegistry().get(t);
      const agent = defineAgent({ name: 'agree', input: z.object({}), run: (run) => run.step('s0', () => run.do(def, {})) });

      // ---- resume ----
      const runId = `r${i}`;
      const key = journal(store, c, runId);
      const row = store.reader.action(runId, key)!;
      const facts = {
        effect: c.effect,
        hasVerify: c.verify,
        status: row.status,
        afterError: row.error !== null,
        decision: row.decision,
        approval: row.approval,
      };
      const planned = actionPlan(facts);
      const expected = planned.kind === 'reconcile' ? planned.plan.how : planned.kind;
      assert.equal(expected, designRule(c), 'the policy says what the design says');

      // The tree (reader DTOs) and the CLI show the same word and allow what the policy allows.
      const q = new JournalQueries(store);
      const runDto = q.run({ runId })!;
      const allows = runAllows('running', false);
      assert.equal(runDto.status, 'interrupted');
      assert.equal(runDto.canResume, allows.canResume);
      assert.equal(runDto.canCompensate, allows.canCompensate);
      const dto = q.action({ runId, actionId: key })!;
      assert.equal(dto.status, actionDisplay(row, false));
      assert.equal(actionJson(row, false).display, dto.status, 'show --json and the sidebar use one display status');
      assert.equal(dto.status === 'in-doubt' || dto.status === 'in-doubt-after-error', planned.kind === 'reconcile');
      assert.equal(ACTION_WORDS[dto.status].canDecide, planned.kind === 'reconcile');

      // `logbook plan` predicts it.
      const plan = planResume(store, runId, defs, true);
      assert.equal(plan.canResume, runDto.canResume);
      if (planned.kind === 'reconcile') {
        assert.equal(plan.inDoubt[0]?.reconcile, expected);
        assert.equal(plan.inDoubt[0]?.afterError !== null, c.state === 'after-error');
        assert.equal(plan.stops?.kind === 'needs-decision', expected === 'needs-decision');
      } else if (planned.kind === 'retry') assert.equal(plan.retry[0]?.id, key);
      else assert.equal(plan.skipped[0]?.id, key);

      // The resume does it, and the debugger's stop says it.
      const events: PauseEvent[] = [];
      const out = await resumeRun(store, agent, runId, { ...quiet, hooks: { pause: (ev) => void events.push(ev) } });
      assert.equal(didOnResume(c, key, out.status, store, runId), expected, `resume did what the policy planned (${label})`);
      assert.equal(out.status, expected === 'needs-decision' ? 'needs-decision' : 'completed');
      assert.equal(outcomeExit(out.status), exitCodeFor(out.status), 'the CLI and the debugger exit alike');
      const reconcileStop = events.find((e) => e.kind === 'action:reconcile');
      if (planned.kind === 'reconcile') {
        assert.equal(reconcileStop?.plan?.how, expected);
        assert.ok(boundaryText(reconcileStop).includes(RECONCILE_WHY[expected as ReconcileHow]), boundaryText(reconcileStop));
        if (c.state === 'after-error') assert.match(boundaryText(reconcileStop), /in doubt after an error: execute threw "socket hang up"/);
      } else assert.equal(reconcileStop, undefined);
      assert.equal(count(key).execute <= 1, true, 'nothing ran twice');

      // ---- compensation, on the same journal state: settles by the same rules, as plan --compensate said ----
      const compId = `c${i}`;
      const ckey = journal(store, c, compId);
      const cplan = planCompensation(store, compId, defs, true);
      const settleHow = row.status === 'started' ? reconcilePlan({ ...facts, hasInverse: c.compensate }, 'compensate').how : undefined;
      assert.equal(cplan.settleFirst[0]?.how, settleHow);
      const executedBefore = count(ckey).execute;
      const report = await compensateRun(store, compId, quiet);
      if (settleHow === 'no-inverse') {
        // Nothing can undo it, so compensation does not make it happen: not executed again, listed irreversible.
        assert.equal(count(ckey).execute, executedBefore, 'compensation executed an action with no inverse');
        assert.ok(report.irreversible.some((x) => x.id === ckey) && cplan.irreversible.some((x) => x.id === ckey));
        assert.equal(store.reader.action(compId, ckey)?.compensation, 'irreversible');
      }
      if (settleHow === 'needs-decision') {
        assert.equal(report.status, 'needs-decision');
        assert.equal(cplan.stops?.actionId, ckey);
        return;
      }
      assert.equal(report.status, 'compensated');
      const undone = report.compensated.some((x) => x.id === ckey);
      const planned2 = cplan.inverses.some((x) => x.id === ckey);
      assert.equal(undone, planned2 && c.compensate, 'plan --compensate listed exactly the inverse that ran');
      assert.equal(count(ckey).inverse, undone ? 1 : 0);
    });
  }

  it('a failed inverse: `logbook show` and the sidebar both say "compensation failed" (show used to say "committed")', async () => {
    const refund = defineAction({
      type: 'agree.refund',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `refund:${run.id}`,
      execute: () => ({ id: 'ch-1' }),
      verify: () => undefined,
      compensate: () => {
        throw new Error('refund API down');
      },
    });
    const agent = defineAgent({ name: 'agree-refund', input: z.object({}), run: (run) => run.step('s', () => run.do(refund, {})) });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'cf', ...quiet });
    const report = await compensateRun(store, 'cf', quiet);
    assert.equal(report.status, 'compensation-failed');
    const row = store.reader.action('cf', 'refund:cf')!;
    const dto = new JournalQueries(store).action({ runId: 'cf', actionId: 'refund:cf' })!;
    assert.equal(dto.status, 'compensation-failed');
    assert.equal(actionJson(row, false).display, 'compensation-failed');
    const text = showRun(store, 'cf', false);
    assert.match(text, /refund:cf +agree\.refund +non-idempotent +compensation failed/);
    assert.match(text, /compensation failed {2}attempt 2/);
    const run = new JournalQueries(store).run({ runId: 'cf' })!;
    assert.equal(run.canCompensate, true, 'compensate again finishes it');
    assert.equal(run.canResume, false);
    assert.equal(outcomeExit(run.status), 1);
  });

  it("statuses: exit codes and words are the policy's, and interrupted is not success anywhere", () => {
    for (const s of Object.keys(RUN_WORDS) as RunStatus[]) {
      assert.equal(outcomeExit(s), exitCodeOf(s));
      assert.equal(exitCodeFor(s), exitCodeOf(s));
    }
    assert.equal(exitCodeOf('interrupted'), EXIT.failed);
    assert.equal(runAllows('compensating', false).canResume, false);
    assert.equal(runAllows('compensating', false).canCompensate, true);
    assert.equal(runAllows('awaiting-approval', false).canResume, true);
    assert.equal(runAllows('running', true).canDelete, false);
  });
});
