// An agent may leave `input` out: it runs with {} and refuses an input it cannot take, before anything is journaled.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ErrorCodes, LogbookError, defineAgent, openJournal } from '../../src/runtime/public';
import { tmpDir } from '../helpers';

const seen: unknown[] = [];
const noInput = defineAgent({
  name: 'no-input',
  async run(run, input) {
    seen.push(input);
    // Typed as {}: a field of it is a compile error, which this line would be if `input` were `any`.
    const keys: string[] = Object.keys(input);
    return await run.step('count', () => keys.length);
  },
});

describe('defineAgent without input', () => {
  it('runs with {} when given nothing or {}, and refuses any other input with LB_INVALID_INPUT, writing nothing', async () => {
    const journal = openJournal({ journal: path.join(tmpDir('no-input'), 'journal.db'), agents: [noInput] });
    try {
      const a = await journal.start(noInput, undefined, { runId: 'n-1' });
      const b = await journal.start(noInput, {}, { runId: 'n-2' });
      assert.deepEqual([a.status, a.output, b.status, b.output], ['completed', 0, 'completed', 0]);
      assert.deepEqual(seen, [{}, {}]);
      await assert.rejects(
        journal.start(noInput, { people: 3 } as never, { runId: 'n-3' }),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.INVALID_INPUT && /declares no input/.test(e.message),
      );
      assert.equal(journal.run('n-3'), undefined, 'the refused run was not journaled');
      assert.deepEqual(journal.run('n-1')?.input, {}, 'the journal holds the input the script saw');
    } finally {
      journal.close();
    }
  });

  it('still refuses an input that is given but is not a schema', () => {
    assert.throws(() => defineAgent({ name: 'bad', input: 42 as never, run: () => 1 }), /"input" is not a schema.*leave `input` out/);
  });
});
