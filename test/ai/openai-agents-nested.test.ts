// Nested agents under agent-logbook/openai-agents: a handoff and an agent used as a tool, each across an approval resume.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { Agent, Runner } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { z } from 'zod';
import { defineAgent, openStore, recordApproval, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookAgentsTool, logbookModelProvider } from '../../src/openaiAgents';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const quiet = { log: () => undefined };

const system = (c: LanguageModelV3CallOptions): string =>
  c.prompt
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join(' ');
const toolResults = (c: LanguageModelV3CallOptions) => c.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);

function nested(how: 'handoff' | 'asTool', refunded: string[]) {
  // The refunds agent refunds once, then says so; the front agent hands off (or calls the refunds agent as a tool).
  const { model, calls } = scriptedModel((c, i) => {
    if (system(c).includes('You refund'))
      return toolResults(c).some((r) => r.type === 'tool-result' && r.toolName === 'refund')
        ? [text('refunded big')]
        : [toolCall('refund', { orderId: 'big', amount: 300 }, `r${i}`)];
    if (how === 'handoff') return [toolCall('transfer_to_refunds', {}, `h${i}`)];
    return toolResults(c).length > 0 ? [text('the refunds agent handled it')] : [toolCall('refunds_agent', { input: 'refund big' }, `t${i}`)];
  });
  const agent = defineAgent({
    name: `agents-${how}`,
    input: z.object({}),
    run: (run) =>
      run.step('front desk', async () => {
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
        return String((await runner.run(front, 'refund order big')).finalOutput);
      }),
  });
  return { agent, calls };
}

describe('openai-agents: nested agents across a resume', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  for (const how of ['handoff', 'asTool'] as const) {
    it(`a nested approval (${how}) stops the run, and after logbook approve it finishes, the refund once, no call bought twice`, async () => {
      const refunded: string[] = [];
      const { agent, calls } = nested(how, refunded);
      const first = await startRun(store, agent, { script: 'inline', input: {}, runId: how, ...quiet });
      assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
      assert.equal(first.waitingOn?.actionId, `refund:${how}:big`);
      const before = calls();
      assert.equal(before, 2, 'the front agent and the refunds agent each asked once');
      recordApproval(store, how, `refund:${how}:big`, true, null);
      const second = await resumeRun(store, agent, how, quiet);
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
      assert.deepEqual(refunded, ['big']);
      assert.equal(second.output, how === 'handoff' ? 'refunded big' : 'the refunds agent handled it');
      assert.equal(calls(), before + (how === 'handoff' ? 1 : 2), 'the calls before the gate came from the journal');
    });
  }
});
