// An example warehouse: stock levels and reservations in its own file; reserve and release both honour their keys.

import { readState, writeState } from './store';

export interface Reservation {
  readonly key: string;
  readonly reservationId: string;
  readonly sku: string;
  readonly qty: number;
  /** The idempotency key of the release that gave the stock back, if any. */
  releasedBy: string | null;
}

interface WarehouseState {
  stock: Record<string, number>;
  reservations: Reservation[];
  /** Releases in the order they happened, so a test can check the inverses ran newest-first. */
  releases: Array<{ key: string; reservationId: string; at: number }>;
}

const FILE = 'warehouse.json';

/** What the shelves hold before any order: the stock counts a run must leave exact. */
export const INITIAL_STOCK: Readonly<Record<string, number>> = Object.freeze({ 'sku-kettle': 12, 'sku-mug': 40, 'sku-tea': 100 });

const load = (): WarehouseState => readState<WarehouseState>(FILE, { stock: { ...INITIAL_STOCK }, reservations: [], releases: [] });

export class OutOfStockError extends Error {
  constructor(sku: string, wanted: number, left: number) {
    super(`only ${left} of ${sku} left, ${wanted} wanted`);
    this.name = 'OutOfStockError';
  }
}

export const warehouse = {
  reserve(req: { sku: string; qty: number; idempotencyKey: string }): { reservationId: string; sku: string; qty: number } {
    const state = load();
    const existing = state.reservations.find((r) => r.key === req.idempotencyKey);
    if (existing) return { reservationId: existing.reservationId, sku: existing.sku, qty: existing.qty };
    const left = state.stock[req.sku] ?? 0;
    if (left < req.qty) throw new OutOfStockError(req.sku, req.qty, left);
    state.stock[req.sku] = left - req.qty;
    const reservationId = `res-${state.reservations.length + 1}`;
    state.reservations.push({ key: req.idempotencyKey, reservationId, sku: req.sku, qty: req.qty, releasedBy: null });
    writeState(FILE, state);
    return { reservationId, sku: req.sku, qty: req.qty };
  },

  release(req: { reservationId: string; idempotencyKey: string }): { released: number } {
    const state = load();
    const r = state.reservations.find((x) => x.reservationId === req.reservationId);
    if (!r) throw new Error(`no reservation ${req.reservationId}`);
    if (r.releasedBy !== null) return { released: 0 };
    r.releasedBy = req.idempotencyKey;
    state.stock[r.sku] = (state.stock[r.sku] ?? 0) + r.qty;
    state.releases.push({ key: req.idempotencyKey, reservationId: r.reservationId, at: Date.now() });
    writeState(FILE, state);
    return { released: r.qty };
  },

  levels(skus: readonly string[]): Record<string, number> {
    const stock = load().stock;
    return Object.fromEntries(skus.map((s) => [s, stock[s] ?? 0]));
  },

  record(): WarehouseState {
    return load();
  },
};
