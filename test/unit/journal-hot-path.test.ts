// The runtime's fast paths keep their contract: replayed steps, prefetched actions of a redone step, the lease fence
// that reads instead of writing, and lazy commits that never leave the connection below synchronous=FULL.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, resumeRun, startRun, ErrorCodes, LogbookError, type PauseEvent } from '../../src/runtime';
import { RunWriter } from '../../src/runtime/store/writer';
import {
  ActionRow,
  EventRow,
  actionRow,
  ReplayActionRow,
  ReplayStepHead,
  ReplayStepRow,
  eventRow,
  replayActionRow,
  replayStepHead,
  replayStepRow,
} from '../../src/runtime/store/rows';
import { INLINE_RESULT_BYTES } from '../../src/runtime/stepCursor';
import { ReadAhead } from '../../src/runtime/readAhead';
import { acquireRun, createRun } from '../../src/runtime/store/lease';
import { beginSession } from '../../src/runtime/store/owner';
import { buildJournal } from '../../bench/journalBuilder';
import { JOURNAL_AGENT, journalAgent, journalSend, probe } from '../../bench/journalAgent';
import { tmpDir } from '../helpers';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { dbOf } from '../../src/runtime/store/db';

const quiet = { log: () => undefined };

function stepsAgent(names: (i: number) => string, count: number, ran: string[]) {
  return defineAgent({
    name: 'steps',
    input: z.object({}),
    async run(run) {
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        out.push(
          await run.step(names(i), () => {
            ran.push(names(i));
            return i * 10;
          }),
        );
      }
      return out;
    },
  });
}

describe('replay of completed steps', () => {
  it('returns every checkpoint without running the step again, and runs only the new steps', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const ran: string[] = [];
    const first = await startRun(
      store,
      stepsAgent((i) => `s${i}`, 3, ran),
      { script: 's.ts', input: {}, ...quiet },
    );
    assert.equal(first.status, 'completed');
    ran.length = 0;
    // A longer script resumed over the same journal (marked failed so it may resume): three replayed, two new.
    dbOf(store.db).prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run(first.runId);
    const second = await resumeRun(
      store,
      stepsAgent((i) => `s${i}`, 5, ran),
      first.runId,
      quiet,
    );
    store.close();
    assert.equal(second.status, 'completed');
    assert.deepEqual(second.output, [0, 10, 20, 30, 40]);
    assert.deepEqual(ran, ['s3', 's4']);
    assert.equal(second.stats.stepsReplayed, 3);
    assert.equal(second.stats.stepsRun, 2);
  });

  it('still stops on a renamed step before running anything new', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const ran: string[] = [];
    const first = await startRun(
      store,
      stepsAgent((i) => `s${i}`, 2, ran),
      { script: 's.ts', input: {}, ...quiet },
    );
    dbOf(store.db).prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run(first.runId);
    ran.length = 0;
    const second = await resumeRun(
      store,
      stepsAgent((i) => (i === 1 ? 'renamed' : `s${i}`), 3, ran),
      first.runId,
      quiet,
    );
    store.close();
    assert.equal(second.status, 'failed');
    assert.equal(second.error?.code, ErrorCodes.NONDETERMINISM);
    assert.deepEqual(ran, []);
  });

  it('pauses a host at every replayed step (the full path) when the host asks to pause', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const first = await startRun(
      store,
      stepsAgent((i) => `s${i}`, 3, []),
      { script: 's.ts', input: {}, ...quiet },
    );
    dbOf(store.db).prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run(first.runId);
    const seen: PauseEvent[] = [];
    const second = await resumeRun(
      store,
      stepsAgent((i) => `s${i}`, 3, []),
      first.runId,
      { hooks: { pause: (ev) => void seen.push(ev) }, ...quiet },
    );
    store.close();
    assert.equal(second.status, 'completed');
    const replayed = seen.filter((e) => e.kind === 'step:before' && e.step?.replayed);
    assert.deepEqual(
      replayed.map((e) => [e.step?.name, e.step?.result]),
      [
        ['s0', 0],
        ['s1', 10],
        ['s2', 20],
      ],
    );
  });

  it('replays a failure the script caught as that failure, not as a retry', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    let attempts = 0;
    const agent = defineAgent({
      name: 'caught',
      input: z.object({}),
      async run(run) {
        let note = 'none';
        try {
          await run.step('flaky', () => {
            attempts++;
            throw new Error('boom');
          });
        } catch (err) {
          note = (err as Error).message;
        }
        await run.step('after', () => note);
        return note;
      },
    });
    const first = await startRun(store, agent, { script: 'c.ts', input: {}, ...quiet });
    dbOf(store.db).prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run(first.runId);
    const second = await resumeRun(store, agent, first.runId, quiet);
    store.close();
    assert.equal(second.output, 'boom');
    assert.equal(attempts, 1);
  });
});

describe("replay's row guards", () => {
  const bads: unknown[] = [1.5, Number.NaN, 2 ** 60, '1', null, undefined, {}, 'completed ', true];
  function variants(valid: unknown[]): unknown[][] {
    const out: unknown[][] = [valid, valid.slice(0, -1)];
    valid.forEach((_, i) => {
      for (const b of bads) out.push(valid.map((v, j) => (j === i ? b : v)));
    });
    return out;
  }

  it('accept exactly the step rows the zod schema accepts, and raise its error for the others', () => {
    for (const row of [...variants([3, 'step 3', 'completed', '{"a":1}', null, 2]), ...variants([0, '', 'failed', null, '{"message":"x"}', 1])]) {
      const [idx, name, status, result, error, attempt] = row;
      const zodOk = row.length === 6 && ReplayStepRow.safeParse({ idx, name, status, result, error, attempt }).success;
      let ours: unknown;
      try {
        ours = replayStepRow(row, 'f');
      } catch (err) {
        assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, String(err));
        ours = undefined;
      }
      if (zodOk) assert.deepEqual(ours, { idx, name, status, result, error, attempt }, JSON.stringify(row));
      else if (ours !== undefined) assert.fail(`the guard let through ${JSON.stringify(row)}, which zod refuses`);
    }
  });

  it('accept exactly the step headers the zod schema accepts', () => {
    for (const row of [
      ...variants([3, 'step 3', 'completed', '{"a":1}', null, 2]),
      ...variants([0, '', 'completed', '#{90000', null, 1]),
      [1, 'x', 'completed', '#[', null, 1],
    ]) {
      const [idx, name, status, value, error, attempt] = row;
      const long = typeof value === 'string' && value.startsWith('#') ? /^#(\D*)(\d+)$/.exec(value) : undefined;
      const head = long
        ? { idx, name, status, result: null, large: Number(long[2]), lead: long[1], error, attempt }
        : { idx, name, status, result: value, large: long === null ? Number.NaN : null, lead: null, error, attempt };
      const zodOk = row.length === 6 && ReplayStepHead.safeParse(head).success;
      let ours: unknown;
      try {
        ours = replayStepHead(row, 'f');
      } catch (err) {
        assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, String(err));
        ours = undefined;
      }
      if (zodOk) assert.deepEqual(ours, head, JSON.stringify(row));
      else if (ours !== undefined) assert.fail(`the guard let through ${JSON.stringify(row)}, which zod refuses`);
    }
  });

  it('accept exactly the action rows the zod schema accepts', () => {
    for (const row of variants(['k:1', 4, 'email.send', 1, '{"to":"a"}', 'committed', '{"id":1}', 1])) {
      const [id, seq, type, version, args, status, result, attempt] = row;
      const zodOk = row.length === 8 && ReplayActionRow.safeParse({ id, seq, type, version, args, status, result, attempt }).success;
      let ok = true;
      try {
        replayActionRow(row, 'f');
      } catch {
        ok = false;
      }
      assert.equal(ok, zodOk, JSON.stringify(row));
    }
  });

  it('accept exactly the full action rows the zod schema accepts, return what it returns, and raise its error for the others', () => {
    const keys = Object.keys(ActionRow.shape);
    const valid: unknown[][] = [
      [
        'r1',
        'k:1',
        4,
        0,
        'email.send',
        1,
        'non-idempotent',
        '{"to":"a"}',
        'committed',
        '{"id":1}',
        null,
        1,
        'verified',
        'happened',
        'approved',
        'ok',
        'committed',
        '{}',
        1,
        2,
        5,
        6,
        7,
      ],
      ['', '', 0, 0, '', 0, 'read-only', '', 'started', null, '{"m":1}', 0, null, null, null, null, null, null, 0, 0, 0, null, null],
    ];
    const rows: unknown[] = [null, 'row'];
    for (const v of valid) {
      assert.equal(v.length, keys.length, 'a value for every column');
      for (const values of variants(v)) {
        const row: Record<string, unknown> = {};
        values.forEach((x, i) => {
          if (i < keys.length) row[keys[i]!] = x;
        });
        rows.push(row, { ...row, extra: 'a column of a later schema' });
      }
    }
    let accepted = 0;
    for (const row of rows) {
      const z = ActionRow.safeParse(row);
      let ours: unknown;
      try {
        ours = actionRow(row, 'f');
      } catch (err) {
        assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, String(err));
        ours = undefined;
      }
      if (z.success) {
        accepted++;
        assert.deepEqual(ours, z.data, JSON.stringify(row));
      } else if (ours !== undefined) assert.fail(`the guard let through ${JSON.stringify(row)}, which zod refuses`);
    }
    assert.ok(accepted > 4, `${accepted} rows accepted`);
  });

  it('accept exactly the event rows the zod schema accepts, return what it returns, and raise its error for the others', () => {
    const keys = ['seq', 'run_id', 'attempt', 'at', 'kind', 'step_idx', 'action_id', 'data'] as const;
    const rows: unknown[] = [null, 'row', 7];
    for (const valid of [
      [12, 'r1', 2, 1796000000000, 'action.committed', 3, 'k:1', '{"a":1}'],
      [1, '', 0, 0, 'run.started', null, null, null],
    ]) {
      for (const values of variants(valid)) {
        const row: Record<string, unknown> = {};
        values.forEach((v, i) => {
          if (i < keys.length) row[keys[i]!] = v;
        });
        rows.push(row, { ...row, extra: 'a column of a later schema' });
      }
    }
    for (const row of rows) {
      const z = EventRow.safeParse(row);
      let ours: unknown;
      try {
        ours = eventRow(row, 'f');
      } catch (err) {
        assert.ok(err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID, String(err));
        ours = undefined;
      }
      if (z.success) assert.deepEqual(ours, z.data, JSON.stringify(row));
      else if (ours !== undefined) assert.fail(`the guard let through ${JSON.stringify(row)}, which zod refuses`);
    }
  });
});

describe('read-ahead of journal rows', () => {
  it('doubles while reads are light, up to its maximum, and shrinks below the byte budget when rows are big', () => {
    const a = new ReadAhead(16, 512, 1000);
    const sizes: number[] = [];
    for (let i = 0; i < 7; i++) {
      sizes.push(a.rows);
      a.update(a.rows, 10);
    }
    assert.deepEqual(sizes, [16, 32, 64, 128, 256, 512, 512]);
    a.update(512, 4000);
    assert.equal(a.rows, 128);
    a.update(100, 10);
    assert.equal(a.rows, 128, 'a short read (the end of the journal) does not grow it');
    a.update(128, 1_000_000);
    assert.equal(a.rows, 1);
  });

  it('reads big checkpoints one at a time, only for the steps whose value the script uses, never with the headers', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const big = 'x'.repeat(600 * 1024);
    const agent = (n: number) =>
      defineAgent({
        name: 'big',
        input: z.object({}),
        async run(run) {
          let total = 0;
          // Every other step's value is used: the others are never read.
          for (let i = 0; i < n; i++) {
            const v = await run.step(`s${i}`, () => ({ i, big }));
            if (i % 2 === 0) total += v.i;
          }
          return total;
        },
      });
    const first = await startRun(store, agent(40), { script: 'b.ts', input: {}, ...quiet });
    dbOf(store.db).prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run(first.runId);
    const heads: number[] = [];
    const heads0 = store.reader.replayStepHeads.bind(store.reader);
    store.reader.replayStepHeads = (runId, from, to, inline) => {
      const rows = heads0(runId, from, to, inline);
      heads.push(rows.reduce((n, r) => n + (r.result?.length ?? 0), 0));
      return rows;
    };
    const values: number[] = [];
    const value0 = store.reader.stepResult.bind(store.reader);
    store.reader.stepResult = (runId, idx) => {
      values.push(idx);
      return value0(runId, idx);
    };
    const second = await resumeRun(store, agent(41), first.runId, quiet);
    store.close();
    assert.equal(second.status, 'completed', second.error?.message);
    assert.equal(second.output, (first.output as number) + 40);
    assert.equal(second.stats.stepsReplayed, 40);
    for (const bytes of heads) assert.ok(bytes <= 40 * INLINE_RESULT_BYTES, `a read of headers held ${bytes} bytes of results`);
    assert.ok(heads.length <= 2, `${heads.length} reads of headers for 40 steps`);
    assert.deepEqual(
      values,
      Array.from({ length: 20 }, (_, i) => i * 2),
      'each used value read once, by itself; the unused ones never',
    );
  });
});

/** Counts the calls of one method of an object (its own behaviour kept). */
function countCalls<T extends object>(obj: T, method: keyof T & string): { n: number } {
  const counter = { n: 0 };
  const original = (obj[method] as (...a: unknown[]) => unknown).bind(obj);
  (obj as Record<string, unknown>)[method] = (...a: unknown[]) => {
    counter.n++;
    return original(...a);
  };
  return counter;
}

describe('a redone step replays its journaled actions from a prefetched page', () => {
  /** The bench agent's journal shape, asking for one step's actions in reverse order (defeats the in-order window). */
  const reversed = defineAgent({
    name: JOURNAL_AGENT,
    input: z.object({ steps: z.number().int(), perStep: z.number().int() }),
    async run(run, input) {
      await run.step('step 0', async () => {
        let last = -1;
        for (let j = input.perStep - 1; j >= 0; j--) last = (await run.do(journalSend, { i: j })).ok;
        return { last };
      });
      return { steps: input.steps };
    },
  });

  it('skips every committed action of the unfinished step, in order, and executes only the missing ones', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 1500, perStep: 1600, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const lookups = countCalls(store.reader, 'action');
    const pages = countCalls(store.reader, 'replayActionsOfStep');
    const open = countCalls(store.reader, 'openActionsOfStep');
    const out = await resumeRun(store, journalAgent, 'r', quiet);
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(out.stats.actionsSkipped, 1500);
    assert.equal(probe.executed, 100);
    // The 1,500 skips come from pages (a handful of reads), not from a lookup per committed action.
    assert.ok(pages.n >= 1 && pages.n <= 20, `${pages.n} page reads`);
    assert.ok(lookups.n < 1500 / 5, `${lookups.n} single-action lookups for 1,500 skipped actions`);
    // The step's unfinished actions are read once, when its first new action needs them, not again for the 99 after it.
    assert.equal(open.n, 1, 'open actions read once');
  });

  it('reads no unfinished actions of a redone step whose every action is replayed', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 1500, perStep: 1500, steps: 1 });
    const store = openStore(file);
    // Killed after its last action committed, before its checkpoint: the step is redone, every action replayed.
    const reopened = dbOf(store.db).prepare("UPDATE steps SET status = 'started', result = NULL, ended_at = NULL WHERE run_id = 'r' AND idx = 0").run();
    assert.equal(reopened.changes, 1);
    probe.at = -1;
    probe.executed = 0;
    const open = countCalls(store.reader, 'openActionsOfStep');
    const out = await resumeRun(store, journalAgent, 'r', quiet);
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(out.stats.actionsSkipped, 1500);
    assert.equal(probe.executed, 0);
    assert.equal(open.n, 0, 'no read of unfinished actions: no new action needed the version check');
  });

  it('falls back to one lookup per action when the script asks in another order than the journal', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 4500, perStep: 4600, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const lookups = countCalls(store.reader, 'action');
    const out = await resumeRun(store, reversed, 'r', quiet);
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(out.stats.actionsSkipped, 4500);
    assert.equal(probe.executed, 100);
    // Out of order, the window gives up and each committed action is looked up on its own.
    assert.ok(lookups.n >= 4500, `${lookups.n} single-action lookups for 4,500 skipped actions`);
  });

  it('returns the committed result when the same key is asked for twice in one attempt', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 2, perStep: 3, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const twice = defineAgent({
      name: JOURNAL_AGENT,
      input: z.object({ steps: z.number().int(), perStep: z.number().int() }),
      async run(run) {
        return run.step('step 0', async () => {
          const a = await run.do(journalSend, { i: 0 });
          const b = await run.do(journalSend, { i: 0 });
          const c = await run.do(journalSend, { i: 2 });
          const d = await run.do(journalSend, { i: 2 });
          return { last: a.ok + b.ok + c.ok + d.ok };
        });
      },
    });
    const out = await resumeRun(store, twice, 'r', quiet);
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(probe.executed, 1, 'only action 2 was new, and only once');
    assert.deepEqual(out.output, { last: 4 });
  });
});

describe('a redone step falls back to the full path whenever the journal does not simply match', () => {
  function sameShape(action: typeof journalSend, args: (j: number) => { i: number }) {
    return defineAgent({
      name: JOURNAL_AGENT,
      input: z.object({ steps: z.number().int(), perStep: z.number().int() }),
      async run(run) {
        return run.step('step 0', async () => {
          let last = -1;
          for (let j = 0; j < 3; j++) last = (await run.do(action, args(j))).ok;
          return { last };
        });
      },
    });
  }

  it('stops with a key conflict, running nothing, when a journaled key comes back with other args', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 2, perStep: 3, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const clash = defineAction({ ...journalSend, key: (a, run) => `j:${run.id}:${a.i % 2}` });
    const out = await resumeRun(
      store,
      sameShape(clash, (j) => ({ i: j === 1 ? 3 : j })),
      'r',
      quiet,
    );
    store.close();
    assert.equal(out.status, 'failed');
    assert.equal(out.error?.code, ErrorCodes.KEY_CONFLICT);
    assert.equal(probe.executed, 0);
  });

  it('warns about a changed version and still skips the committed action', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 2, perStep: 3, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const v2 = defineAction({ ...journalSend, version: 2 });
    const out = await resumeRun(
      store,
      sameShape(v2, (j) => ({ i: j })),
      'r',
      quiet,
    );
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(out.stats.actionsSkipped, 2);
    assert.equal(out.stats.warnings.length, 2);
    assert.equal(probe.executed, 1);
  });

  it('pauses a host at every skipped action', async () => {
    const file = path.join(tmpDir(), 'j.db');
    buildJournal(file, { runId: 'r', done: 2, perStep: 3, steps: 1 });
    const store = openStore(file);
    probe.at = -1;
    const kinds: string[] = [];
    const out = await resumeRun(
      store,
      sameShape(journalSend, (j) => ({ i: j })),
      'r',
      { hooks: { pause: (ev) => void kinds.push(ev.kind) }, ...quiet },
    );
    store.close();
    assert.equal(out.status, 'completed', out.error?.message);
    assert.equal(kinds.filter((k) => k === 'action:skipped').length, 2);
  });
});

describe('a read-only action', () => {
  it('is journaled committed in one row, with its count, result and commit event, and is not run again on replay', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    let runs = 0;
    const lookup = defineAction({
      type: 'price.lookup',
      version: 1,
      effect: 'read-only',
      args: z.object({ sku: z.string() }),
      key: (a, run) => `price:${run.id}:${a.sku}`,
      execute: (a) => {
        runs++;
        return { sku: a.sku, cents: 499 };
      },
    });
    const agent = defineAgent({
      name: 'prices',
      input: z.object({}),
      async run(run) {
        return run.step('price', async () => [await run.do(lookup, { sku: 'a' }), await run.do(lookup, { sku: 'a' })]);
      },
    });
    const out = await startRun(store, agent, { script: 'p.ts', input: {}, ...quiet });
    assert.equal(out.status, 'completed');
    assert.equal(runs, 1, 'the same key in the same run returns the journaled result');
    const row = store.reader.action(out.runId, `price:${out.runId}:a`);
    assert.equal(row?.status, 'committed');
    assert.equal(row?.executions, 1);
    assert.equal(row?.result, JSON.stringify({ sku: 'a', cents: 499 }));
    assert.equal(row?.seq, 1);
    assert.equal(row?.effect, 'read-only');
    assert.ok(row?.ended_at !== null && row?.started_at !== undefined);
    const commit = store.reader.events(out.runId).find((e) => e.kind === 'action.committed');
    assert.equal(commit?.seq, row?.commit_seq);
    assert.equal(commit?.data, JSON.stringify({ readOnly: true }));
    store.close();
  });
});

describe("run.do's journal lookup", () => {
  it('is skipped for an id this attempt never started in a run that had no action, and made for any other', async () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const ran: string[] = [];
    const send = defineAction({
      type: 'lookup.send',
      version: 1,
      effect: 'non-idempotent',
      args: z.object({ to: z.string() }),
      key: (a, run) => `send:${run.id}:${a.to}`,
      execute: (a) => {
        ran.push(a.to);
        return { to: a.to };
      },
      verify: () => undefined,
    });
    let stopAfter = Infinity;
    const agent = defineAgent({
      name: 'lookups',
      input: z.object({}),
      async run(run) {
        const out: unknown[] = [];
        for (const to of ['a', 'b', 'a', 'c']) {
          if (ran.length >= stopAfter) throw new Error('stop');
          out.push(await run.step(`to ${to}`, () => run.do(send, { to })));
        }
        return out;
      },
    });
    const lookups = countCalls(store.reader, 'action');
    stopAfter = 2;
    const first = await startRun(store, agent, { script: 'l.ts', input: {}, ...quiet });
    assert.equal(first.status, 'failed');
    assert.deepEqual(ran, ['a', 'b']);
    assert.equal(lookups.n, 0, 'a new run: its new ids are not looked up');
    stopAfter = Infinity;
    const second = await resumeRun(store, agent, first.runId, quiet);
    assert.equal(second.status, 'completed', second.error?.message);
    assert.deepEqual(second.output, [{ to: 'a' }, { to: 'b' }, { to: 'a' }, { to: 'c' }]);
    assert.deepEqual(ran, ['a', 'b', 'c'], "the second 'a' is the journaled one, in a resumed run too");
    assert.ok(lookups.n >= 2, `a run with actions journaled before: new ids are looked up (${lookups.n})`);
    lookups.n = 0;
    ran.length = 0;
    const third = await startRun(store, agent, { script: 'l.ts', input: {}, ...quiet });
    assert.equal(third.status, 'completed');
    assert.deepEqual(ran, ['a', 'b', 'c'], 'within one new attempt, an id it started is found again');
    assert.equal(lookups.n, 1, "only the id this attempt started ('a', again) was looked up");
    store.close();
  });
});

describe('the lease fence and lazy commits', () => {
  it('refuses the next write, lazy or durable, once another process has taken the run', () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const lease = createRun(dbOf(store.db), store.reader, { id: 'fence', agent: 'a', script: 'a.ts', input: null }, beginSession('test'));
    const writer = new RunWriter(store.db, lease, 1);
    writer.note('before', {});
    // The lease lapses (as a holder on another host whose lease expired) and another owner takes the run:
    // epoch and token change under this writer. (On this host a living pid keeps its lease even past expiry.)
    dbOf(store.db).prepare("UPDATE runs SET lease_expires = 0, lease_host = 'another-host' WHERE id = 'fence'").run();
    acquireRun(store.db, store.reader, 'fence', beginSession('thief'), { status: 'running', newAttempt: true, purpose: 'test' });
    for (const write of [
      () => writer.note('lazy', {}),
      () => writer.runStatus('failed'),
      () => {
        // Written behind: the transaction that writes it is the one refused.
        writer.stepStarted(0, 's', false);
        writer.writePending();
      },
    ]) {
      assert.throws(write, (err: unknown) => err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST);
    }
    store.close();
  });

  it('pushes the lease expiry forward on the first write and on status changes, and stays at synchronous=FULL', () => {
    const store = openStore(path.join(tmpDir(), 'j.db'));
    const lease = createRun(dbOf(store.db), store.reader, { id: 'renew', agent: 'a', script: 'a.ts', input: null }, beginSession('test'));
    dbOf(store.db).prepare("UPDATE runs SET lease_expires = 1 WHERE id = 'renew'").run();
    const writer = new RunWriter(store.db, lease, 1, 'group');
    writer.note('lazy', {});
    const afterFirst = store.reader.run('renew')?.lease_expires ?? 0;
    assert.ok(afterFirst > Date.now(), 'the first write renewed the lease');
    dbOf(store.db).prepare("UPDATE runs SET lease_expires = 2 WHERE id = 'renew'").run();
    writer.note('lazy again', {});
    assert.equal(store.reader.run('renew')?.lease_expires, 2, 'a write inside the renewal interval only reads the lease');
    writer.runStatus('needs-decision');
    assert.ok((store.reader.run('renew')?.lease_expires ?? 0) > Date.now(), 'a status change renews');
    assert.equal(sqliteOf(store.db).pragma('synchronous', { simple: true }), 2, 'back at FULL after lazy commits');
    writer.release();
    assert.equal(sqliteOf(store.db).pragma('synchronous', { simple: true }), 2);
    store.close();
  });
});
