// The benchmark end to end in its tiny configuration (structure, never timings), and its synthetic journals against
// the journal the engine itself writes for the same agent.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, resumeRun, startRun } from '../../src/runtime';
import { buildJournal } from '../../bench/journalBuilder';
import { journalAgent, probe } from '../../bench/journalAgent';
import { actionAgent, journaledSend } from '../../bench/workload';
import { parseStraceSummary } from '../../bench/children';
import { countKills, parseVscodeMeasures } from '../../bench/featureRows';
import { formatMarkdown, judge } from '../../bench/report';
import { maskNumbers, reportOf } from '../../bench/readBack';
import { summarise, type Summary } from '../../src/rehearse/report';
import { ROOT, tmpDir } from '../helpers';

type Rows = Array<Record<string, unknown>>;

function dump(file: string, runId: string): { steps: Rows; actions: Rows; events: Rows; fold: { past: number; toFold: number } } {
  const db = new Database(file, { readonly: true });
  try {
    const steps = db.prepare('SELECT idx, name, status, result, error, attempt FROM steps WHERE run_id = ? ORDER BY idx').all(runId) as Rows;
    const actions = db
      .prepare(
        'SELECT id, seq, step_idx, type, version, effect, args, status, result, error, executions, reconciliation, decision, approval, attempt, commit_seq FROM actions WHERE run_id = ? ORDER BY seq',
      )
      .all(runId) as Rows;
    const events = db
      .prepare("SELECT seq, kind, step_idx, action_id, data FROM events WHERE run_id = ? AND kind NOT LIKE 'run.%' ORDER BY seq")
      .all(runId) as Rows;
    // Event seqs are global to the file: compare them relative to the run's first step event.
    const first = (events[0]?.seq as number) ?? 0;
    // Format 2's watermark: the run's events past it (each read of the run searches them for a write to fold), and those
    // that carry one.
    const fold = db
      .prepare('SELECT COUNT(e.seq) AS past, COUNT(e.fold) AS toFold FROM runs r LEFT JOIN events e ON e.run_id = r.id AND e.seq > r.folded_seq WHERE r.id = ?')
      .get(runId) as { past: number; toFold: number };
    return {
      fold,
      steps,
      actions: actions.map((a) => ({ ...a, commit_seq: (a.commit_seq as number) - first })),
      events: events.map((e) => ({ ...e, seq: (e.seq as number) - first })),
    };
  } finally {
    db.close();
  }
}

describe('bench: synthetic journals', () => {
  it('writes the same steps, actions and events as the engine for the same agent', async () => {
    const dir = tmpDir('logbook-bench-eq-');
    const engineDb = path.join(dir, 'engine.db');
    const store = openStore(engineDb);
    probe.at = -1;
    const outcome = await startRun(store, journalAgent, {
      script: 'bench/journalAgent.ts',
      input: { steps: 4, perStep: 3 },
      runId: 'same',
      log: () => undefined,
    });
    store.close();
    assert.equal(outcome.status, 'completed');
    const synthDb = path.join(dir, 'synthetic.db');
    buildJournal(synthDb, { runId: 'same', done: 12, perStep: 3, steps: 4 });
    const a = dump(engineDb, 'same');
    const b = dump(synthDb, 'same');
    assert.equal(a.steps.length, 4);
    assert.equal(a.actions.length, 12);
    assert.deepEqual(b.steps, a.steps);
    assert.deepEqual(b.actions, a.actions);
    assert.deepEqual(b.events, a.events);
    // Its rows folded as the engine leaves them: nothing to fold, and no more events past the watermark than the engine's.
    assert.equal(a.fold.toFold, 0);
    assert.equal(b.fold.toFold, 0);
    assert.ok(b.fold.past <= a.fold.past, `synthetic: ${b.fold.past} events past the watermark, engine: ${a.fold.past}`);
  });

  it("gives the raw-SQL baselines the bench action's rows as the engine journals them, byte for byte", async () => {
    const file = path.join(tmpDir('logbook-bench-raw-'), 'engine.db');
    const store = openStore(file);
    const outcome = await startRun(store, actionAgent('non-idempotent', 3, [], []), { script: 'bench/workload.ts', input: {}, log: () => undefined });
    store.close();
    assert.equal(outcome.status, 'completed');
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare('SELECT id, args, result FROM actions WHERE run_id = ? ORDER BY seq').all(outcome.runId);
      assert.deepEqual(
        rows,
        [0, 1, 2].map((i) => ({ ...journaledSend(outcome.runId, i) })),
      );
    } finally {
      db.close();
    }
  });

  it('leaves an unfinished step whose committed actions a resume skips and whose new ones it runs', async () => {
    const dir = tmpDir('logbook-bench-open-');
    const file = path.join(dir, 'j.db');
    const built = buildJournal(file, { runId: 'open', done: 7, perStep: 3, steps: 4 });
    assert.equal(built.steps, 3, 'two completed steps and the unfinished third');
    const store = openStore(file);
    probe.at = -1;
    probe.executed = 0;
    const outcome = await resumeRun(store, journalAgent, 'open', { log: () => undefined });
    const actions = store.reader.actionCount('open');
    store.close();
    assert.equal(outcome.status, 'completed', outcome.error?.message);
    assert.equal(outcome.stats.stepsReplayed, 2);
    assert.equal(outcome.stats.actionsSkipped, 1, 'the unfinished step has one committed action');
    assert.equal(probe.executed, 12 - 7, 'only the actions the journal lacks ran');
    assert.equal(actions, 12);
  });
});

describe('bench: helpers', () => {
  it('reads syscall counts from strace -c output', () => {
    const text = [
      '% time     seconds  usecs/call     calls    errors syscall',
      '------ ----------- ----------- --------- --------- ----------------',
      ' 90.00    0.001000         100        10           fsync',
      ' 10.00    0.000100          10        10         2 openat',
      '------ ----------- ----------- --------- --------- ----------------',
      '100.00    0.001100          55        20         2 total',
    ].join('\n');
    assert.deepEqual(parseStraceSummary(text), { fsync: 10, openat: 10 });
  });

  it('reads the count of kills from the summary `logbook rehearse --json` writes, and nothing else', () => {
    // The summary the rehearsal itself builds (rehearse/report.ts), not a hand-made look-alike.
    const summary: Summary = summarise([]);
    assert.equal(countKills({ summary }), 0);
    assert.equal(countKills({ summary: { ...summary, points: 14, kills: 16 }, campaigns: [] }), 16);
    assert.equal(countKills({ summary: { ...summary, kills: Number.NaN } }), undefined);
    assert.equal(countKills({ points: 14 }), undefined, 'points are not kills (--depth kills more than once per point)');
    assert.equal(countKills(null), undefined);
  });

  it("reads the VS Code benchmark's measure lines", () => {
    const text = [
      '    [measure] activate(): 42.1 ms (extension host, Node 20.18.0); activated at startup: true',
      '    [measure] tree root for 10001 runs (cold reader, first page of 100 + "load more"): 120.5 ms',
      '    [measure] tree root again (warm): 3.0 ms',
      '    [measure] open a run of 100000 steps (first page 100 + "load more"): 33.2 ms',
    ].join('\n');
    assert.deepEqual(parseVscodeMeasures(text), { activationMs: 42.1, treeRuns: 10001, treeRootMs: 120.5, openRunSteps: 100000, openRunMs: 33.2 });
    assert.deepEqual(parseVscodeMeasures('nothing here'), {});
  });

  it('judges a figure against its budget and says how far off a miss is', () => {
    assert.deepEqual(judge(4, 5), { verdict: 'PASS' });
    assert.deepEqual(judge(6, 5), { verdict: 'FAIL', miss: '20% over budget' });
    assert.equal(judge(Number.NaN, 5).verdict, 'error');
  });
});

describe('bench: npm run bench, tiny configuration', function () {
  this.timeout(240_000);

  let dir = '';
  afterEach(() => {
    // Its journals are a few megabytes; nothing in them is needed once the assertions ran.
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the table, writes the Markdown and JSON reports with every row, and exits 0 without --check', () => {
    dir = tmpDir('logbook-bench-smoke-');
    const md = path.join(dir, 'BENCHMARKS.md');
    const json = path.join(dir, 'bench.json');
    const r = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--require',
        path.join(ROOT, 'bench', 'register.cjs'),
        path.join(ROOT, 'bench', 'run.ts'),
        '--quick',
        '--out',
        md,
        '--json',
        json,
        '--dir',
        path.join(dir, 'work'),
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 220_000,
      },
    );
    assert.equal(r.status, 0, `bench exited ${r.status}: ${r.stderr.slice(-2000)}`);
    assert.match(r.stdout, /non-idempotent action, full engine/);
    assert.match(r.stdout, /F = .* \(fsync floor, same directory\)/);

    const report = JSON.parse(fs.readFileSync(json, 'utf8'));
    assert.equal(report.config, 'quick');
    assert.ok(report.rounds >= 1);
    for (const k of ['cpu', 'cores', 'memGiB', 'node', 'sqlite', 'date']) assert.ok(report.machine[k], `machine.${k}`);
    assert.match(report.machine.sqlite, /^3\.\d+\.\d+$/);
    assert.ok(report.baselines.fUs > 0 && Number.isFinite(report.baselines.fUs));
    assert.ok(report.baselines.plainUs > 0);

    const ids = (report.rows as Array<{ id: string }>).map((x) => x.id);
    for (const id of [
      'action.full',
      'action.group',
      'action.readOnly',
      'checkpoint.1024',
      'checkpoint.102400',
      'checkpoint.1048576',
      'replay.step',
      'replay.action',
      'resume.300',
      'resume.1000',
      'resume.3000',
      'resume.memory',
      'ai.model',
      'ai.tool',
      'rehearse.throughput',
      'dap.next',
      'dap.overhead',
      'ext.activation',
      'ext.sidebar',
      'ext.firstPage',
      'peer',
    ]) {
      assert.ok(ids.includes(id), `row ${id} is missing (have ${ids.join(', ')})`);
    }
    // PostgreSQL rows, or the one row that says the binaries are missing.
    assert.ok(
      ids.includes('pg') || ['pg.floor', 'pg.action', 'pg.step', 'pg.claim', 'pg.workers', 'pg.dbos'].every((id) => ids.includes(id)),
      `PostgreSQL rows: have ${ids.join(', ')}`,
    );
    for (const row of report.rows as Array<{ id: string; verdict: string; budget: string; value: string; numbers?: Record<string, number> }>) {
      // 'error' means the row's benchmark threw: never acceptable. 'not built' only where its prerequisite is absent.
      assert.ok(['PASS', 'FAIL', 'info', 'not built'].includes(row.verdict), `${row.id}: verdict ${row.verdict} (${(row as { note?: string }).note ?? ''})`);
      assert.ok(row.budget.length > 0 && row.value.length > 0, row.id);
      if (
        row.id.startsWith('action.') ||
        row.id.startsWith('ai.') ||
        row.id.startsWith('checkpoint.') ||
        row.id.startsWith('replay.') ||
        /^resume\.\d+$/.test(row.id)
      ) {
        assert.ok(row.verdict === 'PASS' || row.verdict === 'FAIL', `${row.id} is built here and must be judged, got ${row.verdict}`);
        assert.ok(row.numbers && Object.values(row.numbers).every((n) => Number.isFinite(n)), `${row.id} has finite numbers`);
      }
    }
    const memory = (report.rows as Array<{ id: string; numbers: Record<string, number> }>).find((x) => x.id === 'resume.memory');
    assert.ok(memory && (memory.numbers.largestKb ?? 0) > 0 && (memory.numbers.smallestKb ?? 0) > 0);

    const text = fs.readFileSync(md, 'utf8');
    for (const heading of ['# Benchmarks', '## Machine', '## Baselines (same run)', '## Figures', '## Journal builds'])
      assert.ok(text.includes(heading), heading);
    assert.match(text, /\| SQLite \| 3\.\d+\.\d+/);
    assert.match(text, /\| Node \| v\d+/);
    assert.match(text, /\| non-idempotent action, full engine/);
    // The Markdown has one table line per row of the JSON report, with the same verdict.
    const lines = text.split('\n');
    for (const row of report.rows as Array<{ id: string; figure: string; verdict: string }>) {
      const line = lines.find((l) => l.startsWith(`| \`${row.id}\` | ${row.figure.replace(/\|/g, '\\|')} |`));
      assert.ok(line, `no Markdown line for ${row.figure}`);
      assert.ok(line.includes(row.verdict), `${row.figure}: ${line}`);
    }
    // What test/unit/benchmarks-md.test.ts checks of the committed file holds for a fresh one: all of it is read back.
    assert.equal(maskNumbers(text), maskNumbers(formatMarkdown(reportOf(text), [])));
  });
});
