// Example: a support agent on the Vercel AI SDK and an MCP server, made durable by agent-logbook/ai.
//
// A customer asks for a refund. The model looks the order up (read-only), refunds it (non-idempotent, with verify
// and an inverse, keyed by the order so it can never be paid twice), emails the customer (non-idempotent, verified by
// key) and opens a ticket on the helpdesk's MCP server (idempotentHint: the key travels in `_meta`), then streams
// its reply. Offline it talks to a scripted MockLanguageModelV3; with SUPPORT_AGENT_PROVIDER=openai and
// OPENAI_API_KEY set (and `npm install @ai-sdk/openai`), to a real model.

import { z } from 'zod';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { defineAction, defineAgent } from 'agent-logbook';
import { logbookMcpTools, logbookModel, logbookTools, replaySavings } from 'agent-logbook/ai';
import { connectHelpdesk, helpdesk } from './providers/helpdesk';
import { outbox } from './providers/outbox';
import { shop } from './providers/shop';
import { KEY_HEADER, MODEL_ID, supportModel, supportModelRecord } from './providers/supportModel';

// Non-idempotent: the processor ignores keys, so the refund is found again by its reference (verify). The key is the
// business key: whatever tool call id the model gives, order A-1001 is refunded once per run.
const refund = defineAction({
  type: 'tool.refund',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ orderId: z.string(), amount: z.number().positive(), reason: z.string() }),
  key: (a, run) => `refund:${run.id}:${a.orderId}`,
  execute: (a, { idempotencyKey }) => shop.refund({ orderId: a.orderId, amount: a.amount, reference: idempotencyKey }),
  verify: (_a, { idempotencyKey }) => shop.findRefund(idempotencyKey),
  compensate: (_a, result) => shop.reverseRefund(result.refundId),
  description: 'Refund an order (its total, or part of it) to the card it was paid with.',
});

const sendEmail = defineAction({
  type: 'tool.sendEmail',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
  key: (a, run) => `email:${run.id}:${a.to}:${a.subject}`,
  execute: (a, { idempotencyKey }) => outbox.send({ to: a.to, body: `${a.subject}\n\n${a.body}`, idempotencyKey }),
  verify: (_a, { idempotencyKey }) => outbox.find(idempotencyKey),
  description: 'Email the customer.',
});

const lookupOrder = tool({
  description: 'Look an order up by its id (A-1234): customer, email, item, total, status.',
  inputSchema: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => shop.lookup(orderId),
});

// SUPPORT_AGENT_SYSTEM replaces the system prompt: change it and resume a crashed run to see the drift check stop it.
const SYSTEM =
  process.env.SUPPORT_AGENT_SYSTEM ?? 'You are a support agent for a small shop. Look the order up before acting. Refund broken items in full, email the customer, and open a helpdesk ticket.';
const PRICES = { [MODEL_ID]: { inputPerMillion: 2, outputPerMillion: 8 }, 'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 } };

/** Offline by default; a real provider only when asked for, and only if its package is installed. */
async function baseModel(): Promise<LanguageModelV3> {
  if (process.env.SUPPORT_AGENT_PROVIDER !== 'openai') return supportModel();
  const name = '@ai-sdk/openai';
  const mod = (await import(name)) as { openai: (id: string) => LanguageModelV3 };
  return mod.openai(process.env.SUPPORT_AGENT_MODEL ?? 'gpt-4.1-mini');
}

export default defineAgent({
  name: 'support-agent',
  input: z.object({
    orderId: z.string().default('A-1001'),
    message: z.string().default('My kettle from order A-1001 arrived broken. Can I get my money back?'),
  }),
  async run(run, input) {
    const base = await baseModel();
    const model = logbookModel(run, base, { prices: PRICES, keyHeader: KEY_HEADER });
    const client = await connectHelpdesk();
    try {
      const resolution = await run.step('resolve', async () => {
        const tools = {
          ...logbookTools(run, {
            lookupOrder: { tool: lookupOrder, effect: 'read-only' },
            refund: { action: refund, approval: (a: { amount: number }) => a.amount > 500 },
            sendEmail,
          }),
          ...(await logbookMcpTools(run, client, { server: 'helpdesk', only: ['search_faq', 'open_ticket'] })),
        };
        const r = await generateText({ model, tools, system: SYSTEM, prompt: `${input.message} (order ${input.orderId})`, stopWhen: stepCountIs(6), maxRetries: 0 });
        return { summary: r.text, toolCalls: r.steps.flatMap((s) => s.toolCalls.map((t) => t.toolName)) };
      });
      const reply = await run.step('reply', async () => {
        const s = streamText({ model, system: SYSTEM, prompt: `Write the reply to the customer: ${resolution.summary}`, maxRetries: 0 });
        let text = '';
        for await (const delta of s.textStream) text += delta; // arrives live, as the model writes it
        return text;
      });
      const saved = replaySavings(run);
      // run.log: information for whoever runs it (stderr from the CLI, the debugger's console), not an error.
      if (saved.calls > 0) run.log(`support-agent: this attempt answered ${saved.calls} model call(s) from the journal: ${saved.inputTokens + saved.outputTokens} tokens, $${saved.cost.toFixed(4)} not spent again`);
      return { reply, toolCalls: resolution.toolCalls };
    } finally {
      await client.close();
    }
  },
  probe: () => ({
    'tool.refund': shop.record().refunds.map((r) => r.reference),
    'tool.sendEmail': outbox.record().sent.map((s) => s.key),
    'mcp.helpdesk.open_ticket': helpdesk.record().tickets.map((t) => t.key),
    'model.calls': supportModelRecord().billed.map((b) => b.key),
  }),
});
