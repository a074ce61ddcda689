// Example: capturing a card payment from a worker that may be frozen mid-flight (SIGSTOP, a paused VM, a long GC).
//
// Two defences, in order. `ctx.assertLease()`, called right before the request with nothing awaited in between,
// throws LB_LEASE_LOST once this process can no longer prove its lease by its own clock (another worker may have taken
// the run over and captured already); the run stops resumable and sends nothing. A pause *between* that check and the
// request cannot be closed by any process: there the idempotency key, sent to a processor that refuses a repeated
// key, is what keeps the card from being charged twice.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';
import { cards } from './providers/cards';

const capture = defineAction({
  type: 'card.capture',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ orderId: z.string(), amount: z.number().int().positive(), card: z.string() }),
  key: (a, run) => `capture:${run.id}:${a.orderId}`,
  execute: async (a, ctx) => {
    // The slow part first: a freeze here is caught by the check below.
    await cards.screen(a.card);
    ctx.assertLease();
    // No await between the check and the request; the key makes a request sent twice capture once.
    return cards.capture({ amount: a.amount, card: a.card, idempotencyKey: ctx.idempotencyKey });
  },
  verify: (_a, { idempotencyKey }) => cards.find(idempotencyKey),
});

export default defineAgent({
  name: 'card-capture',
  input: z.object({ orderId: z.string().default('order-1'), amount: z.number().int().positive().default(4200), card: z.string().default('tok_visa') }),
  async run(run, input) {
    const captured = await run.step('capture', () => run.do(capture, input));
    return { captureId: captured.captureId, amount: captured.amount };
  },
  probe: () => ({ 'card.capture': cards.record().captures.map((c) => c.key) }),
});
