// An example card processor that honours idempotency keys, as Stripe-like APIs do: a capture that repeats a key it has
// seen is refused (the first capture is answered again, nothing more is charged), so a request sent twice charges once.

import { readState, writeState } from './store';

export interface Capture {
  readonly captureId: string;
  readonly amount: number;
  readonly card: string;
}

interface CardsState {
  captures: Array<Capture & { key: string; at: number }>;
  /** Requests that came with a key already used: each refused, nothing captured. */
  refused: Array<{ key: string; at: number }>;
}

const FILE = 'cards.json';
const load = (): CardsState => readState<CardsState>(FILE, { captures: [], refused: [] });

export const cards = {
  /** Captures `amount` on `card` once per idempotency key; a repeated key is refused and answered with the first capture. */
  capture(req: { amount: number; card: string; idempotencyKey: string }): Capture & { repeated: boolean } {
    const state = load();
    const seen = state.captures.find((c) => c.key === req.idempotencyKey);
    if (seen) {
      state.refused.push({ key: req.idempotencyKey, at: Date.now() });
      writeState(FILE, state);
      return { captureId: seen.captureId, amount: seen.amount, card: seen.card, repeated: true };
    }
    const capture = { captureId: `cap_${state.captures.length + 1}`, amount: req.amount, card: req.card };
    state.captures.push({ ...capture, key: req.idempotencyKey, at: Date.now() });
    writeState(FILE, state);
    return { ...capture, repeated: false };
  },

  /** The capture made with this key, if any: what verify asks after a crash. */
  find(idempotencyKey: string): (Capture & { repeated: boolean }) | undefined {
    const c = load().captures.find((x) => x.key === idempotencyKey);
    return c ? { captureId: c.captureId, amount: c.amount, card: c.card, repeated: false } : undefined;
  },

  /** A fraud check that takes a while: the kind of await during which a process is frozen in real life. */
  async screen(card: string): Promise<{ card: string; risk: 'low' }> {
    await new Promise((r) => setTimeout(r, 50));
    return { card, risk: 'low' };
  },

  record(): CardsState {
    return load();
  },
};
