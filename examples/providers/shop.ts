// An example shop backend: orders to look up, and refunds that ignore idempotency keys but can be found by reference.

import { readState, writeState } from './store';

export interface Order {
  readonly orderId: string;
  readonly customer: string;
  readonly email: string;
  readonly item: string;
  readonly total: number;
  readonly status: 'delivered' | 'shipped';
}

const ORDERS: readonly Order[] = [
  { orderId: 'A-1001', customer: 'Ann Lee', email: 'ann@example.com', item: 'kettle', total: 42, status: 'delivered' },
  { orderId: 'A-1002', customer: 'Bo Chen', email: 'bo@example.com', item: 'espresso machine', total: 640, status: 'delivered' },
];

interface ShopState {
  /** Refunds in the order they were made; a repeated call makes another one (the processor ignores keys). */
  refunds: Array<{ reference: string; refundId: string; orderId: string; amount: number }>;
  reversals: string[];
  lookups: number;
}

const FILE = 'shop.json';
const load = (): ShopState => readState<ShopState>(FILE, { refunds: [], reversals: [], lookups: 0 });

export const shop = {
  lookup(orderId: string): Order | { error: string } {
    const state = load();
    state.lookups++;
    writeState(FILE, state);
    return ORDERS.find((o) => o.orderId === orderId) ?? { error: `no order ${orderId}` };
  },

  refund(req: { orderId: string; amount: number; reference: string }): { refundId: string; amount: number } {
    const order = ORDERS.find((o) => o.orderId === req.orderId);
    if (!order) throw new Error(`no order ${req.orderId}`);
    if (req.amount > order.total) throw new Error(`refund of ${req.amount} exceeds the order total ${order.total}`);
    const state = load();
    const refundId = `re_${state.refunds.length + 1}`;
    state.refunds.push({ reference: req.reference, refundId, orderId: req.orderId, amount: req.amount });
    writeState(FILE, state);
    return { refundId, amount: req.amount };
  },

  findRefund(reference: string): { refundId: string; amount: number } | undefined {
    const r = load().refunds.find((x) => x.reference === reference);
    return r ? { refundId: r.refundId, amount: r.amount } : undefined;
  },

  /** The inverse of a refund: charge it back (used when the run is compensated). */
  reverseRefund(refundId: string): { reversed: string } {
    const state = load();
    if (!state.reversals.includes(refundId)) state.reversals.push(refundId);
    writeState(FILE, state);
    return { reversed: refundId };
  },

  record(): ShopState {
    return load();
  },
};
