// agent-logbook/openai-agents: journaled model responses (streamed too) and Logbook tools under the Agents SDK's Runner.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { Agent, Runner } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { z } from 'zod';
import { defineAgent, openStore, recordApproval, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookAgentsTool, logbookModelProvider } from '../../src/openaiAgents';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const quiet = { log: () => undefined };

/** Asks for a small and a big refund, then answers once the tools answered. */
function refundsModel() {
  return scriptedModel((c, i) =>
    c.prompt.some((m) => m.role === 'tool')
      ? [text('both refunded')]
      : [toolCall('refund', { orderId: 'small', amount: 30 }, `a${i}`), toolCall('refund', { orderId: 'big', amount: 300 }, `b${i}`)],
  );
}

function supportAgent(model: ReturnType<typeof refundsModel>['model'], refunded: string[], stream: boolean) {
  return defineAgent({
    name: 'agents-support',
    input: z.object({}),
    run: (run) =>
      run.step('answer', async () => {
        const refund = logbookAgentsTool(run, {
          name: 'refund',
          description: 'Refund an order.',
          parameters: z.object({ orderId: z.string(), amount: z.number() }),
          effect: 'non-idempotent',
          key: (a) => `refund:${run.id}:${a.orderId}`,
          execute: (a, ctx) => (refunded.push(a.orderId), { refundId: `r-${a.orderId}`, key: ctx.idempotencyKey }),
          verify: () => undefined,
          // The SDK's conditional approval, kept in its shape: a Logbook gate for refunds over 100.
          needsApproval: (_ctx, a) => Promise.resolve(a.amount > 100),
        });
        const agent = new Agent({ name: 'support', instructions: 'Refund what is asked.', tools: [refund] });
        const runner = new Runner({ modelProvider: logbookModelProvider(run, { getModel: () => aisdk(model) }), tracingDisabled: true });
        if (!stream) return String((await runner.run(agent, 'refund both')).finalOutput);
        const s = await runner.run(agent, 'refund both', { stream: true });
        for await (const _ of s);
        await s.completed;
        return String(s.finalOutput);
      }),
  });
}

describe('openai-agents: a Runner on the journal', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  for (const stream of [false, true]) {
    it(`gates the big refund by the SDK's needsApproval, resumes after approval without asking the model again${stream ? ' (streamed)' : ''}`, async () => {
      const refunded: string[] = [];
      const { model, calls } = refundsModel();
      const agent = supportAgent(model, refunded, stream);
      const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'o', ...quiet });
      assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
      assert.equal(first.waitingOn?.actionId, 'refund:o:big');
      assert.deepEqual(refunded, ['small']);
      assert.equal(calls(), 1, 'one model call so far');
      recordApproval(store, 'o', 'refund:o:big', true, null);
      const second = await resumeRun(store, agent, 'o', quiet);
      assert.equal(second.status, 'completed', JSON.stringify(second.error));
      assert.equal(second.output, 'both refunded');
      assert.deepEqual(refunded, ['small', 'big'], 'each refund once');
      assert.equal(calls(), 2, 'the committed first call was answered from the journal; only the new one was made');
      const types = store.reader.actions('o').map((a) => `${a.type}:${a.status}`);
      assert.deepEqual(types.filter((t) => t.startsWith('model.')).length, 2, types.join(', '));
    });
  }
});
