// An example email provider: its own record in a file, honours idempotency keys, and answers "was this key sent?".

import { readState, writeState } from './store';

export interface SentEmail {
  readonly key: string;
  readonly to: string;
  readonly messageId: string;
}

interface OutboxState {
  sent: SentEmail[];
  /** Every call of send, including ones refused as duplicates by key. */
  calls: number;
}

const FILE = 'email-outbox.json';

export const outbox = {
  /** When false the provider ignores keys, like many real APIs: a repeated send is a duplicate email. */
  honoursKeys: process.env.OUTBOX_IGNORE_KEYS !== '1',

  /**
   * How long a send is on the network before the provider records it ($OUTBOX_LATENCY_MS); 0, the default, answers at
   * once. A real provider's latency is where a second driver of the same run could send again, unasked.
   */
  latencyMs: Number(process.env.OUTBOX_LATENCY_MS ?? '0'),

  send(email: { to: string; body: string; idempotencyKey: string }): { messageId: string } | Promise<{ messageId: string }> {
    if (this.latencyMs > 0) return new Promise((resolve) => setTimeout(resolve, this.latencyMs)).then(() => this.deliver(email));
    return this.deliver(email);
  },

  deliver(email: { to: string; body: string; idempotencyKey: string }): { messageId: string } {
    const state = readState<OutboxState>(FILE, { sent: [], calls: 0 });
    state.calls++;
    const existing = this.honoursKeys ? state.sent.find((s) => s.key === email.idempotencyKey) : undefined;
    if (existing) {
      writeState(FILE, state);
      return { messageId: existing.messageId };
    }
    const messageId = `msg-${state.sent.length + 1}`;
    state.sent.push({ key: email.idempotencyKey, to: email.to, messageId });
    writeState(FILE, state);
    return { messageId };
  },

  find(key: string): { messageId: string } | undefined {
    const hit = readState<OutboxState>(FILE, { sent: [], calls: 0 }).sent.find((s) => s.key === key);
    return hit ? { messageId: hit.messageId } : undefined;
  },

  record(): OutboxState {
    return readState<OutboxState>(FILE, { sent: [], calls: 0 });
  },
};
