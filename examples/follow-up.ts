// Example: a follow-up agent. It emails a lead, sleeps three days, then waits up to a week for their reply (an event
// `logbook send <run-id> reply --data '{"text": "…"}'` delivers), and answers the reply or sends one reminder.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';
import { outbox } from './providers/outbox';

const sendEmail = defineAction({
  type: 'email.send',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string().email(), body: z.string(), kind: z.enum(['intro', 'answer', 'reminder']) }),
  key: (args, run) => `email:${run.id}:${args.kind}`,
  execute: (args, { idempotencyKey }) => outbox.send({ to: args.to, body: args.body, idempotencyKey }),
  verify: (_args, { idempotencyKey }) => outbox.find(idempotencyKey),
});

const Reply = z.object({ text: z.string().min(1) });

export default defineAgent({
  name: 'follow-up',
  input: z.object({ to: z.string().email(), pause: z.string().default('3d'), patience: z.string().default('7d') }),
  async run(run, input) {
    await run.step('intro', () => run.do(sendEmail, { to: input.to, body: 'Hello! Shall we talk next week?', kind: 'intro' }));
    // A durable timer: no process and no lease is held while it runs under a worker.
    await run.sleep('give them time', input.pause);
    // The run stops `waiting` here (a foreground `logbook run` exits 3) until the reply comes or the week passes.
    const reply = await run.waitFor('reply', { timeout: input.patience, schema: Reply });
    if (reply === undefined) {
      await run.step('remind', () => run.do(sendEmail, { to: input.to, body: 'Just checking in once more.', kind: 'reminder' }));
      return { replied: false };
    }
    await run.step('answer', () => run.do(sendEmail, { to: input.to, body: `Thanks for your reply: "${reply.text}"`, kind: 'answer' }));
    return { replied: true, reply: reply.text };
  },
  probe: () => ({ 'email.send': outbox.record().sent.map((s) => s.key) }),
});
