// Journal format 2 on SQLite: a transition appends one event carrying its state writes, and `steps`/`actions` are
// folded from the log past runs.folded_seq, by the writer in batches or by whoever reads first; attacked here.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, type Store } from '../../src/runtime';
import { FOLD_EVERY, RunWriter, type NewAction } from '../../src/runtime/store/writer';
import { acquireRun, createRun } from '../../src/runtime/store/lease';
import { beginSession, type Owner } from '../../src/runtime/store/owner';
import { dbOf } from '../../src/runtime/store/db';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import { foldRun } from '../../src/runtime/store/fold';
import { CARRIED_RAW, decodeRowOps, encodeRowOps, type RowOp } from '../../src/runtime/store/rowOps';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { tmpDir } from '../helpers';
import { journalAt } from './journalAt';

const send = (id: string, stepIdx = 0): NewAction => ({ id, stepIdx, type: 'mail.send', version: 1, effect: 'non-idempotent', args: `{"to":"${id}"}` });

function newWriter(file: string, id: string): { store: Store; writer: RunWriter } {
  const store = openStore(file);
  const lease = createRun(dbOf(store.db), store.reader, { id, agent: 'a', script: 'a.ts', input: null }, beginSession('test'));
  return { store, writer: new RunWriter(store.db, lease, 1) };
}

/** The bracket of a non-idempotent action, as the engine writes it: started, a call of execute counted, committed. */
function bracket(writer: RunWriter, a: NewAction): void {
  writer.actionStarted(a, false);
  writer.actionExecuting(a.stepIdx, a.id);
  writer.actionCommitted(a.stepIdx, a.id, `{"sent":"${a.id}"}`);
}

/** What the rows say, raw (every column), through a connection of its own that folds nothing. */
function rawRows(file: string): { steps: unknown[]; actions: unknown[]; folded: unknown } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      steps: db.prepare('SELECT * FROM steps ORDER BY run_id, idx').all(),
      actions: db.prepare('SELECT * FROM actions ORDER BY run_id, seq').all(),
      folded: db.prepare('SELECT id, folded_seq FROM runs ORDER BY id').all(),
    };
  } finally {
    db.close();
  }
}

/** A value long enough to be carried after the writes' JSON as it is (CARRIED_RAW), with quotes and a raw newline in it. */
const LONG = `{"doc":"${'q"'.replace('"', '\\"').repeat(400)}"}\n `;

/** Every transition kind the writer folds, over two steps: what a run of each kind of action leaves. */
function everyKind(writer: RunWriter): void {
  writer.stepStarted(0, 'first', false);
  bracket(writer, send('a'));
  writer.actionObserved({ id: 'r', stepIdx: 0, type: 'price.lookup', version: 1, effect: 'read-only', args: '{}' }, '{"cents":1}');
  writer.actionStarted(send('f'), false);
  writer.actionFailed(0, 'f', { message: 'refused' });
  writer.actionStarted(send('d'), false);
  writer.actionExecuting(0, 'd');
  writer.actionInDoubt(0, 'd', { message: 'timeout' });
  writer.decision(0, 'd', 'happened', '{"sent":"d"}');
  writer.actionStarted(send('d'), true, 'decided-happened');
  writer.actionCommitted(0, 'd', '{"sent":"d"}', 'decided-happened');
  writer.awaitingApproval(send('g'));
  writer.approval(0, 'g', true, 'ok');
  writer.actionStarted({ ...send('long'), args: LONG }, false);
  writer.actionCommitted(0, 'long', LONG);
  writer.stepCompleted(0, LONG);
  writer.stepStarted(1, 'second', false);
  writer.waitStarted(1, 'second', '{"name":"go","until":null}');
  writer.stepFailed(1, { message: 'boom' });
  writer.compensation(0, 'a', 'started');
  writer.compensationExecuting(0, 'a');
  writer.compensation(0, 'a', 'committed', '{"undone":true}');
}

describe('journal format 2: rows folded from the log (SQLite)', () => {
  it('a transition appends one event and writes no state row; a reader in another process folds them and sees the run', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r1');
    bracket(writer, send('x'));
    const raw = rawRows(file);
    assert.deepEqual(raw.actions, [], 'the bracket wrote no action row');
    const db = new Database(file, { readonly: true });
    const carried = db.prepare("SELECT kind, fold FROM events WHERE run_id = 'r1' AND fold IS NOT NULL ORDER BY seq").all();
    db.close();
    assert.deepEqual(
      carried.map((e) => (e as { kind: string }).kind),
      ['action.started', 'action.executing', 'action.committed'],
    );
    // Another connection, as `logbook show` in another process: it folds before it reads.
    const other = openStore(file);
    const a = other.reader.action('r1', 'x');
    assert.equal(a?.status, 'committed');
    assert.equal(a?.executions, 1);
    assert.equal(a?.result, '{"sent":"x"}');
    other.close();
    assert.equal(rawRows(file).actions.length, 1, 'and the fold is in the file');
    writer.release();
    store.close();
  });

  it(`the writer folds on its own every ${FOLD_EVERY} writes, not fsynced, and at release`, () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r2');
    const n = FOLD_EVERY / 3;
    for (let i = 0; i < n - 1; i++) bracket(writer, send(`s${i}`));
    assert.equal(rawRows(file).actions.length, 0, `${n - 1} brackets: ${(n - 1) * 3} writes, not folded yet`);
    bracket(writer, send(`s${n - 1}`));
    assert.equal(rawRows(file).actions.length, n, `${FOLD_EVERY} writes: folded`);
    assert.equal(sqliteOf(store.db).pragma('synchronous', { simple: true }), 2, 'back at FULL after the fold');
    bracket(writer, send('last'));
    assert.equal(rawRows(file).actions.length, n);
    writer.release();
    assert.equal(rawRows(file).actions.length, n + 1, 'release folds what is left');
    store.close();
  });

  it('folding a run again from its first event gives the same rows, for every kind of transition (the fold is the write)', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r3');
    everyKind(writer);
    writer.release();
    store.close();
    const folded = rawRows(file);
    assert.ok(folded.actions.length >= 5 && folded.steps.length === 2, 'the run left its rows');
    const long = folded.actions.find((a) => (a as { id: string }).id === 'long') as { args: string; result: string };
    assert.deepEqual([long.args, long.result, (folded.steps[0] as { result: string }).result], [LONG, LONG, LONG], 'long values fold as they were');
    // Drops the rows and folds them again from the first event, after `sabotage` (raw SQL) if given.
    const refold = (sabotage = ''): ReturnType<typeof rawRows> => {
      const db = new Database(file);
      db.exec(`DELETE FROM actions; DELETE FROM steps; UPDATE runs SET folded_seq = 0 WHERE id = 'r3'; ${sabotage}`);
      db.close();
      const again = openStore(file);
      foldRun(dbOf(again.db), 'r3');
      again.close();
      return rawRows(file);
    };
    assert.deepEqual(refold(), folded);
    // Negative control: the comparison sees a write left out.
    assert.notDeepEqual(refold("UPDATE events SET fold = NULL WHERE run_id = 'r3' AND kind = 'action.executing'"), folded);
  });

  it('a second writer in the same process, after a takeover its stale holder has not noticed, reads its own writes', () => {
    const file = path.join(tmpDir(), 'j.db');
    const store = openStore(file);
    const dead: Owner = { ...beginSession('test'), pid: 2 ** 22 + 1, pidStart: '1', label: 'dead first' };
    const first = createRun(dbOf(store.db), store.reader, { id: 'r10', agent: 'a', script: 'a.ts', input: null }, dead);
    // Registered in this process, and it writes nothing after the takeover: it has not noticed.
    const stale = new RunWriter(store.db, first, 1);
    stale.actionStarted(send('old'), false);
    const taken = acquireRun(store.db, store.reader, 'r10', beginSession('second'), { status: 'running', newAttempt: true, purpose: 'resume' });
    const fresh = new RunWriter(store.db, taken, store.reader.nextActionSeq('r10'));
    fresh.actionStarted(send('new'), false);
    assert.equal(store.reader.action('r10', 'new')?.status, 'started', 'the reader asks every writer of the run here, not the stale one alone');
    assert.equal(store.reader.action('r10', 'old')?.status, 'started');
    fresh.release();
    stale.release();
    store.close();
  });

  it('a reader that opened the journal before it reached format 2 (another process was creating or migrating it) folds once it has', () => {
    const file = path.join(tmpDir(), 'j.db');
    journalAt(file, 11).close();
    const early = openStore(file, { readonly: true });
    assert.equal(early.reader.actions('any').length, 0, 'at schema 11 there is nothing to fold');
    const { store, writer } = newWriter(file, 'r11');
    writer.actionStarted(send('x'), false);
    assert.equal(early.reader.action('r11', 'x')?.status, 'started', 'the same reader, now at schema 12, folds');
    assert.equal(early.overview().actionsIn('r11', 'started'), 1);
    early.close();
    writer.release();
    store.close();
  });

  it('two folders at once apply each write once: a count is not doubled', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r4');
    bracket(writer, send('x'));
    writer.actionExecuting(0, 'x');
    writer.heartbeat();
    const a = openStore(file);
    const b = openStore(file);
    foldRun(dbOf(a.db), 'r4');
    foldRun(dbOf(b.db), 'r4');
    foldRun(dbOf(a.db), 'r4');
    assert.equal(b.reader.action('r4', 'x')?.executions, 2);
    a.close();
    b.close();
    writer.release();
    assert.equal(store.reader.action('r4', 'x')?.executions, 2, 'and the writer, folding at release, does not apply them again');
    store.close();
  });

  it('a read-only open folds through a connection of its own, and says what to do where it cannot', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'j.db');
    const { store, writer } = newWriter(file, 'r5');
    bracket(writer, send('x'));
    // A writer that died between folds: its events are committed, its rows not folded.
    store.close();
    const ro = openStore(file, { readonly: true });
    assert.equal(ro.reader.action('r5', 'x')?.status, 'committed');
    ro.close();
    assert.equal(rawRows(file).actions.length, 1);

    const file2 = path.join(dir, 'k.db');
    const w2 = newWriter(file2, 'r6');
    bracket(w2.writer, send('y'));
    w2.store.close();
    fs.chmodSync(file2, 0o444);
    fs.chmodSync(dir, 0o555);
    try {
      if (process.getuid?.() === 0) return; // root writes anyway: the refusal cannot be staged
      const ro2 = openStore(file2, { readonly: true });
      assert.throws(
        () => ro2.reader.action('r6', 'y'),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.DB_READONLY && /with write access/.test(e.remedy),
      );
      ro2.close();
    } finally {
      fs.chmodSync(dir, 0o755);
      fs.chmodSync(file2, 0o644);
    }
  });

  it('a write the log carries for a row it cannot find (a key damaged between folds) stops the fold; restored, nothing is lost', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r8');
    writer.actionStarted(send('x'), false);
    const other = openStore(file);
    assert.equal(other.reader.action('r8', 'x')?.status, 'started', 'folded: the row is there');
    other.close();
    writer.actionExecuting(0, 'x');
    writer.actionCommitted(0, 'x', '{"sent":"x"}');
    store.close();
    const db = new Database(file);
    db.prepare("UPDATE actions SET id = CAST(id AS BLOB) WHERE run_id = 'r8'").run();
    db.close();
    const s = openStore(file);
    assert.throws(
      () => s.reader.inDoubt('r8'),
      (e: unknown) =>
        e instanceof LogbookError && e.code === ErrorCodes.JOURNAL_INVALID && /changes action "x", but the rows hold no such action/.test(e.message),
    );
    s.close();
    const db2 = new Database(file);
    db2.prepare("UPDATE actions SET id = CAST(id AS TEXT) WHERE run_id = 'r8'").run();
    db2.close();
    const again = openStore(file);
    const a = again.reader.action('r8', 'x');
    assert.equal(a?.status, 'committed');
    assert.equal(a?.executions, 1);
    again.close();
  });

  it('a watermark that is not a seq of the run (text, negative, past its last event) is the journal failing, not writes hidden', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r9');
    bracket(writer, send('x'));
    store.close();
    for (const damage of ["'three'", '-1', '1000000', '2.5', "x'00'"]) {
      const db = new Database(file);
      db.exec(`UPDATE runs SET folded_seq = ${damage} WHERE id = 'r9'`);
      db.close();
      const s = openStore(file);
      assert.throws(
        () => s.reader.action('r9', 'x'),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.JOURNAL_INVALID && /runs\.folded_seq was edited or damaged/.test(e.message),
        damage,
      );
      s.close();
      assert.deepEqual(rawRows(file).actions, [], `${damage}: nothing folded`);
    }
    const db = new Database(file);
    db.exec("UPDATE runs SET folded_seq = 0 WHERE id = 'r9'");
    db.close();
    const s = openStore(file);
    assert.equal(s.reader.action('r9', 'x')?.status, 'committed', 'restored, the writes fold as before');
    s.close();
  });

  it('a damaged write in the log is the journal failing (LB_JOURNAL_INVALID, naming the event), and nothing is folded', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r7');
    bracket(writer, send('x'));
    bracket(writer, send('y'));
    store.close();
    for (const damage of ['not json', '[["dropTable","x"]]', '[["actionExecuting"]]', '[["actionExecuting",{"id":1}]]', '{}']) {
      const db = new Database(file);
      const seq = db.prepare("SELECT seq FROM events WHERE run_id = 'r7' AND kind = 'action.executing' ORDER BY seq DESC LIMIT 1").pluck().get() as number;
      db.prepare('UPDATE events SET fold = ? WHERE seq = ?').run(damage, seq);
      db.close();
      const s = openStore(file);
      assert.throws(
        () => s.reader.actions('r7'),
        (e: unknown) => {
          assert.ok(e instanceof LogbookError && e.code === ErrorCodes.JOURNAL_INVALID, `${damage}: ${String(e)}`);
          assert.match(e.message, new RegExp(`event #${seq} of run r7`), damage);
          return true;
        },
      );
      s.close();
      assert.deepEqual(rawRows(file).actions, [], `${damage}: nothing folded, not even the writes before it`);
    }
  });

  it('what an event carries reads back as written: no long value, one, two in one transition (the second escaped), newlines and astral characters', () => {
    const where = { file: 'j.db', runId: 'r', seq: 1 };
    const long2 = `${'é😀'.repeat(300)}\n"x"`;
    const cases: RowOp[][] = [
      [['actionExecuting', 'a']],
      [['stepEnd', 0, 'completed', LONG, null, 5]],
      [['actionObserved', 'r', 1, 0, 'price.lookup', 1, 'read-only', LONG, long2, 1, 5]],
      [
        ['actionInsert', 'b', 2, 0, 't', 1, 'idempotent', long2, 'started', 1, 5, null],
        ['actionCommit', 'b', LONG, 6, null],
      ],
    ];
    for (const ops of cases) {
      const text = encodeRowOps(ops);
      assert.ok(text !== null);
      assert.deepEqual(decodeRowOps(text, where), ops);
      const long = ops.some((op) => op.some((p) => typeof p === 'string' && p.length >= CARRIED_RAW));
      assert.equal(text.includes('{"$":"raw"}'), long, text.slice(0, 80));
    }
    assert.equal(encodeRowOps([]), null);
  });

  it('a long value is carried after the writes as it is, not escaped into them; damaged around it, the fold stops', () => {
    const file = path.join(tmpDir(), 'j.db');
    const { store, writer } = newWriter(file, 'r8');
    writer.stepStarted(0, 'first', false);
    writer.stepCompleted(0, LONG);
    store.close();
    const db = new Database(file);
    const { seq, fold } = db.prepare("SELECT seq, fold FROM events WHERE run_id = 'r8' AND kind = 'step.completed'").get() as { seq: number; fold: string };
    assert.equal(fold.slice(fold.indexOf('\n') + 1), LONG, 'the value follows the first newline, unescaped');
    assert.ok(fold.length < LONG.length + 100, `stored once: ${fold.length} chars for a value of ${LONG.length}`);
    const head = fold.slice(0, fold.indexOf('\n'));
    const stand = '{"$":"raw"}';
    assert.ok(head.includes(stand), head);
    db.close();
    // Damaged: the value cut off, a value nothing stands for, a stand-in used twice, one inside a write's name.
    for (const damage of [
      head,
      `${head.replace(stand, '"x"')}\n${LONG}`,
      `${head.replace(stand, `${stand}`).replace('"completed"', stand)}\n${LONG}`,
      `[[${stand},0]]\n${LONG}`,
    ]) {
      const w = new Database(file);
      w.prepare('UPDATE events SET fold = ? WHERE seq = ?').run(damage, seq);
      w.close();
      const s = openStore(file);
      assert.throws(
        () => s.reader.steps('r8', 0, 1),
        (e: unknown) => e instanceof LogbookError && e.code === ErrorCodes.JOURNAL_INVALID && e.message.includes(`event #${seq} of run r8`),
        damage.slice(0, 80),
      );
      s.close();
    }
    // Restored, it folds.
    const w = new Database(file);
    w.prepare('UPDATE events SET fold = ? WHERE seq = ?').run(fold, seq);
    w.close();
    const s = openStore(file);
    assert.equal(s.reader.steps('r8', 0, 1)[0]?.result, LONG);
    s.close();
  });
});
