// Example: order fulfilment — reserve stock, charge the card, confirm by email, ship after approval; failures compensate.

import { z } from 'zod';
import { ApprovalRejectedError, defineAction, defineAgent } from 'agent-logbook';
import { warehouse } from './providers/warehouse';
import { CardDeclinedError, payments } from './providers/payments';
import { carrier } from './providers/carrier';
import { outbox } from './providers/outbox';

/** Prices in cents. */
const CATALOG: Readonly<Record<string, { title: string; price: number }>> = {
  'sku-kettle': { title: 'Kettle', price: 3900 },
  'sku-mug': { title: 'Mug', price: 1200 },
  'sku-tea': { title: 'Tea, 250 g', price: 650 },
};

// Idempotent: the warehouse refuses a second reservation with the same key, so redoing it is safe.
const reserveStock = defineAction({
  type: 'stock.reserve',
  version: 1,
  effect: 'idempotent',
  args: z.object({ orderId: z.string(), sku: z.string(), qty: z.number().int().positive() }),
  key: (a, run) => `reserve:${run.id}:${a.orderId}:${a.sku}`,
  execute: (a, { idempotencyKey }) => warehouse.reserve({ sku: a.sku, qty: a.qty, idempotencyKey }),
  compensate: (_a, result, { idempotencyKey }) => warehouse.release({ reservationId: result.reservationId, idempotencyKey }),
});

// Non-idempotent: the card processor ignores keys. verify finds a charge by the reference we gave it.
const chargeCard = defineAction({
  type: 'payments.charge',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ orderId: z.string(), amount: z.number().int().positive(), card: z.string() }),
  key: (a, run) => `charge:${run.id}:${a.orderId}`,
  execute: (a, { idempotencyKey }) => payments.charge({ amount: a.amount, card: a.card, reference: idempotencyKey }),
  // A decline proves nothing was charged; any other error (a timeout) leaves the charge in doubt until verify answers.
  failure: (err) => (err instanceof CardDeclinedError ? 'not-happened' : 'in-doubt'),
  verify: (_a, { idempotencyKey }) => payments.findByReference(idempotencyKey),
  compensate: (_a, result, { idempotencyKey }) => payments.refund({ chargeId: result.chargeId, idempotencyKey }),
});

// Non-idempotent, no verify, no inverse: a crash mid-send needs a decision, and a sent email cannot be unsent.
const sendConfirmation = defineAction({
  type: 'email.send',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ orderId: z.string(), to: z.string().email(), body: z.string() }),
  key: (a, run) => `confirm:${run.id}:${a.orderId}`,
  execute: (a, { idempotencyKey }) => outbox.send({ to: a.to, body: a.body, idempotencyKey }),
});

// Idempotent with the carrier, but gated: a person approves each shipment. Once shipped it cannot be undone.
const ship = defineAction({
  type: 'ship.create',
  version: 1,
  effect: 'idempotent',
  approval: true,
  args: z.object({ orderId: z.string(), parcels: z.number().int().positive() }),
  key: (a, run) => `ship:${run.id}:${a.orderId}`,
  execute: (a, { idempotencyKey }) => carrier.createShipment({ orderId: a.orderId, parcels: a.parcels, idempotencyKey }),
});

const stockLevels = defineAction({
  type: 'stock.levels',
  version: 1,
  effect: 'read-only',
  args: z.object({ skus: z.array(z.string()) }),
  key: (a, run) => `levels:${run.id}:${a.skus.join(',')}`,
  execute: (a) => warehouse.levels(a.skus),
});

/** The script's own error for a shipment a person refused: the run fails and its policy compensates it. */
export class OrderCancelledError extends Error {
  constructor(orderId: string, reason: string) {
    super(`order ${orderId} was cancelled: ${reason}`);
    this.name = 'OrderCancelledError';
  }
}

const Line = z.object({ sku: z.enum(['sku-kettle', 'sku-mug', 'sku-tea']), qty: z.number().int().positive() });

export default defineAgent({
  name: 'order-fulfilment',
  input: z.object({
    orderId: z.string().default('order-1001'),
    customer: z.string().email().default('ada@example.com'),
    card: z.string().default('tok_visa'),
    lines: z.array(Line).min(1).default([{ sku: 'sku-kettle', qty: 1 }, { sku: 'sku-mug', qty: 2 }]),
  }),
  // A payment failure (or a refused shipment) after stock was reserved gives the stock back and refunds the card.
  onFailure: 'compensate',
  async run(run, input) {
    const order = await run.step('price order', () => {
      const lines = input.lines.map((l) => ({ ...l, title: CATALOG[l.sku]?.title ?? l.sku, amount: (CATALOG[l.sku]?.price ?? 0) * l.qty }));
      return { lines, total: lines.reduce((s, l) => s + l.amount, 0) };
    });
    for (const line of order.lines) {
      await run.step(`reserve ${line.sku}`, () => run.do(reserveStock, { orderId: input.orderId, sku: line.sku, qty: line.qty }));
    }
    const charge = await run.step('charge card', () => run.do(chargeCard, { orderId: input.orderId, amount: order.total, card: input.card }));
    await run.step('confirmation email', async () => {
      const body = `Thank you! Order ${input.orderId}: ${order.lines.map((l) => `${l.qty} × ${l.title}`).join(', ')}, ${(order.total / 100).toFixed(2)} EUR.`;
      await run.do(sendConfirmation, { orderId: input.orderId, to: input.customer, body });
      return { to: input.customer };
    });
    let shipment: { trackingNumber: string };
    try {
      shipment = await run.step('ship', () => run.do(ship, { orderId: input.orderId, parcels: order.lines.length }));
    } catch (err) {
      if (err instanceof ApprovalRejectedError) throw new OrderCancelledError(input.orderId, `the shipment was rejected (${err.message})`);
      throw err;
    }
    const stockLeft = await run.step('stock check', () => run.do(stockLevels, { skus: order.lines.map((l) => l.sku) }));
    return { orderId: input.orderId, total: order.total, chargeId: charge.chargeId, trackingNumber: shipment.trackingNumber, stockLeft };
  },
  probe: () => ({
    'stock.reserve': warehouse.record().reservations.map((r) => r.key),
    'inverse of stock.reserve': warehouse.record().releases.map((r) => r.key),
    'payments.charge': payments.record().charges.map((c) => c.reference),
    'inverse of payments.charge': payments.record().refunds.map((r) => r.key),
    'email.send': outbox.record().sent.map((s) => s.key),
    'ship.create': carrier.record().shipments.map((s) => s.key),
  }),
});
