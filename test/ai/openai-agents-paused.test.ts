// logbookRunAgent: the SDK's own interruptions kept in the journal as its serialised RunState, answered by a person.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, RunContext, RunState, Runner, setTraceProcessors, tool } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { z } from 'zod';
import { defineAgent, openStore, recordApproval, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookAgentsTool, logbookModelProvider, logbookRunAgent } from '../../src/openaiAgents';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const toolResults = (c: LanguageModelV3CallOptions) => c.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);

interface Seen {
  looked: string[];
  refunded: string[];
  contexts: unknown[];
  logs: string[];
}

/**
 * Looks an order up and refunds it in one turn (two calls at once): the lookup is a logbookAgentsTool, the refund a
 * plain SDK tool() with needsApproval (or a logbookAgentsTool with one), so the SDK pauses the run at the refund.
 */
function agentOf(seen: Seen, refundKind: 'sdk' | 'logbook', context: Record<string, unknown>) {
  const { model, calls } = scriptedModel((c, i) => {
    const results = toolResults(c);
    if (results.length === 0) return [toolCall('lookup', { orderId: 'big' }, `l${i}`), toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)];
    return [text(`done: ${JSON.stringify(results.map((r) => ('output' in r ? r.output : r.type)))}`)];
  });
  const agent = defineAgent({
    name: 'agents-paused',
    input: z.object({}),
    run: async (run) => {
      const lookup = logbookAgentsTool(run, {
        name: 'lookup',
        description: 'Look an order up.',
        parameters: z.object({ orderId: z.string() }),
        effect: 'read-only',
        execute: (a) => (seen.looked.push(a.orderId), { orderId: a.orderId, total: 300 }),
      });
      const refund =
        refundKind === 'sdk'
          ? tool({
              name: 'refund',
              description: 'Refund an order.',
              parameters: z.object({ orderId: z.string(), amount: z.number() }),
              needsApproval: true,
              execute: (a, ctx?: RunContext<Record<string, unknown>>) => {
                seen.refunded.push(a.orderId);
                seen.contexts.push(ctx?.context);
                return `refunded ${a.orderId}`;
              },
            })
          : logbookAgentsTool(run, {
              name: 'refund',
              description: 'Refund an order.',
              parameters: z.object({ orderId: z.string(), amount: z.number() }),
              effect: 'non-idempotent',
              key: (a) => `refund:${run.id}:${a.orderId}`,
              execute: (a, ctx) => {
                seen.refunded.push(a.orderId);
                seen.contexts.push(ctx.runContext?.context);
                return { refundId: `re-${a.orderId}` };
              },
              verify: () => undefined,
              needsApproval: (_ctx, a) => Promise.resolve(a.amount > 100),
            });
      const support = new Agent({
        name: 'support',
        instructions: 'Look up, then refund.',
        tools: [lookup, refund],
        modelSettings: { parallelToolCalls: true },
      });
      const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracingDisabled: true });
      const out = await logbookRunAgent(run, runner, support, 'refund order big', { name: 'support', context });
      return { said: out.finalOutput, pauses: out.pauses };
    },
  });
  return { agent, calls };
}

function newSeen(): Seen {
  return { looked: [], refunded: [], contexts: [], logs: [] };
}

const SECRET = 'sk-planted-0c1d2e3f4a5b6c7d8e9f';

describe('openai-agents: logbookRunAgent keeps a paused run as the SDK serialised it', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = tmpDir();
    store = openStore(path.join(dir, 'journal.db'));
  });
  afterEach(() => store.close());

  for (const kind of ['sdk', 'logbook'] as const) {
    it(`pauses at a ${kind === 'sdk' ? 'plain tool()' : 'logbookAgentsTool'}'s needsApproval, journals the RunState, and resumes from it after approval`, async () => {
      const seen = newSeen();
      const { agent, calls } = agentOf(seen, kind, { tenant: 'acme' });
      const log = (l: string) => seen.logs.push(l);
      const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'p', log });
      assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
      const gate = kind === 'sdk' ? 'approval:p:1:r0' : 'approval:refund:p:big';
      assert.equal(first.waitingOn?.actionId, gate);
      assert.deepEqual(seen.refunded, [], 'nothing refunded before the approval');
      assert.deepEqual(seen.looked, ['big'], 'the call that needed no approval ran in the same turn');
      assert.equal(calls(), 1);
      if (kind === 'sdk')
        assert.ok(
          seen.logs.some((l) => /tool "refund" of agent "support" .* is not journaled by Logbook.*needsApproval is/.test(l)),
          seen.logs.join('\n'),
        );
      else assert.ok(!seen.logs.some((l) => /not journaled/.test(l)), seen.logs.join('\n'));

      // The step's result is the SDK's own serialised state, with what it holds done and what waits.
      const steps = store.reader.steps('p', 0, 100);
      assert.deepEqual(
        steps.map((s) => s.name),
        ['support', 'support: approval'],
      );
      const paused = JSON.parse(steps[0]!.result!).paused;
      const state = JSON.parse(paused.state);
      assert.equal(state.$schemaVersion, '1.22');
      assert.deepEqual(state.context.context, {}, 'the run context is not journaled');
      assert.deepEqual(
        paused.calls.map((c: { callId: string; sdk: string; journal: { status: string } | null }) => [c.callId, c.sdk, c.journal?.status ?? null]),
        [
          ['l0', 'completed', 'committed'],
          ['r0', 'awaiting approval', null],
        ],
      );

      recordApproval(store, 'p', gate, true, null);
      const second = await resumeRun(store, agent, 'p', { log });
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
      assert.deepEqual(seen.refunded, ['big'], 'refunded once');
      assert.deepEqual(seen.looked, ['big'], 'the completed lookup was not run again: the SDK held it completed');
      assert.deepEqual(seen.contexts, [{ tenant: 'acme' }], 'the tool got the live run context');
      assert.equal(calls(), 2, 'only the call after the pause was made');
      assert.deepEqual((second.output as { pauses: number }).pauses, 1);
      assert.deepEqual(
        store.reader.steps('p', 0, 100).map((s) => s.name),
        ['support', 'support: approval', 'support: resume 1'],
      );
    });
  }

  it('a rejection with a note is the SDK rejection the model reads, and nothing is refunded', async () => {
    const seen = newSeen();
    const { agent } = agentOf(seen, 'logbook', {});
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'n', log: () => undefined });
    recordApproval(store, 'n', 'approval:refund:n:big', false, 'over the limit');
    const r = await resumeRun(store, agent, 'n', { log: () => undefined });
    assert.equal(r.status, 'completed', JSON.stringify(r.error));
    assert.deepEqual(seen.refunded, []);
    assert.match(String((r.output as { said: string }).said), /A person rejected this call: over the limit/);
  });

  it('keeps a planted secret out of the journal (environment and run context), and gives the tool the live one', async () => {
    const seen = newSeen();
    process.env.PLANTED_AGENTS_TOKEN = `${SECRET}-env`;
    try {
      const { agent } = agentOf(seen, 'logbook', { apiKey: SECRET, nested: { password: `${SECRET}-pw` }, plain: 'visible' });
      const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 's', log: () => undefined });
      assert.equal(first.status, 'awaiting-approval');
      recordApproval(store, 's', 'approval:refund:s:big', true, null);
      const second = await resumeRun(store, agent, 's', { log: () => undefined });
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
      assert.deepEqual(seen.contexts, [{ apiKey: SECRET, nested: { password: `${SECRET}-pw` }, plain: 'visible' }]);
    } finally {
      delete process.env.PLANTED_AGENTS_TOKEN;
    }
    store.close();
    for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('journal.db'))) {
      const bytes = fs.readFileSync(path.join(dir, f)).toString('latin1');
      assert.ok(!bytes.includes(SECRET), `${f} holds the planted secret`);
    }
    store = openStore(path.join(dir, 'journal.db'));
  });

  it('streamed: the segments run streamed, the pause and the resume alike', async () => {
    const seen = newSeen();
    const { model, calls } = scriptedModel((c, i) =>
      toolResults(c).length === 0 ? [toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)] : [text('refunded, streamed')],
    );
    const agent = defineAgent({
      name: 'agents-paused-stream',
      input: z.object({}),
      run: async (run) => {
        const refund = logbookAgentsTool(run, {
          name: 'refund',
          description: 'Refund an order.',
          parameters: z.object({ orderId: z.string(), amount: z.number() }),
          effect: 'non-idempotent',
          key: (a) => `refund:${run.id}:${a.orderId}`,
          execute: (a) => (seen.refunded.push(a.orderId), { ok: true }),
          verify: () => undefined,
          needsApproval: true,
        });
        const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracingDisabled: true });
        const out = await logbookRunAgent(run, runner, new Agent({ name: 'support', instructions: 'Refund.', tools: [refund] }), 'refund big', {
          stream: true,
        });
        return out.finalOutput;
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'st', log: () => undefined });
    assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
    assert.equal(first.waitingOn?.actionId, 'approval:refund:st:big');
    recordApproval(store, 'st', 'approval:refund:st:big', true, null);
    const second = await resumeRun(store, agent, 'st', { log: () => undefined });
    assert.equal(second.status, 'completed', JSON.stringify(second.error));
    assert.equal(second.output, 'refunded, streamed');
    assert.deepEqual(seen.refunded, ['big']);
    assert.equal(calls(), 2);
    assert.deepEqual(
      store.reader
        .actions('st')
        .filter((a) => a.type.startsWith('model.'))
        .map((a) => a.type),
      ['model.stream', 'model.stream'],
    );
  });

  for (const how of ['handoff', 'asTool'] as const) {
    it(`a nested approval (${how}): the SDK's state keeps the nested run, and the approved refund runs once after the resume`, async () => {
      const refunded: string[] = [];
      const system = (c: LanguageModelV3CallOptions): string =>
        c.prompt
          .filter((m) => m.role === 'system')
          .map((m) => m.content)
          .join(' ');
      const { model, calls } = scriptedModel((c, i) => {
        const results = toolResults(c);
        if (system(c).includes('You refund'))
          return results.some((r) => r.type === 'tool-result' && r.toolName === 'refund')
            ? [text('refunded big')]
            : [toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)];
        if (how === 'handoff') return [toolCall('transfer_to_refunds', {}, `h${i}`)];
        return results.length > 0 ? [text('the refunds agent handled it')] : [toolCall('refunds_agent', { input: 'refund big' }, `t${i}`)];
      });
      const agent = defineAgent({
        name: `agents-paused-${how}`,
        input: z.object({}),
        run: async (run) => {
          const refund = logbookAgentsTool(run, {
            name: 'refund',
            description: 'Refund an order.',
            parameters: z.object({ orderId: z.string(), amount: z.number() }),
            effect: 'non-idempotent',
            key: (a) => `refund:${run.id}:${a.orderId}`,
            execute: (a) => (refunded.push(a.orderId), { refundId: `r-${a.orderId}` }),
            verify: () => undefined,
            needsApproval: true,
          });
          const refunds = new Agent({ name: 'refunds', instructions: 'You refund orders.', tools: [refund] });
          const front =
            how === 'handoff'
              ? new Agent({ name: 'front', instructions: 'You route customers.', handoffs: [refunds] })
              : new Agent({
                  name: 'front',
                  instructions: 'You route customers.',
                  tools: [refunds.asTool({ toolName: 'refunds_agent', toolDescription: 'Refunds orders.' })],
                });
          const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracingDisabled: true });
          return (await logbookRunAgent(run, runner, front, 'refund order big', { context: { apiKey: SECRET } })).finalOutput;
        },
      });
      const logs: string[] = [];
      const first = await startRun(store, agent, { script: 'inline', input: {}, runId: how, log: (l) => logs.push(l) });
      assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
      assert.equal(first.waitingOn?.actionId, `approval:refund:${how}:big`);
      assert.deepEqual(
        logs.filter((l) => /not journaled/.test(l)),
        [],
        'an agent used as a tool, and logbookAgentsTool tools, are not warned about',
      );
      const before = calls();
      assert.equal(before, 2);
      const paused = JSON.parse(store.reader.steps(how, 0, 10)[0]!.result!).paused;
      assert.ok(!paused.state.includes(SECRET), 'the nested run kept inside the state has no run context either');
      recordApproval(store, how, `approval:refund:${how}:big`, true, null);
      const second = await resumeRun(store, agent, how, { log: () => undefined });
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
      assert.deepEqual(refunded, ['big']);
      assert.equal(second.output, how === 'handoff' ? 'refunded big' : 'the refunds agent handled it');
      assert.equal(calls(), before + (how === 'handoff' ? 1 : 2), 'the calls before the pause were neither made nor replayed');
    });
  }

  it('the SDK holds a call completed only once the journal committed it: an in-doubt refund is reconciled before the SDK hears of it', async () => {
    // Lookup and a gated refund in one turn; the refund's execute throws after refunding (in doubt); then an email
    // needs approval too, which pauses the run a second time with the refund done.
    const world: string[] = [];
    let failOnce = true;
    const { model, calls } = scriptedModel((c, i) => {
      const names = toolResults(c).map((r) => (r.type === 'tool-result' ? r.toolName : r.type));
      if (names.length === 0) return [toolCall('lookup', { orderId: 'big' }, `l${i}`), toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)];
      if (!names.includes('sendEmail')) return [toolCall('sendEmail', { to: 'c@example.com' }, `e${i}`)];
      return [text('all done')];
    });
    const agent = defineAgent({
      name: 'agents-paused-map',
      input: z.object({}),
      run: async (run) => {
        const lookup = logbookAgentsTool(run, {
          name: 'lookup',
          description: 'Look up.',
          parameters: z.object({ orderId: z.string() }),
          effect: 'read-only',
          execute: (a) => ({ orderId: a.orderId, total: 300 }),
        });
        const refund = logbookAgentsTool(run, {
          name: 'refund',
          description: 'Refund.',
          parameters: z.object({ orderId: z.string(), amount: z.number() }),
          effect: 'non-idempotent',
          key: (a) => `refund:${run.id}:${a.orderId}`,
          execute: (_a, ctx) => {
            world.push(ctx.idempotencyKey);
            if (failOnce) {
              failOnce = false;
              throw new Error('the processor timed out after refunding');
            }
            return { refunded: true };
          },
          verify: (_a, ctx) => (world.includes(ctx.idempotencyKey) ? { refunded: true } : undefined),
          needsApproval: true,
        });
        const sendEmail = logbookAgentsTool(run, {
          name: 'sendEmail',
          description: 'Email.',
          parameters: z.object({ to: z.string() }),
          effect: 'non-idempotent',
          key: (a) => `email:${run.id}:${a.to}`,
          execute: (a) => (world.push(`email ${a.to}`), { sent: true }),
          verify: () => undefined,
          needsApproval: true,
        });
        const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracingDisabled: true });
        const support = new Agent({ name: 'support', instructions: 'x', tools: [lookup, refund, sendEmail], modelSettings: { parallelToolCalls: true } });
        return (await logbookRunAgent(run, runner, support, 'refund big', { name: 'case' })).finalOutput;
      },
    });
    const summary = (i: number) =>
      JSON.parse(store.reader.steps('m', 0, 20).filter((s) => s.result?.includes('"paused"'))[i]!.result!).paused.calls.map(
        (c: { callId: string; tool: string; sdk: string; journal: { key: string; status: string } | null }) =>
          `${c.tool} ${c.callId}: ${c.sdk}, journal ${c.journal ? `${c.journal.status} ${c.journal.key}` : 'none'}`,
      );
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'm', log: () => undefined });
    assert.equal(first.status, 'awaiting-approval');
    assert.deepEqual(summary(0), ['lookup l0: completed, journal committed tool:m:model:1.1:l0', 'refund r0: awaiting approval, journal none']);
    recordApproval(store, 'm', 'approval:refund:m:big', true, null);
    // The refund is in doubt: its execute threw after the effect. The SDK is given no output for it, so the run stops.
    const doubt = await resumeRun(store, agent, 'm', { log: () => undefined });
    assert.notEqual(doubt.status, 'completed', JSON.stringify(doubt));
    const row = store.reader.actions('m').find((a) => a.id === 'refund:m:big');
    assert.equal(row?.status, 'started', 'in doubt in the journal');
    // Resumed: verify finds the refund, the SDK gets its output and holds it completed; the email pauses the run again.
    const again = await resumeRun(store, agent, 'm', { log: () => undefined });
    assert.equal(again.status, 'awaiting-approval', JSON.stringify(again.error));
    assert.equal(store.reader.actions('m').find((a) => a.id === 'refund:m:big')?.reconciliation, 'verified');
    assert.deepEqual(summary(1), [
      'lookup l0: completed, journal committed tool:m:model:1.1:l0',
      'refund r0: completed, journal committed refund:m:big',
      'sendEmail e1: awaiting approval, journal none',
    ]);
    recordApproval(store, 'm', 'approval:email:m:c@example.com', true, null);
    const done = await resumeRun(store, agent, 'm', { log: () => undefined });
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(world, ['refund:m:big', 'email c@example.com'], 'the refund once, the email once');
    assert.equal(calls(), 3);
  });

  it('never journals the tracing API key, and shows the stripping is needed: the SDK itself serialises the run context', async () => {
    setTraceProcessors([]);
    const seen = newSeen();
    const { model } = scriptedModel((c, i) => (toolResults(c).length === 0 ? [toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)] : [text('ok')]));
    let sdkState = '';
    const agent = defineAgent({
      name: 'agents-paused-trace',
      input: z.object({}),
      run: async (run) => {
        const refund = tool({
          name: 'refund',
          description: 'Refund.',
          parameters: z.object({ orderId: z.string(), amount: z.number() }),
          needsApproval: true,
          execute: (a) => (seen.refunded.push(a.orderId), 'ok'),
        });
        const support = new Agent({ name: 'support', instructions: 'x', tools: [refund] });
        const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracing: { apiKey: `${SECRET}-trace` } });
        const out = await logbookRunAgent(run, runner, support, 'refund big', { context: { apiKey: SECRET } });
        return out.finalOutput;
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 't', log: () => undefined });
    assert.equal(first.status, 'awaiting-approval');
    const paused = JSON.parse(store.reader.steps('t', 0, 10)[0]!.result!).paused;
    // The control: restored with the live context, the SDK's own toString() carries the key.
    const support = new Agent({
      name: 'support',
      instructions: 'x',
      tools: [
        tool({
          name: 'refund',
          description: 'Refund.',
          parameters: z.object({ orderId: z.string(), amount: z.number() }),
          needsApproval: true,
          execute: () => 'ok',
        }),
      ],
    });
    sdkState = (await RunState.fromStringWithContext(support, paused.state, new RunContext({ apiKey: SECRET }), { contextStrategy: 'merge' })).toString({
      includeTracingApiKey: true,
    });
    assert.ok(sdkState.includes(SECRET), 'the SDK would have journaled the run context');
    assert.ok(JSON.parse(paused.state).trace !== null, 'traced');
    recordApproval(store, 't', 'approval:t:1:r0', true, null);
    const second = await resumeRun(store, agent, 't', { log: () => undefined });
    assert.equal(second.status, 'completed', JSON.stringify(second.error));
    store.close();
    for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('journal.db')))
      assert.ok(!fs.readFileSync(path.join(dir, f)).toString('latin1').includes(SECRET), `${f} holds a planted secret`);
    store = openStore(path.join(dir, 'journal.db'));
  });

  it('a second driver in the same process is refused while the first resumes from the state; one refund', async () => {
    const seen = newSeen();
    const { agent } = agentOf(seen, 'logbook', {});
    await startRun(store, agent, { script: 'inline', input: {}, runId: 'two', log: () => undefined });
    recordApproval(store, 'two', 'approval:refund:two:big', true, null);
    const [a, b] = await Promise.allSettled([
      resumeRun(store, agent, 'two', { log: () => undefined }),
      resumeRun(store, agent, 'two', { log: () => undefined }),
    ]);
    const outcomes = [a, b].map((x) => (x.status === 'fulfilled' ? x.value.status : (x.reason as { code?: string }).code));
    assert.deepEqual(outcomes.sort(), ['LB_LEASE_HELD', 'completed'], JSON.stringify(outcomes));
    assert.deepEqual(seen.refunded, ['big']);
  });

  it('refuses to be called inside a step, saying how to call it', async () => {
    const agent = defineAgent({
      name: 'agents-paused-nested-step',
      input: z.object({}),
      run: (run) =>
        run.step('outer', async () => {
          const runner = new Runner({
            modelProvider: logbookModelProvider(run, { getModel: () => aisdk(scriptedModel(() => [text('x')]).model) }),
            tracingDisabled: true,
          });
          return (await logbookRunAgent(run, runner, new Agent({ name: 'a', instructions: 'x' }), 'hi')).finalOutput;
        }),
    });
    const r = await startRun(store, agent, { script: 'inline', input: {}, runId: 'ns', log: () => undefined });
    assert.equal(r.status, 'failed');
    assert.equal(r.error?.code, 'LB_STEP_MISUSE');
    assert.match(r.error?.message ?? '', /logbookRunAgent was called inside step "outer".*Call it in run\(run, input\) outside any step/s);
  });
});
