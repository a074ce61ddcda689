// Replay's packed reads (Dialect.packRows: a chunk of rows as one JSON text) against the row-by-row reads they replace,
// and a resume's one-scan damage check (steps and the unfinished steps' actions) against the places it must find.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { JournalReader, type ReadScope } from '../../src/runtime/store/reader';
import { SQLITE_DIALECT, sqliteDb } from '../../src/runtime/store/sqlite';
import { INLINE_RESULT_BYTES } from '../../src/runtime/stepCursor';
import { LAZY_ABOVE_BYTES } from '../../src/runtime/lazyValue';
import { tmpDir } from '../helpers';
import { errorOf } from './journalAt';

// Values whose JSON text needs every kind of escaping, numbers at the edges, and a result too long to come inline.
const VALUES: unknown[] = [
  'plain',
  'quote " and \\ backslash',
  'line\nbreak\ttab\r',
  'unicode é 日本 🎉',
  '\u0001 control \u001f',
  0,
  -1.5,
  1e21,
  2 ** 53 - 1,
  null,
  true,
  { nested: [1, { a: 'b' }], empty: {} },
  'x'.repeat(INLINE_RESULT_BYTES + 10),
];

const echo = defineAction({
  type: 'packed.echo',
  version: 1,
  effect: 'idempotent',
  args: z.object({ v: z.unknown() }),
  key: (a) => `echo:${JSON.stringify(a.v)}`,
  execute: (a) => ({ v: a.v }),
});

const agent = defineAgent({
  name: 'packed-replay',
  input: z.object({}),
  async run(run) {
    for (const [i, v] of VALUES.entries()) {
      await run.step(`step "${i}" é\n`, async () => {
        await run.do(echo, { v });
        await run.do(echo, { v: [v, i] });
        return v;
      });
    }
    try {
      await run.step('fails', () => {
        throw new Error('declined "here"\n');
      });
    } catch {
      // Caught: the step's error is journaled, and the run goes on.
    }
    return 'done';
  },
});

const STEPS = VALUES.length + 1;

/** A reader of the same file whose dialect packs nothing: the row-by-row reads, as before packRows. */
function rowByRowReader(file: string): { reader: JournalReader; close: () => void } {
  const raw = new Database(file, { readonly: true });
  const db = Object.assign(sqliteDb(raw), { dialect: { ...SQLITE_DIALECT, packRows: null } });
  return { reader: new JournalReader(db, file), close: () => raw.close() };
}

/** A reader that records the SQL it prepares, so the test knows the packed statements are the ones it runs. */
function packedReader(file: string): { reader: JournalReader; prepared: string[]; close: () => void } {
  const raw = new Database(file, { readonly: true });
  const prepared: string[] = [];
  const prepare = raw.prepare.bind(raw);
  raw.prepare = (sql: string) => (prepared.push(sql), prepare(sql));
  return { reader: new JournalReader(sqliteDb(raw), file), prepared, close: () => raw.close() };
}

describe('replay reads packed rows (SQLite)', () => {
  let dir: string;
  let file: string;
  let store: Store;
  beforeEach(async () => {
    dir = tmpDir();
    file = path.join(dir, 'journal.db');
    store = openStore(file);
    const out = await startRun(store, agent, { script: 'p.ts', input: {}, runId: 'p', log: () => undefined });
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    store.close();
  });

  const edit = (sql: string): void => {
    const raw = new Database(file);
    raw.prepare(sql).run();
    raw.close();
  };

  it('gives the same step headers and action rows as the row-by-row reads, value for value', () => {
    // Attempts other than the first, as a resumed run has.
    edit("UPDATE steps SET attempt = 2 WHERE run_id = 'p' AND idx = 4");
    edit("UPDATE actions SET attempt = 3 WHERE run_id = 'p' AND step_idx = 5");
    const packed = packedReader(file);
    const plain = rowByRowReader(file);
    try {
      const heads = packed.reader.replayStepHeads('p', 0, STEPS + 5, INLINE_RESULT_BYTES);
      assert.equal(heads.length, STEPS);
      assert.deepEqual(heads, plain.reader.replayStepHeads('p', 0, STEPS + 5, INLINE_RESULT_BYTES));
      // The long result came as its header, and the caught failure with its error text.
      assert.equal(heads.filter((h) => h.large !== null).length, 1);
      assert.ok(heads.some((h) => h.status === 'failed' && typeof h.error === 'string'));
      for (let idx = 0; idx < STEPS; idx++) {
        const rows = packed.reader.replayActionsOfStep('p', idx, 0, 100);
        assert.deepEqual(rows, plain.reader.replayActionsOfStep('p', idx, 0, 100), `step ${idx}`);
        if (idx < VALUES.length) assert.equal(rows.length, 2);
      }
      assert.deepEqual(packed.reader.replayActionsOfStep('p', 3, 0, 1), plain.reader.replayActionsOfStep('p', 3, 0, 1));
      // Control: the two readers do read step headers differently (else equality proves nothing); actions are read
      // row by row by both (their values have no size bound).
      assert.equal(packed.prepared.filter((sql) => sql.includes('json_group_array')).length, 1);
      assert.deepEqual(packed.reader.replayStepHeads('p', STEPS, STEPS + 5, INLINE_RESULT_BYTES), []);
    } finally {
      packed.close();
      plain.close();
    }
  });

  it('a BLOB, even one SQLite would read as its binary JSON, is the same LB_JOURNAL_INVALID as row by row', () => {
    // JSONB for a text of its own choosing: json_array would copy it in unescaped, forging a result and a step.
    const forged = Buffer.from('step0","completed","\\"forged\\"",null,1],[1,"x');
    const raw = new Database(file);
    raw.prepare("UPDATE steps SET name = ? WHERE run_id = 'p' AND idx = 0").run(Buffer.concat([Buffer.from([0xc7, forged.length]), forged]));
    raw.prepare("UPDATE steps SET result = X'00' WHERE run_id = 'p' AND idx = 1").run();
    raw.close();
    edit("UPDATE steps SET name = X'00ff' WHERE run_id = 'p' AND idx = 2");
    edit("UPDATE actions SET args = X'00ff' WHERE run_id = 'p' AND step_idx = 4 AND seq = (SELECT MIN(seq) FROM actions WHERE run_id = 'p' AND step_idx = 4)");
    const packed = packedReader(file);
    const plain = rowByRowReader(file);
    try {
      for (const [from, to] of [
        [0, 1],
        [1, 2],
        [2, 3],
        [0, STEPS],
      ] as const) {
        const stepErr = errorOf(() => packed.reader.replayStepHeads('p', from, to, INLINE_RESULT_BYTES));
        assert.equal(stepErr?.code, 'LB_JOURNAL_INVALID', `steps [${from}, ${to})`);
        assert.deepEqual(
          stepErr,
          errorOf(() => plain.reader.replayStepHeads('p', from, to, INLINE_RESULT_BYTES)),
        );
      }
      const actionErr = errorOf(() => packed.reader.replayActionsOfStep('p', 4, 0, 100));
      assert.equal(actionErr?.code, 'LB_JOURNAL_INVALID');
      assert.deepEqual(
        actionErr,
        errorOf(() => plain.reader.replayActionsOfStep('p', 4, 0, 100)),
      );
    } finally {
      packed.close();
      plain.close();
    }
  });

  describe("a resume's damage check, one scan of the steps", () => {
    const RESUME: ReadScope = { steps: Number.MAX_SAFE_INTEGER, actions: 'open', deferAbove: LAZY_ABOVE_BYTES };
    const firstAction = (idx: number): string => `(SELECT MIN(seq) FROM actions WHERE run_id = 'p' AND step_idx = ${idx})`;
    const damage = (): unknown => {
      const packed = packedReader(file);
      try {
        return packed.reader.firstDamage('p', RESUME);
      } finally {
        packed.close();
      }
    };
    const idOf = (idx: number): string => {
      const raw = new Database(file, { readonly: true });
      try {
        return raw
          .prepare(`SELECT id FROM actions WHERE run_id = 'p' AND seq = ${firstAction(idx)}`)
          .pluck()
          .get() as string;
      } finally {
        raw.close();
      }
    };

    it('finds nothing in an undamaged run', () => assert.equal(damage(), undefined));

    it("finds a damaged step's result or error, the first by index", () => {
      edit("UPDATE steps SET error = '{oops' WHERE run_id = 'p' AND idx = 7");
      edit("UPDATE steps SET result = '[1,' WHERE run_id = 'p' AND idx = 5");
      assert.deepEqual(damage(), { runId: 'p', table: 'steps', idx: 5, name: 'step "5" é\n', column: 'result' });
    });

    it('leaves a damaged result longer than deferAbove to replay', () => {
      edit(`UPDATE steps SET result = '"${'y'.repeat(LAZY_ABOVE_BYTES + 1)}' WHERE run_id = 'p' AND idx = 1`);
      assert.equal(damage(), undefined);
    });

    it("finds a damaged action of an unfinished step, and not one of a completed step's committed actions", () => {
      edit(`UPDATE actions SET args = 'nope' WHERE run_id = 'p' AND seq = ${firstAction(3)}`);
      assert.equal(damage(), undefined, 'a committed action of a completed step is not read by a resume');
      edit("UPDATE steps SET status = 'started' WHERE run_id = 'p' AND idx = 3");
      assert.deepEqual(damage(), { runId: 'p', table: 'actions', id: idOf(3), stepIdx: 3, column: 'args' });
    });

    it('finds a damaged action of an unfinished step whose index is above 2^53 (no JS number holds it)', () => {
      const raw = new Database(file);
      const huge = 2n ** 62n + 1n;
      raw.prepare("INSERT INTO steps (run_id, idx, name, status, attempt, started_at) VALUES ('p', ?, 'far', 'started', 1, 0)").run(huge);
      raw
        .prepare(
          "INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, attempt, started_at) VALUES ('p', 'far-1', 1000, ?, 't', 1, 'idempotent', 'nope', 'started', 1, 0)",
        )
        .run(huge);
      raw.close();
      assert.deepEqual(damage(), { runId: 'p', table: 'actions', id: 'far-1', stepIdx: Number(huge), column: 'args' });
    });

    it('finds a damaged action a caught error left in doubt in a completed step', () => {
      edit(
        `UPDATE actions SET status = 'started', error = '{"name":"Error","message":"x"}', result = 'bad json' WHERE run_id = 'p' AND seq = ${firstAction(6)}`,
      );
      assert.deepEqual(damage(), { runId: 'p', table: 'actions', id: idOf(6), stepIdx: 6, column: 'result' });
    });

    it('names a damaged step before a damaged action, as the separate scans did', () => {
      edit("UPDATE steps SET status = 'started' WHERE run_id = 'p' AND idx = 2");
      edit(`UPDATE actions SET args = 'nope' WHERE run_id = 'p' AND seq = ${firstAction(2)}`);
      edit("UPDATE steps SET error = 'nope' WHERE run_id = 'p' AND idx = 9");
      assert.deepEqual(damage(), { runId: 'p', table: 'steps', idx: 9, name: 'step "9" é\n', column: 'error' });
    });
  });
});
