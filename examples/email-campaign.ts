// Example: an email campaign that survives a crash mid-send without sending anyone a second email.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';
import { outbox } from './providers/outbox';

const sendEmail = defineAction({
  type: 'email.send',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string().email(), body: z.string() }),
  key: (args, run) => `email:${run.id}:${args.to}`,
  execute: (args, { idempotencyKey }) => outbox.send({ ...args, idempotencyKey }),
  verify: (_args, { idempotencyKey }) => outbox.find(idempotencyKey),
});

function loadRecipients(n: number): Array<{ email: string; body: string }> {
  return Array.from({ length: n }, (_, i) => ({ email: `user${i + 1}@example.com`, body: `Hello user ${i + 1}, our spring issue is out.` }));
}

export default defineAgent({
  name: 'email-campaign',
  input: z.object({ recipients: z.number().int().positive().default(50) }),
  async run(run, input) {
    const list = await run.step('load recipients', () => loadRecipients(input.recipients));
    for (const r of list) {
      await run.step(`email ${r.email}`, () => run.do(sendEmail, { to: r.email, body: r.body }));
    }
    return { sent: list.length };
  },
  probe: () => ({ 'email.send': outbox.record().sent.map((s) => s.key) }),
});
