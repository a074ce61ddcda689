// An action's key damaged in its storage class (the same bytes, stored as a BLOB): the row no longer answers the lookup
// by key, so without the check before the attempt a resume takes the committed action for a new one and charges again.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, resumeRun, startRun, type Store } from '../../src/runtime';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { withPageErrorsSwallowed, withoutCheckBefore } from './damageControls';
import { sendEvent } from '../../src/runtime/store/inbox';
import { SQLITE_DIALECT, sqliteDb } from '../../src/runtime/store/sqlite';
import { tmpDir } from '../helpers';

const charged: number[] = [];
const charge = defineAction({
  type: 'damaged-key.charge',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ n: z.number() }),
  key: (a, run) => `charge:${run.id}:${a.n}`,
  execute: (a) => {
    charged.push(a.n);
    return { n: a.n };
  },
});

const agent = defineAgent({
  name: 'damaged-key',
  input: z.object({}),
  async run(run) {
    await run.step('charges', async () => {
      for (let n = 1; n <= 3; n++) await run.do(charge, { n });
    });
    return 'done';
  },
});

/** A run stopped (on its host's request) inside step "charges" after two charges committed: that step is redone on resume. */
async function stoppedAfterTwo(store: Store, runId: string): Promise<void> {
  let stop = false;
  const first = await startRun(store, agent, {
    script: 'k.ts',
    input: {},
    runId,
    log: () => undefined,
    hooks: {
      shouldStop: () => stop,
      pause: (ev) => {
        stop ||= ev.kind === 'action:committed' && charged.length === 2;
        return Promise.resolve();
      },
    },
  });
  assert.equal(first.status, 'interrupted', JSON.stringify(first));
  assert.deepEqual(charged, [1, 2]);
}

/** The first charge's key rewritten as a BLOB of the same bytes: a type flip, which integrity_check does not see. */
function flipKey(file: string, runId: string): void {
  const raw = new Database(file);
  const n = raw.prepare('UPDATE actions SET id = CAST(id AS BLOB) WHERE run_id = ? AND id = ?').run(runId, `charge:${runId}:1`).changes;
  assert.equal(n, 1);
  assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
  raw.close();
}

describe("an action's key stored as a BLOB (damaged on disk or by a tool)", () => {
  let dir: string;
  let file: string;
  let store: Store;
  beforeEach(() => {
    dir = tmpDir();
    file = path.join(dir, 'journal.db');
    store = openStore(file);
    charged.length = 0;
  });
  afterEach(() => store.close());

  it('the check before the attempt names the row and its key; the resume is refused and writes nothing', async () => {
    await stoppedAfterTwo(store, 'k');
    flipKey(file, 'k');
    const place = store.reader.firstDamage('k', { steps: Number.MAX_SAFE_INTEGER, actions: 'open' });
    assert.deepEqual(place, { runId: 'k', table: 'actions', id: 'charge:k:1', stepIdx: 0, column: 'id' });
    store.close();
    const before = fs.readFileSync(file);
    store = openStore(file);
    const err = await resumeRun(store, agent, 'k', { log: () => undefined }).then(
      (out) => out,
      (e: unknown) => e,
    );
    assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, `resume gave ${JSON.stringify(err)}`);
    assert.match(err.message, /action "charge:k:1" \(step #1\), column id is not stored as text: it is the action's key/);
    assert.match(err.message, /Nothing was written\./);
    assert.deepEqual(charged, [1, 2], 'no charge ran again');
    store.close();
    assert.ok(fs.readFileSync(file).equals(before), 'the journal file is as it was');
    store = openStore(file);
    assert.equal(store.reader.run('k')?.attempt, 1, 'the attempt counter did not move');
  });

  it('also when the damaged action is in doubt after an error in a completed step (the other rows a resume reads)', async () => {
    await stoppedAfterTwo(store, 'd');
    const raw = new Database(file);
    raw.prepare("UPDATE actions SET status = 'started', error = '{\"message\":\"x\"}' WHERE run_id = 'd' AND id = 'charge:d:2'").run();
    raw.prepare("UPDATE steps SET status = 'completed', result = 'null' WHERE run_id = 'd'").run();
    raw.prepare("UPDATE actions SET id = CAST(id AS BLOB) WHERE run_id = 'd' AND id = 'charge:d:2'").run();
    raw.close();
    const place = store.reader.firstDamage('d', { steps: Number.MAX_SAFE_INTEGER, actions: 'open' });
    assert.deepEqual(place, { runId: 'd', table: 'actions', id: 'charge:d:2', stepIdx: 0, column: 'id' });
  });

  it('with the check before the attempt taken out, replay still stops at the page that hid the row: a journal failure, nothing charged again', async () => {
    await stoppedAfterTwo(store, 'p');
    flipKey(file, 'p');
    const out = await withoutCheckBefore(() => resumeRun(store, agent, 'p', { log: () => undefined }));
    assert.equal(out.status, 'interrupted', JSON.stringify(out));
    assert.equal(out.error?.code, ErrorCodes.JOURNAL_INVALID, JSON.stringify(out.error));
    assert.deepEqual(charged, [1, 2], 'no charge ran again');
  });

  it('control: with both taken out (the page error swallowed, as before), the same resume charges the first customer a second time', async () => {
    await stoppedAfterTwo(store, 'c');
    flipKey(file, 'c');
    const out = await withPageErrorsSwallowed(() => withoutCheckBefore(() => resumeRun(store, agent, 'c', { log: () => undefined })));
    assert.equal(out.status, 'completed', JSON.stringify(out));
    assert.deepEqual(charged, [1, 2, 1, 3], 'the damaged key hid a committed charge, and it ran again');
  });
});

describe("an event's dedupe id stored as a BLOB", () => {
  it('a send with the same id is refused as a damaged journal, where it would have been kept a second time (control: without the check)', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'journal.db');
    const store = openStore(file);
    charged.length = 0;
    try {
      await stoppedAfterTwo(store, 'e');
      const ev = { name: 'approved', id: 'approved#1', data: '{"ok":true}', by: 'test' };
      assert.equal(store.sendEvent('e', ev).kind, 'kept');
      assert.equal(store.sendEvent('e', ev).kind, 'duplicate', 'the same id again changes nothing');
      const raw = new Database(file);
      assert.equal(raw.prepare("UPDATE inbox SET id = CAST(id AS BLOB) WHERE run_id = 'e'").run().changes, 1);
      raw.close();
      const err = (() => {
        try {
          store.sendEvent('e', ev);
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, `send gave ${String(err)}`);
      assert.match(err.message, /event #\d+ "approved" sent to it, column id is not stored as text: it is the dedupe id/);
      const count = (): number => {
        const r = new Database(file, { readonly: true });
        try {
          return r.prepare("SELECT COUNT(*) FROM inbox WHERE run_id = 'e'").pluck().get() as number;
        } finally {
          r.close();
        }
      };
      assert.equal(count(), 1, 'nothing was kept');
      // Control: the same send without the check (a dialect with no storage-class test) keeps the event again.
      const plain = new Database(file);
      try {
        const db = Object.assign(sqliteDb(plain), { dialect: { ...SQLITE_DIALECT, notText: null } });
        assert.equal(sendEvent(db, file, 'e', ev).kind, 'kept', 'kept a second time');
      } finally {
        plain.close();
      }
      assert.equal(count(), 2);
    } finally {
      store.close();
    }
  });
});
