// The CLI control's agent: five bracketed non-idempotent sends, run by `logbook run` with the shim preloaded.

import { z } from 'zod';
import { defineAction, defineAgent } from 'agent-logbook';

const send = defineAction({
  type: 'powerloss.cli.send',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ n: z.number().int() }),
  key: (a, run) => `send:${run.id}:${a.n}`,
  execute: (a) => ({ sent: a.n }),
});

export default defineAgent({
  name: 'powerloss-cli',
  async run(run) {
    for (let i = 0; i < 5; i++) await run.step(`send ${i}`, () => run.do(send, { n: i }));
    return { sent: 5 };
  },
});
