// Example: a follow-up agent. It emails a lead, sleeps three days, then waits up to a week for their reply (an event
// `logbook send <run-id> reply --data '{"text": "…"}'` delivers), hands the drafting of its answer (or of one reminder)
// to a child agent, and sends it. `logbook cancel <run-id>` stops it at any point, asleep or waiting.

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

/** The drafting agent: a run of its own (`<parent>.child-<step>`), resumed with its parent, never started twice. */
export const drafter = defineAgent({
  name: 'follow-up-drafter',
  input: z.object({ to: z.string(), reply: z.string().nullable() }),
  async run(run, input) {
    // A model call would go here (agent-logbook/ai journals it); a template keeps the example offline.
    const body = await run.step('draft', () =>
      input.reply === null ? `Hello ${input.to}, just checking in once more.` : `Thanks for your reply: "${input.reply}". Talk soon!`,
    );
    return { body };
  },
});

export default defineAgent({
  name: 'follow-up',
  input: z.object({ to: z.string().email(), pause: z.string().default('3d'), patience: z.string().default('7d') }),
  async run(run, input) {
    await run.step('intro', () => run.do(sendEmail, { to: input.to, body: 'Hello! Shall we talk next week?', kind: 'intro' }));
    // A durable timer: no process and no lease is held while it runs under a worker.
    await run.sleep('give them time', input.pause);
    // The run stops `waiting` here (a foreground `logbook run` exits 3) until the reply comes or the week passes.
    const reply = await run.waitFor('reply', { timeout: input.patience, schema: Reply });
    const { body } = await run.child(drafter, { to: input.to, reply: reply?.text ?? null });
    const kind = reply === undefined ? 'reminder' : 'answer';
    await run.step(kind, () => run.do(sendEmail, { to: input.to, body, kind }));
    return reply === undefined ? { replied: false } : { replied: true, reply: reply.text };
  },
  probe: () => ({ 'email.send': outbox.record().sent.map((s) => s.key) }),
});
