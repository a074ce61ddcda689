// Bench agent for the PostgreSQL rows: `steps` steps of one non-idempotent action each (or none), for workers and in-process runs.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';

const outbox: string[] = [];

const deliver = defineAction({
  type: 'bench.deliver',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ i: z.number().int() }),
  key: (a, run) => `deliver:${run.id}:${a.i}`,
  execute: (a, { idempotencyKey }) => {
    // The first new action of a resumed run: when it ran, for the claim-to-first-new-action row.
    (globalThis as { __lbFirstExecute?: number }).__lbFirstExecute ??= performance.now();
    outbox.push(idempotencyKey);
    if (outbox.length > 1024) outbox.length = 0;
    return { messageId: `m-${a.i}-${outbox.length}` };
  },
  verify: () => undefined,
});

export default defineAgent({
  name: 'bench-deliver',
  input: z.object({ steps: z.number().int().min(1).default(3), actions: z.boolean().default(true) }),
  async run(run, input) {
    for (let i = 0; i < input.steps; i++) {
      await run.step(`step ${i}`, async () => (input.actions ? run.do(deliver, { i }) : { i }));
    }
    return { steps: input.steps };
  },
});
