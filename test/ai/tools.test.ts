// Tools through agent-logbook/ai: conditional approval gates, actions as tools, the SDK's own approval kept, bad entries.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAction, defineAgent, openStore, recordApproval, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookModel, logbookTools, type ToolEntry } from '../../src/ai';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const quiet = { log: () => undefined };

describe('ai: tools', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it('gates only the calls a conditional approval names, and runs each refund once across the approval', async () => {
    const refunded: string[] = [];
    const refund = defineAction({
      type: 'shop.refund',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ orderId: z.string(), amount: z.number() }),
      key: (a, run) => `refund:${run.id}:${a.orderId}`,
      execute: (a) => (refunded.push(a.orderId), { ok: a.orderId }),
      verify: () => undefined,
      description: 'Refund an order.',
    });
    const { model } = scriptedModel((c, i) =>
      c.prompt.some((m) => m.role === 'tool')
        ? [text('refunded')]
        : [toolCall('refund', { orderId: 'small', amount: 30 }, `a${i}`), toolCall('refund', { orderId: 'big', amount: 300 }, `b${i}`)],
    );
    const agent = defineAgent({
      name: 'gates',
      input: z.object({}),
      run: (run) =>
        run.step('refunds', async () => {
          const tools = logbookTools(run, { refund: { action: refund, approval: (a: { amount: number }) => a.amount > 100 } });
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false }),
            tools,
            prompt: 'refund both',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
          return r.text;
        }),
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'g', ...quiet });
    assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
    assert.equal(first.waitingOn?.actionId, 'refund:g:big');
    assert.deepEqual(refunded, ['small'], 'the small refund needed no approval');
    assert.equal(store.reader.step('g', 0)?.status, 'started', 'the step was not checkpointed while the run waits');
    recordApproval(store, 'g', 'refund:g:big', true, null);
    const second = await resumeRun(store, agent, 'g', quiet);
    assert.equal(second.status, 'completed', JSON.stringify(second.error));
    assert.equal(second.output, 'refunded');
    assert.deepEqual(refunded, ['small', 'big']);
  });

  it("keeps a tool's own needsApproval and description, and offers an action's args schema as the input schema", () => {
    const needsApproval = (input: { amount: number }): boolean => input.amount > 10;
    const agent = defineAgent({
      name: 'shape',
      input: z.object({}),
      run: (run) => {
        const action = defineAction({
          type: 'shape.a',
          version: 1,
          effect: 'idempotent',
          args: z.object({ n: z.number() }),
          key: (a) => `a:${a.n}`,
          execute: () => 1,
          description: 'Do a.',
        });
        const tools = logbookTools(run, {
          t: { tool: tool({ description: 'A tool.', inputSchema: z.object({ amount: z.number() }), needsApproval, execute: () => 1 }), effect: 'idempotent' },
          a: action,
        });
        assert.equal(tools.t?.needsApproval, needsApproval);
        assert.equal(tools.t?.description, 'A tool.');
        assert.equal(tools.a?.description, 'Do a.');
        assert.equal(tools.a?.inputSchema, action.args);
        return 'ok';
      },
    });
    return startRun(store, agent, { script: 'inline', input: {}, runId: 'shape', ...quiet }).then((o) => assert.equal(o.output, 'ok', JSON.stringify(o.error)));
  });

  it('refuses a model that is not an AI SDK 6 model object, saying what to pass', () => {
    const run = {
      id: 'r',
      agent: 'a',
      attempt: 1,
      step: () => Promise.resolve(),
      do: () => Promise.resolve(),
      currentStep: () => undefined,
      note: () => undefined,
    } as never;
    assert.throws(
      () => logbookModel(run, 'openai/gpt-4.1' as never),
      (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.INVALID_ARGS && /specification "v3".*not a model id string/.test(e.message),
    );
    assert.throws(() => logbookModel(run, { specificationVersion: 'v4', provider: 'x', modelId: 'y' } as never), /a language model of specification "v4"/);
  });

  it('refuses an entry that is not a tool or an action, and an unknown effect, saying what to write', () => {
    const run = {
      id: 'r',
      agent: 'a',
      attempt: 1,
      step: () => Promise.resolve(),
      do: () => Promise.resolve(),
      currentStep: () => undefined,
      note: () => undefined,
    } as never;
    assert.throws(
      () => logbookTools(run, { x: {} as ToolEntry }),
      (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.INVALID_DEFINITION && /x: \{ tool: xTool, effect:/.test(e.message),
    );
    assert.throws(
      () => logbookTools(run, { x: { tool: tool({ inputSchema: z.object({}), execute: () => 1 }), effect: 'sometimes' as never } }),
      (e: unknown) => e instanceof LogbookError && /effect "sometimes".*'read-only', 'idempotent', 'non-idempotent'/.test(e.message),
    );
  });
});
