// An example parcel carrier: creating a shipment honours its key, and a shipment cannot be called back.

import { readState, writeState } from './store';

interface CarrierState {
  shipments: Array<{ key: string; orderId: string; trackingNumber: string; parcels: number }>;
}

const FILE = 'carrier.json';
const load = (): CarrierState => readState<CarrierState>(FILE, { shipments: [] });

export const carrier = {
  createShipment(req: { orderId: string; parcels: number; idempotencyKey: string }): { trackingNumber: string } {
    const state = load();
    const existing = state.shipments.find((s) => s.key === req.idempotencyKey);
    if (existing) return { trackingNumber: existing.trackingNumber };
    const trackingNumber = `TRK${String(1000 + state.shipments.length + 1)}`;
    state.shipments.push({ key: req.idempotencyKey, orderId: req.orderId, trackingNumber, parcels: req.parcels });
    writeState(FILE, state);
    return { trackingNumber };
  },

  record(): CarrierState {
    return load();
  },
};
