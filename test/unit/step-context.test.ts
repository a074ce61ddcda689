// A process that drives many runs keeps one step-context storage, not one per run (each enabled storage taxes every
// promise of the process for good, so a worker or server slowed down with every run it drove).

import { strict as assert } from 'node:assert';
import { AsyncLocalStorage } from 'node:async_hooks';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openJournal } from '../../src/runtime/public';
import { openStore } from '../../src/runtime/store';
import { tmpDir } from '../helpers';

const note = defineAction({
  type: 'step-context.note',
  version: 1,
  effect: 'idempotent',
  args: z.object({ n: z.number() }),
  key: (a, run) => `note:${run.id}:${a.n}`,
  execute: (a) => a.n,
});

const agent = defineAgent({
  name: 'step-context',
  input: z.object({ n: z.number() }),
  async run(run, input) {
    const a = await run.step('one', () => run.do(note, { n: input.n }));
    const b = await run.step('two', async () => (await Promise.all([run.do(note, { n: input.n + 1 }), run.do(note, { n: input.n + 2 })])).length);
    return a + b;
  },
});

describe('step contexts', () => {
  it('20 runs driven by one process use the same AsyncLocalStorage, and each step still sees its own frame', async () => {
    const used = new Set<AsyncLocalStorage<unknown>>();
    const proto = AsyncLocalStorage.prototype as unknown as { run: (...a: unknown[]) => unknown };
    const original = proto.run;
    proto.run = function (this: AsyncLocalStorage<unknown>, ...a: unknown[]) {
      used.add(this);
      return original.apply(this, a);
    };
    const file = path.join(tmpDir('step-context'), 'journal.db');
    const journal = openJournal({ journal: file, agents: [agent] });
    try {
      for (let i = 0; i < 20; i++) {
        const out = await journal.start(agent, { n: i }, { runId: `s-${i}` });
        assert.deepEqual([out.status, out.output], ['completed', i + 2]);
      }
    } finally {
      proto.run = original;
      journal.close();
    }
    // Each action was journaled in the step that made it.
    const store = openStore(file);
    try {
      for (let i = 0; i < 20; i++)
        assert.deepEqual(
          store.reader.actions(`s-${i}`).map((x) => x.step_idx),
          [0, 1, 1],
          `run s-${i}`,
        );
    } finally {
      store.close();
    }
    assert.ok(used.size <= 1, `${used.size} storages for 20 runs`);
  });
});
