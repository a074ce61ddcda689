// Migration fixture agent: every effect kind, an inverse, a verify, an approval gate and journaled model calls, so the journals it writes hold every kind of row.

import { z } from 'zod';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { defineAction, defineAgent } from 'agent-logbook';
import { logbookModel, logbookTools } from 'agent-logbook/ai';
import { readState, writeState } from '../../examples/providers/store';

interface World {
  reserved: Record<string, number>;
  charges: Record<string, string>;
  sms: string[];
  labels: string[];
}
const FILE = 'migration-world.json';
const world = (): World => readState<World>(FILE, { reserved: {}, charges: {}, sms: [], labels: [] });

const price = defineAction({
  type: 'price.lookup',
  version: 1,
  effect: 'read-only',
  args: z.object({ sku: z.string() }),
  key: (a, run) => `price:${run.id}:${a.sku}`,
  execute: (a) => ({ sku: a.sku, cents: 1000 + a.sku.length }),
});

const reserve = defineAction({
  type: 'stock.reserve',
  version: 1,
  effect: 'idempotent',
  args: z.object({ sku: z.string(), qty: z.number().int() }),
  key: (a, run) => `reserve:${run.id}:${a.sku}`,
  execute: (a, { idempotencyKey }) => {
    const w = world();
    w.reserved[idempotencyKey] = a.qty;
    writeState(FILE, w);
    return { reserved: a.qty };
  },
  compensate: (_a, _r, { idempotencyKey }) => {
    const w = world();
    delete w.reserved[idempotencyKey];
    writeState(FILE, w);
  },
});

const charge = defineAction({
  type: 'card.charge',
  version: 2,
  effect: 'non-idempotent',
  args: z.object({ order: z.string(), cents: z.number().int() }),
  key: (a, run) => `charge:${run.id}:${a.order}`,
  execute: (a, { idempotencyKey }) => {
    const w = world();
    const chargeId = `ch-${Object.keys(w.charges).length + 1}-${a.cents}`;
    w.charges[idempotencyKey] = chargeId;
    writeState(FILE, w);
    return { chargeId };
  },
  verify: (_a, { idempotencyKey }) => {
    const chargeId = world().charges[idempotencyKey];
    return chargeId === undefined ? undefined : { chargeId };
  },
  compensate: (_a, r) => ({ refunded: r.chargeId }),
});

const sms = defineAction({
  type: 'sms.notify',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string(), text: z.string() }),
  key: (a, run) => `sms:${run.id}:${a.to}`,
  execute: (a, { idempotencyKey }) => {
    const w = world();
    w.sms.push(idempotencyKey);
    writeState(FILE, w);
    return { sent: a.to };
  },
});

const ship = defineAction({
  type: 'ship.order',
  version: 1,
  effect: 'idempotent',
  approval: true,
  args: z.object({ order: z.string() }),
  key: (a, run) => `ship:${run.id}:${a.order}`,
  execute: (a) => ({ shipped: a.order }),
});

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 7, text: 7, reasoning: undefined },
};

/** First a tool call (a label printed, non-idempotent), then a reply that quotes the tool's output. */
const model = new MockLanguageModelV3({
  provider: 'mock',
  modelId: 'fixture-1',
  doGenerate: (call) => {
    const result = call.prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).find((p) => p.type === 'tool-result');
    const content = result
      ? [{ type: 'text' as const, text: `Label printed: ${JSON.stringify(result.output)}` }]
      : [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'printLabel', input: JSON.stringify({ order: 'o-1' }) }];
    return Promise.resolve({
      content,
      finishReason: { unified: result ? ('stop' as const) : ('tool-calls' as const), raw: undefined },
      usage,
      response: { id: result ? 'resp-2' : 'resp-1', modelId: 'fixture-1', timestamp: new Date(Date.UTC(2026, 10, 30, 12, 0, 0)) },
      warnings: [],
    });
  },
});

export default defineAgent({
  name: 'migration-fixture',
  input: z.object({ approval: z.boolean().default(false), fail: z.boolean().default(false) }),
  async run(run, input) {
    const cents = await run.step('prepare', async () => {
      const p = await run.do(price, { sku: 'kettle' });
      await run.do(reserve, { sku: 'kettle', qty: 1 });
      return p.cents;
    });
    const receipt = await run.step('charge', () => run.do(charge, { order: 'o-1', cents }));
    await run.step('notify', () => run.do(sms, { to: '+100', text: `charged ${receipt.chargeId}` }));
    if (input.approval) await run.step('ship', () => run.do(ship, { order: 'o-1' }));
    const label = await run.step('label', async () => {
      const tools = logbookTools(run, {
        printLabel: {
          tool: tool({
            description: 'Print a shipping label.',
            inputSchema: z.object({ order: z.string() }),
            execute: ({ order }) => {
              const w = world();
              w.labels.push(`${run.id}:${order}`);
              writeState(FILE, w);
              return { label: `L-${order}` };
            },
          }),
          effect: 'non-idempotent',
          key: (a: { order: string }) => `label:${run.id}:${a.order}`,
        },
      });
      const r = await generateText({ model: logbookModel(run, model), tools, prompt: 'print the label for o-1', stopWhen: stepCountIs(3), maxRetries: 0 });
      return r.text;
    });
    if (input.fail) await run.step('explode', () => Promise.reject(new Error('the fixture fails on purpose')));
    return { cents, chargeId: receipt.chargeId, label };
  },
});
