// Agent script for the debugger rows: `steps` trivial steps, so a `next` round trip measures the adapter, not the work.

import { z } from 'zod';
import { defineAgent } from 'agent-logbook';

export default defineAgent({
  name: 'bench-steps',
  input: z.object({ steps: z.number().int().positive().default(1000) }),
  async run(run, input) {
    let total = 0;
    for (let i = 0; i < input.steps; i++) total += await run.step(`step ${i}`, () => i);
    return { total };
  },
});
