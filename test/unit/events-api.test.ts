// journal.send and run.waitFor through the host API on a real SQLite file, and an approval gate taking its decision as
// an event: sent while another session holds the run, the gate takes it instead of stopping.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openJournal } from '../../src/runtime';
import { openStore } from '../../src/runtime/store';
import { recordApproval, resumeRun, startRun } from '../../src/runtime/engine';
import { continueAfterSend, sendEvent } from '../../src/runtime/send';
import { tmpDir } from '../helpers';

describe('journal.send and run.waitFor (host API)', function () {
  this.timeout(60_000);

  const effects: string[] = [];
  const reply = defineAction({
    type: 'api-events.reply',
    version: 1,
    effect: 'idempotent',
    args: z.object({ text: z.string() }),
    key: (_a, run) => `reply:${run.id}`,
    execute: (a) => {
      effects.push(a.text);
      return { replied: a.text };
    },
  });
  const agent = defineAgent({
    name: 'api-events',
    input: z.object({ timeout: z.optional(z.string()) }),
    async run(run, input) {
      const approved = await run.waitFor('approved', { ...(input.timeout ? { timeout: input.timeout } : {}), schema: z.object({ by: z.string() }) });
      const note = await run.waitFor('note');
      return run.step('reply', () => run.do(reply, { text: `${approved?.by ?? 'nobody'}: ${JSON.stringify(note)}` }));
    },
  });

  it('a run waits (released); send keeps the event, says a duplicate is one, refuses an ended run; resume takes each once', async () => {
    effects.length = 0;
    const journal = openJournal({ journal: path.join(tmpDir(), 'j.db'), agents: [agent], log: () => undefined });
    try {
      const first = await journal.start(agent, {}, { runId: 'r' });
      assert.equal(first.status, 'waiting');
      assert.deepEqual(first.waitingFor, { event: 'approved', until: null });
      assert.equal(journal.run('r')?.status, 'waiting');
      assert.deepEqual(journal.run('r')?.waitingFor, { event: 'approved', until: null });
      // Sent before the run waits for it: kept for later.
      const early = journal.send('r', 'note');
      assert.equal(early.outcome, 'kept');
      assert.equal(early.expect, 'later');
      assert.equal(early.waitingFor, 'approved');
      const sent = journal.send('r', 'approved', { by: 'ada' }, { id: 'approval-1' });
      assert.deepEqual(
        { outcome: sent.outcome, expect: sent.expect, id: sent.id, status: sent.status },
        { outcome: 'kept', expect: 'waiting-now', id: 'approval-1', status: 'waiting' },
      );
      const twice = journal.send('r', 'approved', { by: 'bob' }, { id: 'approval-1' });
      assert.equal(twice.outcome, 'duplicate');
      assert.equal(twice.before?.status, 'pending');
      assert.throws(() => journal.send('r', 'approved', {}, { id: 'x', crashAt: 'y' } as never), /LB_USAGE|unknown option "crashAt"/);
      assert.throws(
        () => journal.send('r', 'bad', () => 1),
        (e: { code?: string }) => e.code === 'LB_NOT_JSON',
      );
      const done = await journal.resume('r');
      assert.equal(done.status, 'completed', JSON.stringify(done));
      // No data is null (the event came), not undefined (a timeout).
      assert.deepEqual(done.output, { replied: 'ada: null' });
      assert.deepEqual(effects, ['ada: null']);
      assert.throws(
        () => journal.send('r', 'approved', { by: 'eve' }),
        (e: { code?: string; message: string }) => e.code === 'LB_EVENT_REFUSED' && /Run r no longer waits for anything: it completed/.test(e.message),
      );
      const again = journal.send('r', 'approved', { by: 'bob' }, { id: 'approval-1' });
      assert.equal(again.outcome, 'duplicate');
      assert.equal(again.expect, 'taken');
      assert.equal(again.before?.status, 'delivered');
    } finally {
      journal.close();
    }
  });

  it('a timeout the journal holds: once it passed, resume returns undefined from the wait', async () => {
    effects.length = 0;
    const journal = openJournal({ journal: path.join(tmpDir(), 'j.db'), agents: [agent], log: () => undefined });
    try {
      const first = await journal.start(agent, { timeout: '300ms' }, { runId: 't' });
      assert.equal(first.status, 'waiting');
      const until = first.waitingFor?.until ?? assert.fail('no deadline');
      while (Date.now() <= until) await new Promise((r) => setTimeout(r, 50));
      const late = journal.send('t', 'approved', { by: 'late' });
      assert.equal(late.expect, 'late');
      assert.equal(late.timedOutAt, until);
      journal.send('t', 'note', 'n');
      const done = await journal.resume('t');
      assert.deepEqual(done.output, { replied: 'nobody: "n"' });
    } finally {
      journal.close();
    }
  });
});

describe('approval gates take their decision as an event', function () {
  this.timeout(60_000);

  it('approved while another session holds the run: kept for the gate, which takes it instead of stopping', async () => {
    const shipped: number[] = [];
    const ship = defineAction({
      type: 'api-events.ship',
      version: 1,
      effect: 'non-idempotent',
      approval: true,
      args: z.object({ n: z.number() }),
      key: (a, run) => `ship:${run.id}:${a.n}`,
      execute: (a) => void shipped.push(a.n),
    });
    const gated = defineAgent({
      name: 'api-events-gate',
      input: z.object({}),
      run: async (run) => run.step('ship', () => run.do(ship, { n: 1 })),
    });
    const store = openStore(path.join(tmpDir(), 'j.db'));
    try {
      const first = await startRun(store, gated, { script: 'api:gate', input: {}, runId: 'g' });
      assert.equal(first.status, 'awaiting-approval');
      const actionId = first.waitingOn?.actionId ?? assert.fail('no gate');
      let release: () => void = () => undefined;
      let atGate: () => void = () => undefined;
      const reached = new Promise<void>((r) => (atGate = r));
      const held = new Promise<void>((r) => (release = r));
      const resumed = resumeRun(store, gated, 'g', {
        hooks: {
          pause: (ev) => {
            if (ev.kind !== 'action:approval') return undefined;
            atGate();
            return held;
          },
        },
      });
      await reached;
      // The resume holds the lease: the decision cannot be applied now, so it waits in the run's inbox for the gate.
      assert.equal(recordApproval(store, 'g', actionId, true, 'ok while held'), 'sent');
      assert.equal(store.reader.action('g', actionId)?.approval, 'pending');
      release();
      const out = await resumed;
      assert.equal(out.status, 'completed', JSON.stringify(out));
      assert.deepEqual(shipped, [1]);
      const a = store.reader.action('g', actionId);
      assert.equal(a?.approval, 'approved');
      assert.equal(a?.approval_note, 'ok while held');
      assert.deepEqual(
        store.reader.inbox.ofRun('g').map((e) => [e.name, e.status]),
        [[`logbook:approval:${actionId}`, 'delivered']],
      );
      const kinds = store.reader.events('g').map((e) => e.kind);
      assert.ok(kinds.includes('action.approved') && kinds.includes('inbox.delivered'), kinds.join(' '));
      // A second decision for a gate already decided is refused, as before the inbox.
      assert.throws(() => recordApproval(store, 'g', actionId, false, null), /LB_BAD_DECISION|not waiting for approval/);
    } finally {
      store.close();
    }
  });
});

describe('logbook send racing another driver of the run', function () {
  this.timeout(60_000);

  it('the run it read as waiting is completed by the time it takes the lease: not-waiting with the status, not an error', async () => {
    const agent = defineAgent({
      name: 'api-events-race',
      input: z.object({}),
      run: async (run) => run.waitFor('go'),
    });
    const store = openStore(path.join(tmpDir(), 'j.db'));
    try {
      assert.equal((await startRun(store, agent, { script: 'api:race', input: {}, runId: 'x' })).status, 'waiting');
      const report = sendEvent(store, 'x', 'go', { n: 1 }, { role: 'cli', what: 'test' });
      assert.equal(report.expect, 'waiting-now');
      // What send read before the other driver took the event and completed the run.
      const stale = store.reader.run('x') ?? assert.fail('no run');
      assert.equal((await resumeRun(store, agent, 'x', {})).status, 'completed');
      let reads = 0;
      const reader = new Proxy(store.reader, {
        get: (t, k, recv) => (k === 'run' ? (id: string) => (reads++ === 0 ? stale : t.run(id)) : (Reflect.get(t, k, recv) as unknown)),
      });
      const racing = new Proxy(store, { get: (t, k, recv) => (k === 'reader' ? reader : (Reflect.get(t, k, recv) as unknown)) });
      assert.deepEqual(await continueAfterSend(racing, () => agent, report, {}), { how: 'not-waiting', status: 'completed' });
      // Negative control: a run still waiting that cannot be resumed (another agent's script) is still an error.
      const other = defineAgent({ name: 'someone-else', input: z.object({}), run: () => undefined });
      assert.equal((await startRun(store, agent, { script: 'api:race', input: {}, runId: 'y' })).status, 'waiting');
      const second = sendEvent(store, 'y', 'go', {}, { role: 'cli', what: 'test' });
      await assert.rejects(
        continueAfterSend(store, () => other, second, {}),
        (e: { code?: string }) => e.code === 'LB_RUN_NOT_RESUMABLE',
      );
      assert.equal(store.reader.run('y')?.status, 'waiting');
    } finally {
      store.close();
    }
  });
});
