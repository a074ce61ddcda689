// An example card processor: like many real ones it ignores idempotency keys, but it can be searched by reference.

import { readState, writeState } from './store';

export interface Charge {
  readonly chargeId: string;
  readonly reference: string;
  readonly amount: number;
  readonly card: string;
}

interface PaymentsState {
  charges: Charge[];
  /** Refunds in the order they happened; each honours its own key, so a repeated refund is refused. */
  refunds: Array<{ key: string; refundId: string; chargeId: string; amount: number; at: number }>;
  declines: number;
}

const FILE = 'payments.json';
const load = (): PaymentsState => readState<PaymentsState>(FILE, { charges: [], refunds: [], declines: 0 });

/** The card processor said no: nothing was charged. */
export class CardDeclinedError extends Error {
  constructor(card: string) {
    super(`the card ${card} was declined`);
    this.name = 'CardDeclinedError';
  }
}

/** The test card number that always declines, like a payment sandbox's. */
export const DECLINED_CARD = 'tok_declined';

export const payments = {
  charge(req: { amount: number; card: string; reference: string }): { chargeId: string; amount: number } {
    const state = load();
    if (req.card === DECLINED_CARD) {
      state.declines++;
      writeState(FILE, state);
      throw new CardDeclinedError(req.card);
    }
    // No idempotency: every call is a new charge. This is why charge needs verify (findByReference).
    const chargeId = `ch_${state.charges.length + 1}`;
    state.charges.push({ chargeId, reference: req.reference, amount: req.amount, card: req.card });
    writeState(FILE, state);
    return { chargeId, amount: req.amount };
  },

  findByReference(reference: string): { chargeId: string; amount: number } | undefined {
    const c = load().charges.find((x) => x.reference === reference);
    return c ? { chargeId: c.chargeId, amount: c.amount } : undefined;
  },

  refund(req: { chargeId: string; idempotencyKey: string }): { refundId: string; amount: number } {
    const state = load();
    const existing = state.refunds.find((r) => r.key === req.idempotencyKey);
    if (existing) return { refundId: existing.refundId, amount: existing.amount };
    const charge = state.charges.find((c) => c.chargeId === req.chargeId);
    if (!charge) throw new Error(`no charge ${req.chargeId}`);
    const refundId = `re_${state.refunds.length + 1}`;
    state.refunds.push({ key: req.idempotencyKey, refundId, chargeId: charge.chargeId, amount: charge.amount, at: Date.now() });
    writeState(FILE, state);
    return { refundId, amount: charge.amount };
  },

  record(): PaymentsState {
    return load();
  },
};
