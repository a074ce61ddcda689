// Issue 19 case 3: a journaled value edited or damaged by hand (`{not json` written with real SQL into the SQLite file)
// is LB_JOURNAL_INVALID naming the run, the row and the column: never a SyntaxError the script or its declared
// compensation takes for a failure. Resume and compensate refuse it before writing anything; show and ls still work.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { cli, cliJson, foldRows, tmpDir } from '../helpers';
import { PRICED, PRICED_DIR, RAW, charges, refunds } from '../priced';
import { startWorker, stopWorker } from '../pg/workers';
import { loadScript } from '../../src/loader/loadScript';
import { ErrorCodes, LogbookError, openJournal } from '../../src/runtime/public';

const input = JSON.stringify(RAW);

/** Real SQL on the real file, as a person with a `sqlite3` shell would. */
function sql(dir: string, statement: string, ...params: unknown[]): void {
  const db = new Database(path.join(dir, 'journal.db'));
  try {
    db.prepare(statement).run(...params);
  } finally {
    db.close();
  }
}

/** The run's row and its events, exactly as stored: what a refused command must leave as it was. */
function snapshot(dir: string, runId: string): string {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return JSON.stringify({
      run: db.prepare('SELECT * FROM runs WHERE id = ?').get(runId),
      events: db.prepare('SELECT * FROM events WHERE run_id = ? ORDER BY seq').all(runId),
    });
  } finally {
    db.close();
  }
}

/** A run killed before its last step ('receipt'): quote and charge are checkpointed, the charge committed. */
function interrupted(dir: string, runId: string, crashAt = 'receipt@before'): void {
  const r = cli(dir, ['run', PRICED, '--input', input, '--run-id', runId, '--crash-at', crashAt]);
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  // The rows the tests damage, folded from the log as any reader would (the kill left them behind it).
  foldRows(path.join(dir, 'journal.db'));
}

function assertRefused(r: { status: number | null; stderr: string }, where: RegExp): void {
  assert.equal(r.status, 5, `exit 5 (a journal error):\n${r.stderr}`);
  assert.match(r.stderr, /\[LB_JOURNAL_INVALID\] The journal of run \S+ is damaged: /);
  assert.match(r.stderr, where);
  assert.match(r.stderr, /Restore the journal from a backup.*`logbook delete /s, 'it ends with the remedy');
  assert.doesNotMatch(r.stderr, /internal error|SyntaxError|\n\s+at /, 'no stack, no SyntaxError');
}

describe('cli: a damaged journal is a journal error, not the script failing (issue 19 case 3)', function () {
  this.timeout(120_000);

  it('a step result that is not JSON: resume refuses with LB_JOURNAL_INVALID, writes nothing, refunds nothing', () => {
    const dir = tmpDir();
    interrupted(dir, 'step-bad');
    sql(dir, "UPDATE steps SET result = '{not json' WHERE run_id = 'step-bad' AND idx = 0");
    const before = snapshot(dir, 'step-bad');
    assertRefused(cli(dir, ['resume', 'step-bad']), /step #1 "quote", column result holds text that is not JSON.*Nothing was written/);
    assert.equal(snapshot(dir, 'step-bad'), before, 'the run row (attempt, lease, status) and its events are unchanged');
    assert.deepEqual(refunds(dir), [], 'the declared onFailure: compensate did not fire');
    assert.deepEqual(charges(dir, 'step-bad'), [1250], 'nothing charged again');
    // Compensation reads no checkpoint: it is still possible, and undoes the charge.
    const comp = cli(dir, ['compensate', 'step-bad']);
    assert.equal(comp.status, 0, comp.stderr);
    assert.deepEqual(
      refunds(dir).map((r) => r.cents),
      [1250],
    );
  });

  it('an action result that is not JSON: resume and compensate refuse before the attempt counter moves; no inverse runs', () => {
    const dir = tmpDir();
    // Killed after the charge committed, before its step was checkpointed: the resume reads the charge's result.
    interrupted(dir, 'act-bad', 'priced.charge#1@after-commit');
    sql(dir, "UPDATE actions SET result = '{not json' WHERE run_id = 'act-bad' AND id = 'charge:act-bad'");
    const before = snapshot(dir, 'act-bad');
    assertRefused(cli(dir, ['resume', 'act-bad']), /action "charge:act-bad" \(step #2\), column result holds text that is not JSON/);
    assertRefused(cli(dir, ['compensate', 'act-bad']), /action "charge:act-bad" \(step #2\), column result/);
    assert.equal(snapshot(dir, 'act-bad'), before);
    assert.deepEqual(refunds(dir), [], 'no inverse ran');
    assert.deepEqual(charges(dir, 'act-bad'), [1250]);
  });

  it('a completed run whose action args are not JSON: compensate refuses and refunds nothing', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', PRICED, '--input', input, '--run-id', 'done-bad']).status, 0);
    sql(dir, "UPDATE actions SET args = '{not json' WHERE run_id = 'done-bad'");
    const before = snapshot(dir, 'done-bad');
    assertRefused(cli(dir, ['compensate', 'done-bad']), /action "charge:done-bad" \(step #2\), column args/);
    assert.equal(snapshot(dir, 'done-bad'), before);
    assert.deepEqual(refunds(dir), []);
  });

  it('a run input that is not JSON: resume, compensate and show --json say LB_JOURNAL_INVALID; the attempt counter stays', () => {
    const dir = tmpDir();
    interrupted(dir, 'in-bad');
    sql(dir, "UPDATE runs SET input = '{not json' WHERE id = 'in-bad'");
    const before = snapshot(dir, 'in-bad');
    const where = /the run's own row, column input holds text that is not JSON/;
    assertRefused(cli(dir, ['resume', 'in-bad']), where);
    assertRefused(cli(dir, ['compensate', 'in-bad']), where);
    const shown = cli(dir, ['show', 'in-bad', '--json']);
    assertRefused(shown, where);
    const json = JSON.parse(shown.stdout) as {
      run: { input: unknown; attempt: number };
      steps: unknown[];
      damaged: Array<{ code: string; table: string; column: string }>;
    };
    assert.equal(json.run.input, null, 'the damaged value is shown as null');
    assert.equal(json.steps.length, 2, 'the rest of the run is shown');
    assert.deepEqual(
      json.damaged.map((d) => [d.code, d.table, d.column]),
      [['LB_JOURNAL_INVALID', 'runs', 'input']],
    );
    assert.equal(json.run.attempt, 1);
    assert.equal(snapshot(dir, 'in-bad'), before, 'nothing was written: the attempt counter did not move');
    assert.deepEqual(refunds(dir), []);
  });

  it('fork: a damaged checkpoint before the fork point is refused and no fork is created; from before the damage it forks', () => {
    const dir = tmpDir();
    assert.equal(cli(dir, ['run', PRICED, '--input', input, '--run-id', 'fork-src']).status, 0);
    sql(dir, "UPDATE steps SET result = '{not json' WHERE run_id = 'fork-src' AND idx = 1");
    assertRefused(cli(dir, ['fork', 'fork-src', '--step', '3', '--run-id', 'f-late']), /step #2 "charge", column result.*Nothing was written/);
    assert.equal(cli(dir, ['show', 'f-late']).status, 2, 'no fork run was created');
    const early = cliJson(dir, ['fork', 'fork-src', '--step', '2', '--run-id', 'f-early']);
    assert.equal(early.status, 0, early.stderr);
    assert.deepEqual(charges(dir, 'f-early'), [1250], 'the fork redoes the charge under its own key');
    assert.deepEqual(refunds(dir), []);
  });

  it('show and ls still work on a journal with one damaged row, and show marks it', () => {
    const dir = tmpDir();
    interrupted(dir, 'shown');
    assert.equal(cli(dir, ['run', PRICED, '--input', input, '--run-id', 'fine']).status, 0);
    sql(dir, "UPDATE steps SET result = '{not json' WHERE run_id = 'shown' AND idx = 1");
    const text = cli(dir, ['show', 'shown']);
    assert.equal(text.status, 5);
    assert.match(text.stdout, /^2\s+charge\s+completed$/m, 'the table is shown');
    assert.match(text.stdout, /damaged The journal of run shown is damaged: step #2 "charge", column result/);
    const json = cliJson(dir, ['show', 'shown']);
    assert.equal(json.status, 5);
    assert.equal(json.json.steps[1].result, null);
    assert.deepEqual(json.json.steps[0].result, { cents: 1250 });
    assert.equal(json.json.damaged[0].idx, 1);
    const ls = cli(dir, ['ls']);
    assert.equal(ls.status, 0, ls.stderr);
    assert.match(ls.stdout, /shown\s+priced\s+interrupted/);
    assert.match(ls.stdout, /fine\s+priced\s+completed/);
    sql(dir, "UPDATE runs SET output = '{not json' WHERE id = 'fine'");
    const lsJson = cliJson(dir, ['ls']);
    assert.equal(lsJson.status, 0, lsJson.stderr);
    assert.deepEqual(lsJson.json.map((r: { id: string }) => r.id).sort(), ['fine', 'shown']);
    assert.match(lsJson.stderr, /warning \[LB_JOURNAL_INVALID\] The journal of run fine is damaged: the run's own row, column output/);
  });

  it('a worker claiming a run whose input is damaged gives it back and does not claim it again', async () => {
    const dir = tmpDir('logbook-damaged-worker-');
    const e = { db: path.join(dir, 'journal.db'), dir, ledger: path.join(dir, 'ledger.log') };
    assert.equal(cli(dir, ['run', '--detach', PRICED, '--input', input, '--run-id', 'q-bad']).status, 0);
    assert.equal(cli(dir, ['run', '--detach', PRICED, '--input', input, '--run-id', 'q-fine']).status, 0);
    sql(dir, "UPDATE runs SET input = '{not json' WHERE id = 'q-bad'");
    const w = startWorker(e, 'damage', [], PRICED_DIR);
    try {
      await w.waitLine(/q-bad has a damaged journal; given back, and this worker does not claim it again: \[LB_JOURNAL_INVALID\]/);
      await w.waitLine(/q-fine completed/);
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(w.lines.filter((l) => /claimed q-bad/.test(l)).length, 1, w.lines.join('\n'));
    } finally {
      await stopWorker(w);
    }
    assert.deepEqual(charges(dir, 'q-bad'), [], 'the damaged run ran nothing');
    assert.deepEqual(refunds(dir), []);
  });

  describe('host API', () => {
    const saved = process.env.LOGBOOK_STATE_DIR;
    afterEach(() => {
      if (saved === undefined) delete process.env.LOGBOOK_STATE_DIR;
      else process.env.LOGBOOK_STATE_DIR = saved;
    });

    it('resume and compensate reject with LB_JOURNAL_INVALID; the run lists its damage; recoverInterrupted recovers the others', async () => {
      const dir = tmpDir();
      process.env.LOGBOOK_STATE_DIR = dir;
      const { agent } = await loadScript(PRICED);
      interrupted(dir, 'api-step');
      interrupted(dir, 'api-input');
      interrupted(dir, 'api-fine');
      sql(dir, "UPDATE steps SET result = '{not json' WHERE run_id = 'api-step' AND idx = 0");
      sql(dir, "UPDATE runs SET input = '{not json' WHERE id = 'api-input'");
      const before = { step: snapshot(dir, 'api-step'), input: snapshot(dir, 'api-input') };
      const journal = openJournal({ journal: path.join(dir, 'journal.db'), agents: [agent], log: () => undefined });
      try {
        const isJournalInvalid = (err: unknown): boolean => err instanceof LogbookError && err.code === ErrorCodes.JOURNAL_INVALID;
        await assert.rejects(journal.resume('api-step'), (err) => isJournalInvalid(err) && /step #1 "quote", column result/.test((err as Error).message));
        await assert.rejects(journal.resume('api-input'), isJournalInvalid);
        await assert.rejects(journal.compensate('api-input'), isJournalInvalid);
        const summary = journal.run('api-input');
        assert.equal(summary?.input, undefined);
        assert.deepEqual(
          summary?.damaged?.map((d) => d.code),
          [ErrorCodes.JOURNAL_INVALID],
        );
        const recovered = await journal.recoverInterrupted();
        assert.deepEqual(
          recovered
            .map((r) => [
              r.runId,
              r.action,
              r.action === 'failed' && r.error instanceof LogbookError ? r.error.code : r.action === 'resumed' ? r.outcome.status : '',
            ])
            .sort(),
          [
            ['api-fine', 'resumed', 'completed'],
            ['api-input', 'failed', 'LB_JOURNAL_INVALID'],
            ['api-step', 'failed', 'LB_JOURNAL_INVALID'],
          ],
        );
      } finally {
        journal.close();
      }
      assert.equal(snapshot(dir, 'api-step'), before.step);
      assert.equal(snapshot(dir, 'api-input'), before.input);
      assert.deepEqual(refunds(dir), []);
    });
  });
});
