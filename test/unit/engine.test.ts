// Engine tests on real temporary SQLite files: replay, the bracket, keys, approvals, decisions, leases.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import {
  ApprovalRejectedError,
  ErrorCodes,
  LogbookError,
  defineAction,
  defineAgent,
  openStore,
  recordApproval,
  resumeRun,
  startRun,
  type RuntimeHooks,
  type Store,
} from '../../src/runtime';
import { currentNode, hostField, processStartTime } from '../../src/runtime/store/owner';
import { tmpDir } from '../helpers';
import { dbOf } from '../../src/runtime/store/db';

const quiet = { log: () => undefined };

function counter() {
  const calls: string[] = [];
  const action = defineAction({
    type: 'test.write',
    version: 1,
    effect: 'non-idempotent',
    args: z.object({ n: z.number() }),
    key: (a, run) => `write:${run.id}:${a.n}`,
    execute: (a, { idempotencyKey }) => {
      calls.push(idempotencyKey);
      return { n: a.n };
    },
    verify: (_a, { idempotencyKey }) => (calls.includes(idempotencyKey) ? { n: -1 } : undefined),
  });
  return { calls, action };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<LogbookError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof LogbookError, `expected LogbookError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}`);
}

/** Hooks that throw at a given pause, leaving the journal as a crash there would (the process lives on). */
function stopAt(kind: string, nth = 1): RuntimeHooks {
  let seen = 0;
  return {
    pause: (ev) => {
      if (ev.kind === kind && ++seen === nth) throw new Error(`simulated stop at ${kind}`);
    },
  };
}

describe('engine', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = tmpDir();
    store = openStore(path.join(dir, 'journal.db'));
  });
  afterEach(() => store.close());

  it('runs steps and actions, journaling every transition with a monotonic sequence', async () => {
    const { calls, action } = counter();
    const agent = defineAgent({
      name: 'basic',
      input: z.object({ count: z.number().default(3) }),
      run: async (run, input) => {
        for (let n = 1; n <= input.count; n++) await run.step(`write ${n}`, () => run.do(action, { n }));
        return { done: input.count };
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'r1', ...quiet });
    assert.equal(out.status, 'completed');
    assert.deepEqual(out.output, { done: 3 });
    assert.deepEqual(calls, ['write:r1:1', 'write:r1:2', 'write:r1:3']);
    const events = store.reader.events('r1');
    const seqs = events.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    );
    const kinds = events.map((e) => e.kind);
    const firstStart = kinds.indexOf('action.started');
    assert.ok(firstStart > 0 && kinds.indexOf('action.committed') > firstStart, 'started precedes committed');
    assert.equal(store.reader.run('r1')?.status, 'completed');
    assert.deepEqual(
      [...store.reader.allActions('r1')].map((a) => [a.id, a.status, a.executions]),
      [
        ['write:r1:1', 'committed', 1],
        ['write:r1:2', 'committed', 1],
        ['write:r1:3', 'committed', 1],
      ],
    );
  });

  it('replays completed steps from the journal and retries the failed one on resume', async () => {
    const { calls, action } = counter();
    let bodies = 0;
    let failOnce = true;
    const agent = defineAgent({
      name: 'replay',
      input: z.object({}),
      run: async (run) => {
        const a = await run.step('a', () => {
          bodies++;
          return { value: 41 };
        });
        await run.step('b', () => run.do(action, { n: 1 }));
        await run.step('c', () => {
          if (failOnce) throw new Error('flaky dependency');
          return null;
        });
        return a.value + 1;
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'r2', ...quiet });
    assert.equal(first.status, 'failed');
    assert.match(first.error?.message ?? '', /flaky dependency/);
    failOnce = false;
    const second = await resumeRun(store, agent, 'r2', quiet);
    assert.equal(second.status, 'completed');
    assert.equal(second.output, 42);
    assert.equal(bodies, 1, 'step a ran once; replay returned its checkpoint');
    assert.equal(calls.length, 1, 'the action was not executed again');
    assert.equal(second.stats.stepsReplayed, 2);
    assert.equal(second.attempt, 2);
  });

  it('stops with a clear error before any new side effect when the step order changed', async () => {
    const { calls, action } = counter();
    let order = ['load', 'send'];
    const agent = defineAgent({
      name: 'order',
      input: z.object({}),
      run: async (run) => {
        await run.step(order[0]!, () => run.do(action, { n: 1 }));
        await run.step(order[1]!, () => {
          throw new Error('stop here');
        });
        return null;
      },
    });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'r3', ...quiet });
    const before = [...store.reader.allActions('r3')];
    order = ['send', 'load'];
    const out = await resumeRun(store, agent, 'r3', quiet);
    assert.equal(out.status, 'failed');
    assert.equal(out.error?.code, ErrorCodes.NONDETERMINISM);
    assert.match(out.error?.message ?? '', /Step #1 is "send" in the script, but the journal .* has "load"/);
    assert.match(out.error?.message ?? '', /Restore the original step order/);
    assert.equal(calls.length, 1);
    assert.deepEqual([...store.reader.allActions('r3')], before, 'actions unchanged');
  });

  it('refuses the same action id with different args, and values that do not survive JSON', async () => {
    const { action } = counter();
    const sameKey = defineAction({
      type: 'test.same',
      version: 1,
      effect: 'idempotent',
      args: z.object({ to: z.string(), body: z.string() }),
      key: (a) => `k:${a.to}`,
      execute: () => 'ok',
    });
    const conflict = defineAgent({
      name: 'conflict',
      input: z.object({}),
      run: async (run) => {
        await run.step('one', () => run.do(sameKey, { to: 'x', body: 'hello' }));
        await run.step('two', () => run.do(sameKey, { to: 'x', body: 'bye' }));
        return null;
      },
    });
    const out = await startRun(store, conflict, { script: 'inline', input: {}, runId: 'r4', ...quiet });
    assert.equal(out.error?.code, ErrorCodes.KEY_CONFLICT);
    assert.match(out.error?.message ?? '', /with different args/);

    const anyArgs = defineAction({ type: 'test.any', version: 1, effect: 'idempotent', args: z.any(), key: () => 'any', execute: () => 1 });
    const cases: Array<[unknown, RegExp]> = [
      [{ when: new Date(0) }, /\$\.when is a Date, not a plain object; store date\.toISOString\(\)/],
      [{ big: 10n }, /\$\.big is a BigInt/],
      [{ list: [1, Number.NaN] }, /\$\.list\[1\] is NaN/],
      [{ fn: () => 1 }, /\$\.fn is a function/],
      [{ m: new Map() }, /\$\.m is a Map/],
      [{ u: undefined }, /\$\.u is undefined/],
    ];
    for (const [i, [args, re]] of cases.entries()) {
      const agent = defineAgent({ name: 'json', input: z.object({}), run: (run) => run.step('s', () => run.do(anyArgs, args)) });
      const o = await startRun(store, agent, { script: 'inline', input: {}, runId: `json-${i}`, ...quiet });
      assert.equal(o.error?.code, ErrorCodes.NOT_JSON, String(o.error?.message));
      assert.match(o.error?.message ?? '', re);
      assert.equal(store.reader.actionCount(`json-${i}`), 0, 'refused before started was written');
    }
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    const cycAgent = defineAgent({ name: 'cyc', input: z.object({}), run: (run) => run.step('s', () => cyc) });
    const c = await startRun(store, cycAgent, { script: 'inline', input: {}, runId: 'cyc', ...quiet });
    assert.match(c.error?.message ?? '', /\$\.self is a cycle/);
    const badArgs = defineAgent({ name: 'bad', input: z.object({}), run: (run) => run.step('s', () => run.do(action, { n: 'x' as unknown as number })) });
    const b = await startRun(store, badArgs, { script: 'inline', input: {}, runId: 'badargs', ...quiet });
    assert.equal(b.error?.code, ErrorCodes.INVALID_ARGS);
    assert.match(b.error?.message ?? '', /n: .*expected number/i);
  });

  it('rejects invalid input without creating a run', async () => {
    const agent = defineAgent({ name: 'typed', input: z.object({ recipients: z.number().int().positive() }), run: () => null });
    const err = await expectCode(startRun(store, agent, { script: 'inline', input: { recipients: -1 }, runId: 'bad', ...quiet }), ErrorCodes.INVALID_INPUT);
    assert.match(err.message, /recipients: .*>0|recipients: .*positive|recipients: .*greater/i);
    assert.equal(store.reader.run('bad'), undefined);
  });

  it('journals parallel actions of one step (Promise.all) each with its own bracket', async () => {
    const { calls, action } = counter();
    const agent = defineAgent({
      name: 'parallel',
      input: z.object({}),
      run: (run) => run.step('fan out', () => Promise.all([1, 2, 3, 4].map((n) => run.do(action, { n })))),
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'par', ...quiet });
    assert.equal(out.status, 'completed');
    assert.equal(calls.length, 4);
    const rows = [...store.reader.allActions('par')];
    assert.deepEqual(
      rows.map((r) => r.status),
      ['committed', 'committed', 'committed', 'committed'],
    );
    assert.deepEqual(new Set(rows.map((r) => r.seq)).size, 4);
    assert.ok(rows.every((r) => r.step_idx === 0));
  });

  it('stops at an approval gate, then executes once approved; a rejection is a typed error in the script', async () => {
    const shipped: string[] = [];
    const ship = defineAction({
      type: 'order.ship',
      version: 1,
      effect: 'non-idempotent',
      approval: true,
      args: z.object({ order: z.string() }),
      key: (a) => `ship:${a.order}`,
      execute: (a) => {
        shipped.push(a.order);
        return { tracking: `T-${a.order}` };
      },
    });
    const agent = defineAgent({
      name: 'gated',
      input: z.object({ order: z.string() }),
      run: async (run, input) => {
        try {
          return await run.step('ship', () => run.do(ship, { order: input.order }));
        } catch (err) {
          if (err instanceof ApprovalRejectedError) return { rejected: err.code };
          throw err;
        }
      },
    });
    const a = await startRun(store, agent, { script: 'inline', input: { order: 'A' }, runId: 'gate-a', ...quiet });
    assert.equal(a.status, 'awaiting-approval');
    assert.equal(a.waitingOn?.actionId, 'ship:A');
    assert.equal(shipped.length, 0);
    recordApproval(store, 'gate-a', 'ship:A', true, 'looks fine');
    const a2 = await resumeRun(store, agent, 'gate-a', quiet);
    assert.equal(a2.status, 'completed');
    assert.deepEqual(a2.output, { tracking: 'T-A' });
    assert.deepEqual(shipped, ['A']);

    const b = await startRun(store, agent, { script: 'inline', input: { order: 'B' }, runId: 'gate-b', ...quiet });
    assert.equal(b.status, 'awaiting-approval');
    recordApproval(store, 'gate-b', 'ship:B', false, 'address unverified');
    const b2 = await resumeRun(store, agent, 'gate-b', quiet);
    assert.deepEqual(b2.output, { rejected: ErrorCodes.APPROVAL_REJECTED });
    assert.deepEqual(shipped, ['A']);
    assert.equal(store.reader.action('gate-b', 'ship:B')?.status, 'rejected');
    await expectCode(
      Promise.resolve().then(() => recordApproval(store, 'gate-b', 'ship:B', true, null)),
      ErrorCodes.BAD_DECISION,
    );
  });

  it('reconciles in-doubt actions: verify found → committed without executing; no verify → needs a decision', async () => {
    const { calls, action } = counter();
    const sent: string[] = [];
    const noVerify = defineAction({
      type: 'test.sms',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ to: z.string() }),
      key: (a, run) => `sms:${run.id}:${a.to}`,
      execute: (a) => {
        sent.push(a.to);
        return { ok: true };
      },
    });
    const agent = defineAgent({
      name: 'doubt',
      input: z.object({}),
      run: async (run) => {
        await run.step('write', () => run.do(action, { n: 7 }));
        await run.step('sms', () => run.do(noVerify, { to: 'bob' }));
        return 'done';
      },
    });
    // Stop right after execute, before committed: the effect happened, the journal does not know.
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'doubt', hooks: stopAt('action:after-execute'), ...quiet });
    assert.equal(first.status, 'failed');
    assert.equal(store.reader.action('doubt', 'write:doubt:7')?.status, 'started');
    const second = await resumeRun(store, agent, 'doubt', { hooks: stopAt('action:after-execute'), ...quiet });
    assert.deepEqual(second.stats.reconciled, [{ id: 'write:doubt:7', type: 'test.write', outcome: 'verified' }]);
    assert.equal(calls.length, 1, 'verify found it: not executed again');
    assert.equal(second.status, 'failed', 'stopped again, this time inside sms after execute');
    const third = await resumeRun(store, agent, 'doubt', quiet);
    assert.equal(third.status, 'needs-decision');
    assert.equal(third.waitingOn?.actionId, 'sms:doubt:bob');
    assert.equal(store.reader.run('doubt')?.status, 'needs-decision');
    const fourth = await resumeRun(store, agent, 'doubt', { decisions: { 'sms:doubt:bob': 'happened' }, ...quiet });
    assert.equal(fourth.status, 'completed');
    assert.deepEqual(sent, ['bob'], 'decided happened: not sent again');
    const row = store.reader.action('doubt', 'sms:doubt:bob');
    assert.equal(row?.reconciliation, 'decided-happened');
    assert.equal(row?.decision, 'happened');
    assert.ok(store.reader.events('doubt').some((e) => e.kind === 'action.decided'));
  });

  it('keeps an action in doubt when verify throws, and says how to go on', async () => {
    const flaky = defineAction({
      type: 'test.flaky-verify',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({}),
      key: (_a, run) => `fv:${run.id}`,
      execute: () => 'ok',
      verify: () => {
        throw new Error('provider unreachable');
      },
    });
    const agent = defineAgent({ name: 'fv', input: z.object({}), run: (run) => run.step('s', () => run.do(flaky, {})) });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'fv', hooks: stopAt('action:after-execute'), ...quiet });
    const out = await resumeRun(store, agent, 'fv', quiet);
    assert.equal(out.error?.code, ErrorCodes.VERIFY_FAILED);
    assert.match(out.error?.message ?? '', /provider unreachable.*still in doubt.*--decide fv:fv=happened\|not-happened/);
    assert.equal(store.reader.action('fv', 'fv:fv')?.status, 'started');
    assert.equal(store.reader.action('fv', 'fv:fv')?.executions, 1);
  });

  it('refuses to resume an in-doubt action whose key format changed with its version', async () => {
    const v1 = defineAction({
      type: 'test.versioned',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ to: z.string() }),
      key: (a) => `v1:${a.to}`,
      execute: () => 1,
    });
    const agentV1 = defineAgent({ name: 'ver', input: z.object({}), run: (run) => run.step('s', () => run.do(v1, { to: 'x' })) });
    await startRun(store, agentV1, { script: 'inline', input: {}, runId: 'ver', hooks: stopAt('action:after-execute'), ...quiet });
    let executed = 0;
    const v2 = defineAction({
      type: 'test.versioned',
      version: 2,
      effect: 'non-idempotent',
      args: z.object({ to: z.string() }),
      key: (a) => `v2:${a.to}`,
      execute: () => ++executed,
    });
    const agentV2 = defineAgent({ name: 'ver', input: z.object({}), run: (run) => run.step('s', () => run.do(v2, { to: 'x' })) });
    const out = await resumeRun(store, agentV2, 'ver', quiet);
    assert.equal(out.error?.code, ErrorCodes.VERSION_CHANGED);
    assert.equal(executed, 0);
  });

  it('refuses a second driver while the lease holder lives, and takes over once it died', async () => {
    const { action } = counter();
    const agent = defineAgent({ name: 'leased', input: z.object({}), run: (run) => run.step('s', () => run.do(action, { n: 1 })) });
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'lease', hooks: stopAt('step:before'), ...quiet });
    const holder = spawn('sleep', ['30']);
    try {
      const pid = holder.pid!;
      dbOf(store.db)
        .prepare(
          "UPDATE runs SET status='running', lease_token='other', lease_owner=?, lease_pid=?, lease_pid_start=?, lease_host=?, lease_expires=? WHERE id='lease'",
        )
        .run(`pid ${pid} (test)`, pid, processStartTime(pid), hostField(os.hostname(), currentNode()), Date.now() + 60_000);
      assert.equal(store.reader.view(store.reader.run('lease')!).effectiveStatus, 'running');
      const err = await expectCode(resumeRun(store, agent, 'lease', quiet), ErrorCodes.LEASE_HELD);
      assert.match(err.message, new RegExp(`pid ${pid}`));
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      assert.equal(store.reader.view(store.reader.run('lease')!).effectiveStatus, 'interrupted');
      const out = await resumeRun(store, agent, 'lease', quiet);
      assert.equal(out.status, 'completed');
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('fences writes: a writer whose lease was taken over writes nothing more', async () => {
    const { action } = counter();
    let other: Promise<unknown> | undefined;
    const agent = defineAgent({
      name: 'fenced',
      input: z.object({}),
      run: async (run) => {
        await run.step('one', () => run.do(action, { n: 1 }));
        // Another owner takes the lease mid-run (as if this process had been presumed dead).
        dbOf(store.db).prepare("UPDATE runs SET lease_token='thief', lease_epoch=lease_epoch+1 WHERE id='fence'").run();
        other = run.step('two', () => run.do(action, { n: 2 }));
        return other;
      },
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'fence', ...quiet });
    assert.equal(out.error?.code, ErrorCodes.LEASE_LOST);
    assert.equal(store.reader.action('fence', 'write:fence:2'), undefined, 'no write after losing the lease');
  });
});
