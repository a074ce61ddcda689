// A resume whose run another driver ends between the resume's own checks and its lease (a `logbook resume` racing the
// resume a `logbook send` started): refused as not resumable, never as LB_ILLEGAL_TRANSITION ("a bug in Logbook").

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { ErrorCodes, LogbookError, defineAgent } from '../../src/runtime/public';
import { resumeRun, startRun } from '../../src/runtime/engine';
import { sendEvent } from '../../src/runtime/send';
import { openStore } from '../../src/runtime/store';
import { tmpDir } from '../helpers';

const agent = defineAgent({
  name: 'race-waiter',
  input: z.object({}),
  async run(run) {
    const reply = await run.waitFor('reply');
    return run.step('done', () => ({ reply }));
  },
});

describe('a resume racing another driver that ends the run', () => {
  it('the run completed by the other driver after this resume looked: LB_RUN_NOT_RESUMABLE, nothing written', async () => {
    const store = openStore(path.join(tmpDir('logbook-resume-race-'), 'journal.db'));
    try {
      const first = await startRun(store, agent, { input: {}, runId: 'r', script: 'api:race-waiter' });
      assert.equal(first.status, 'waiting');
      sendEvent(store, 'r', 'reply', { text: 'yes' });
      let raced = false;
      // Completed by the other driver first, then this resume's lease: the same store, in order, deterministically.
      const other = await resumeRun(store, agent, 'r', {});
      assert.equal(other.status, 'completed');
      const late = new Proxy(store, {
        get(target, prop, receiver): unknown {
          // This resume's checks see the row as it was before the other driver ended it.
          if (prop === 'reader') {
            const reader = target.reader;
            return new Proxy(reader, {
              get(r, p, rr): unknown {
                if (p === 'run' && !raced) {
                  raced = true;
                  return (id: string) => ({ ...r.run(id)!, status: 'waiting' });
                }
                const v = Reflect.get(r, p, rr) as unknown;
                return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(r) : v;
              },
            });
          }
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const events = store.reader.events('r').length;
      await assert.rejects(
        resumeRun(late, agent, 'r', {}),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.RUN_NOT_RESUMABLE && /already completed/.test(e.message),
      );
      assert.equal(store.reader.events('r').length, events, 'nothing written');
    } finally {
      store.close();
    }
  });
});
