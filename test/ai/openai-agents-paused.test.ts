// logbookRunAgent: the SDK's own interruptions kept in the journal as its serialised RunState, answered by a person.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, Runner, tool, type RunContext } from '@openai/agents';
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
});
