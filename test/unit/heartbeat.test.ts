// The lease heartbeat: while one effect runs long, the driving process keeps pushing its lease's expiry forward.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, startRun } from '../../src/runtime';
import { LEASE_TTL_MS } from '../../src/runtime/store/writer';
import { tmpDir } from '../helpers';

describe('lease heartbeat', function () {
  this.timeout(60_000);

  it('renews the lease while one effect runs (nothing else is written meanwhile), and releases it at the end', async () => {
    const file = path.join(tmpDir(), 'j.db');
    const watcher = (): Database.Database => new Database(file, { readonly: true });
    const expiries: number[] = [];
    const slow = defineAction({
      type: 'slow.call',
      version: 1,
      effect: 'idempotent',
      args: z.object({}),
      key: (_a, run) => `slow:${run.id}`,
      // Nothing is written while execute waits, so a change another connection sees is the heartbeat's.
      execute: async () => {
        const db = watcher();
        try {
          for (let i = 0; i < 120; i++) {
            const row = db.prepare("SELECT lease_expires FROM runs WHERE id = 'hb'").get() as { lease_expires: number };
            if (expiries[expiries.length - 1] !== row.lease_expires) expiries.push(row.lease_expires);
            if (expiries.length >= 2) return { renewed: expiries.length - 1 };
            await new Promise((r) => setTimeout(r, 250));
          }
          return { renewed: expiries.length - 1 };
        } finally {
          db.close();
        }
      },
    });
    const agent = defineAgent({ name: 'heartbeat', input: z.object({}), run: (run) => run.step('slow', () => run.do(slow, {})) });
    const store = openStore(file);
    const out = await startRun(store, agent, { script: 'heartbeat.ts', runId: 'hb', input: {}, log: () => undefined });
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.deepEqual(out.output, { renewed: 1 }, `expiries seen: ${expiries.join(', ')}`);
    const [before = 0, after = 0] = expiries;
    assert.ok(after > before, 'the renewal moves the expiry forward');
    assert.ok(after <= Date.now() + LEASE_TTL_MS, 'to one lease length from the renewal');
    const db = watcher();
    try {
      const end = db.prepare("SELECT lease_token FROM runs WHERE id = 'hb'").get() as { lease_token: string | null };
      assert.equal(end.lease_token, null, 'released when the run ended');
    } finally {
      db.close();
    }
  });
});
