// The agent whose journals the replay and resume rows build synthetically: steps of `perStep` actions, a probe at action i.

import { z } from 'zod';
import { defineAction, defineAgent } from '../src/runtime';

export const JOURNAL_AGENT = 'bench-journal';
export const JOURNAL_ACTION = 'bench.journal';

/** Where the measurement stops: `hit` is called just before the script's action number `at` (0-based) is attempted. */
export const probe = {
  at: -1,
  hit: (): void => undefined,
  /** Effects actually executed in this process: any before the probe means the journal did not replay. */
  executed: 0,
};

export const journalSend = defineAction({
  type: JOURNAL_ACTION,
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ i: z.number().int() }),
  key: (a, run) => `j:${run.id}:${a.i}`,
  execute: (a) => {
    probe.executed++;
    return { ok: a.i };
  },
  verify: () => undefined,
});

export const journalAgent = defineAgent({
  name: JOURNAL_AGENT,
  input: z.object({ steps: z.number().int().nonnegative(), perStep: z.number().int().positive() }),
  async run(run, input) {
    for (let s = 0; s < input.steps; s++) {
      await run.step(`step ${s}`, async () => {
        let last = -1;
        for (let j = 0; j < input.perStep; j++) {
          const i = s * input.perStep + j;
          if (i === probe.at) probe.hit();
          last = (await run.do(journalSend, { i })).ok;
        }
        return { last };
      });
    }
    return { steps: input.steps };
  },
});

/** The names and JSON the engine journals for this agent, shared with the synthetic builder so both agree. */
export const journalShape = {
  stepName: (s: number): string => `step ${s}`,
  actionId: (runId: string, i: number): string => `j:${runId}:${i}`,
  args: (i: number): string => JSON.stringify({ i }),
  result: (i: number): string => JSON.stringify({ ok: i }),
  stepResult: (last: number): string => JSON.stringify({ last }),
};
