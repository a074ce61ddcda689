// `logbook rehearse <script>`: kill a fresh run at each fault point, resume it in parallel child processes, report invariants.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { loadScript } from '../loader/loadScript';
import type { CommandModule, Io } from '../shared/terminal';
import { cliPath } from './child';
import { drive } from './driver';
import { dropScratch, journalOf, rehearsalDb } from './scratchJournal';
import { requireUsableTarget } from '../runtime/store';
import { maskTarget } from '../shared/journalTarget';
import { SecretMask, urlSecrets } from '../shared/secrets';
import type { RehearsalEvent } from '../shared/rehearsalEvents';
import { readSummary } from './campaignReadout';
import { pointLabel, readTrace, sample } from './points';
import { runPool } from './pool';
import { prober } from './probe';
import { progressBar } from './progress';
import { broken } from './invariants';
import { invariantsBroken, renderReport, summarise, type RehearsalReport } from './report';
import { junitBaselineFailed, junitReport, reproduction } from './junit';
import type { Baseline, CampaignResult, CampaignSetup, Point } from './reportSchema';

export const USAGE =
  'logbook rehearse <script> [--input JSON | --input-file F] [--event NAME=JSON]... [--points all | --point SPEC... | --random N [--seed S]] [--depth K] [--jobs N] [--run-id ID] [--journal postgres://…] [--keep] [--json | --ndjson] [--report F] [--junit F] [--list]';

function usage(problem: string): LogbookError {
  return new LogbookError(ErrorCodes.USAGE, problem, `Usage: ${USAGE}`);
}

function positiveInt(flag: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`--${flag} ${v} is not a positive integer.`);
  return n;
}

function readInput(input: string | undefined, file: string | undefined): unknown {
  if (input !== undefined && file !== undefined) throw usage('Pass either --input or --input-file, not both.');
  let text = input;
  if (file !== undefined) {
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new LogbookError(ErrorCodes.INVALID_INPUT, `Cannot read the input file ${file}: ${describe(err)}.`, 'Check the path.');
    }
  }
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `${file ?? '--input'} is not valid JSON: ${describe(err)}.`,
      `Quote it for the shell, e.g. --input '{"recipients": 5}'.`,
    );
  }
}

/** `--event NAME=JSON`, in order, by name. */
function readEvents(specs: readonly string[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const spec of specs) {
    const i = spec.indexOf('=');
    const name = spec.slice(0, i);
    if (i <= 0) throw usage(`--event ${JSON.stringify(spec)} is not NAME=JSON: write e.g. --event reply='{"text": "yes"}'.`);
    let data: unknown;
    try {
      data = JSON.parse(spec.slice(i + 1)) as unknown;
    } catch (err) {
      throw usage(`--event ${name}: its data is not valid JSON (${describe(err)}); quote it for the shell, e.g. --event ${name}='{"text": "yes"}'.`);
    }
    (out[name] ??= []).push(data);
  }
  return out;
}

interface Options {
  readonly script: string;
  readonly input: unknown;
  readonly random: number | null;
  /** --point: only these crash specs of the uncrashed run (an editor reruns one test). */
  readonly only: readonly string[] | null;
  readonly seed: string;
  readonly depth: number;
  readonly jobs: number;
  readonly runId: string;
  readonly db: string | null;
  readonly keep: boolean;
  readonly json: boolean;
  /** One JSON event a line on stdout as the rehearsal goes (points, each result, the report): for editors and CI. */
  readonly ndjson: boolean;
  readonly report: string | undefined;
  readonly junit: string | undefined;
  /** Only run the uncrashed run and list its fault points. */
  readonly list: boolean;
  /** --event NAME=JSON: what a run waiting in run.waitFor(NAME) is sent, in order. */
  readonly events: Record<string, unknown[]>;
}

function parseOptions(args: string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        input: { type: 'string' },
        'input-file': { type: 'string' },
        points: { type: 'string' },
        point: { type: 'string', multiple: true },
        random: { type: 'string' },
        seed: { type: 'string' },
        depth: { type: 'string' },
        jobs: { type: 'string' },
        'run-id': { type: 'string' },
        journal: { type: 'string' },
        keep: { type: 'boolean' },
        json: { type: 'boolean' },
        ndjson: { type: 'boolean' },
        report: { type: 'string' },
        junit: { type: 'string' },
        list: { type: 'boolean' },
        event: { type: 'string', multiple: true },
      },
    });
  } catch (err) {
    throw usage(describe(err));
  }
  const v = parsed.values;
  if (parsed.positionals.length !== 1) throw usage(`Expected the agent script, got ${parsed.positionals.length ? parsed.positionals.join(' ') : 'nothing'}.`);
  if (v.journal !== undefined) requireUsableTarget(v.journal);
  const db = rehearsalDb(v.journal);
  if (v.journal !== undefined && db === null)
    throw usage(
      `--journal ${maskTarget(v.journal)}: a rehearsal keeps a journal per campaign, in files of its own; --journal takes only a PostgreSQL server (postgres://…), where each campaign gets a schema.`,
    );
  if (db !== null && v.depth !== undefined && Number(v.depth) > 1)
    throw usage(
      "--depth above 1 copies a campaign's journal file before each further kill, which a PostgreSQL schema is not: rehearse with --depth 1 on PostgreSQL, or deeper on SQLite (without --journal).",
    );
  if (v.points !== undefined && v.points !== 'all') throw usage(`--points ${v.points}: only "all" is known; sample with --random N --seed S.`);
  if (v.points !== undefined && v.random !== undefined) throw usage('Pass either --points all or --random N, not both.');
  if (v.point !== undefined && (v.points !== undefined || v.random !== undefined))
    throw usage('--point picks points itself: pass it without --points all or --random N.');
  if (v.seed !== undefined && v.random === undefined && v.depth === undefined) throw usage('--seed only matters with --random N or --depth K.');
  if (v.json === true && v.ndjson === true) throw usage('Pass either --json (one report at the end) or --ndjson (an event a line as it goes), not both.');
  if (v.list === true && v.junit !== undefined) throw usage('--list only lists the fault points: there is no campaign to write as JUnit.');
  const random = v.random === undefined ? null : positiveInt('random', v.random, 1);
  return {
    script: parsed.positionals[0] ?? '',
    input: readInput(v.input, v['input-file']),
    events: readEvents(v.event ?? []),
    random,
    only: v.point ?? null,
    seed: v.seed ?? (random === null ? '0' : randomBytes(4).toString('hex')),
    depth: positiveInt('depth', v.depth, 1),
    jobs: positiveInt('jobs', v.jobs, os.availableParallelism()),
    runId: v['run-id'] ?? 'rehearsal',
    db,
    keep: v.keep === true,
    json: v.json === true,
    ndjson: v.ndjson === true,
    report: v.report,
    junit: v.junit,
    list: v.list === true,
  };
}

/** The uncrashed run ended, but not completed or compensated: the rehearsal fails (exit 1), saying why. */
class BaselineDidNotComplete extends LogbookError {
  constructor(
    script: string,
    readonly status: string,
    readonly runError: { readonly code?: string; readonly message: string } | null,
  ) {
    super(
      ErrorCodes.REHEARSAL_BASELINE,
      `The uncrashed run of ${script} ended ${status}${runError ? `: ${runError.code ? `[${runError.code}] ` : ''}${runError.message}` : ''}. A rehearsal compares crashed runs with an uncrashed run that completes, so nothing was rehearsed.`,
      `Make \`logbook run ${path.relative(process.cwd(), script) || script}\` complete first (same --input, same working directory).`,
      { status, error: runError },
    );
  }
}

async function runBaseline(
  cli: string,
  o: Options,
  script: string,
  root: string,
  probe: (dir: string) => ReturnType<ReturnType<typeof prober>>,
): Promise<{ baseline: Baseline; points: Point[] }> {
  const started = performance.now();
  const dir = path.join(root, 'uncrashed');
  fs.mkdirSync(dir, { recursive: true });
  const traces: string[] = [];
  const d = await drive({
    cli,
    script,
    input: o.input,
    events: o.events,
    runId: o.runId,
    dir,
    db: o.db,
    probe: () => probe(dir),
    traceFile: (ctx) => {
      const f = path.join(root, `trace-${ctx.index}.jsonl`);
      traces[ctx.index] = f;
      return f;
    },
  });
  const s = readSummary(journalOf(dir, o.db), o.runId);
  if (d.error || !s) {
    throw new LogbookError(
      ErrorCodes.REHEARSAL_BASELINE,
      `The uncrashed run of ${script} did not finish, so there is nothing to compare crashed runs with: ${d.error ?? 'no run was journaled'}.`,
      `Make \`logbook run ${path.relative(process.cwd(), script) || script}\` work first (same --input).`,
    );
  }
  if (s.status !== 'completed' && s.status !== 'compensated') {
    // A failing uncrashed run proves nothing about resumes: every crashed run "ending like it" would pass.
    throw new BaselineDidNotComplete(script, s.status, s.error ?? null);
  }
  const points = traces.flatMap((f, i) => (f ? readTrace(f, i) : []));
  const baseline: Baseline = {
    status: s.status,
    output: s.output,
    probe: (await probe(dir))?.keys ?? null,
    processes: d.processes,
    steps: s.steps,
    actions: s.actions.length,
    approvals: d.approvals,
    ms: performance.now() - started,
  };
  return { baseline, points };
}

export async function rehearse(args: string[], io: Io): Promise<number> {
  const o = parseOptions(args);
  // The files it writes are output as the CLI's lines are: a script's error quoting a key would reach a CI page.
  const secrets = SecretMask.ofEnv(process.env, o.db ? urlSecrets(o.db) : []);
  const writeOut = (file: string, render: () => string): void => fs.writeFileSync(file, secrets.text(render()));
  const started = performance.now();
  const emit = (e: RehearsalEvent): void => {
    if (o.ndjson) io.out(JSON.stringify(e));
  };
  const cli = cliPath();
  const loaded = await loadScript(o.script);
  const probe = prober(loaded.agent);
  const savedStateDir = process.env.LOGBOOK_STATE_DIR;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-rehearse-'));
  // Ctrl-C reaches the children and their runs too (same process group); leave no scratch files behind.
  const interrupted = (): void => {
    if (!o.keep) fs.rmSync(root, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    const tty = !o.json && !o.ndjson && process.stderr.isTTY === true;
    if (tty) process.stderr.write('  running the script once, uncrashed, to learn its fault points…');
    let ran: Awaited<ReturnType<typeof runBaseline>>;
    try {
      ran = await runBaseline(cli, o, loaded.path, root, probe);
    } catch (err) {
      // Both ways the uncrashed run can fail are written where the rehearsal's report would go.
      if (!(err instanceof LogbookError) || err.code !== ErrorCodes.REHEARSAL_BASELINE) throw err;
      if (tty) process.stderr.write('\r\u001b[K');
      const status = err instanceof BaselineDidNotComplete ? err.status : null;
      const failed = {
        script: loaded.path,
        agent: loaded.agent.name,
        input: o.input,
        ok: false,
        baseline: { status, error: err instanceof BaselineDidNotComplete ? err.runError : null },
        error: err.toJSON(),
      };
      if (o.report && err instanceof BaselineDidNotComplete) writeOut(o.report, () => `${JSON.stringify(secrets.deep(failed), null, 2)}\n`);
      if (o.junit)
        writeOut(o.junit, () =>
          junitBaselineFailed(
            secrets.deep({ script: loaded.path, agent: loaded.agent.name, input: o.input, message: err.message, ms: performance.now() - started }),
          ),
        );
      emit({ event: 'baseline-failed', script: loaded.path, agent: loaded.agent.name, status, error: err.toJSON() });
      // A run that never finished keeps its exit code (2, from the error); one that ended otherwise fails the rehearsal.
      if (!(err instanceof BaselineDidNotComplete)) throw err;
      if (o.json) io.out(JSON.stringify(failed, null, 2));
      io.err(`error [${err.code}] ${err.message}`);
      return 1;
    }
    const { baseline, points: available } = ran;
    if (tty) process.stderr.write('\r\u001b[K');
    const missing = (o.only ?? []).filter((spec) => !available.some((p) => p.spec === spec));
    if (missing.length) {
      throw usage(
        `--point ${missing.join(', ')}: the uncrashed run never passed ${missing.length === 1 ? 'this point' : 'these points'}. Its points are: ${available.map((p) => p.spec).join(', ')}.`,
      );
    }
    const points = o.only !== null ? available.filter((p) => o.only?.includes(p.spec)) : o.random === null ? available : sample(available, o.random, o.seed);
    emit({ event: 'points', script: loaded.path, agent: loaded.agent.name, baseline, available, selected: points });
    if (o.list) {
      if (o.json) io.out(JSON.stringify({ script: loaded.path, agent: loaded.agent.name, baseline, available, selected: points }, null, 2));
      else if (!o.ndjson) for (const p of points) io.out(pointLabel(p));
      return 0;
    }
    const setup: CampaignSetup = {
      cli,
      script: loaded.path,
      input: o.input,
      runId: o.runId,
      root,
      depth: o.depth,
      seed: o.seed,
      keep: o.keep,
      db: o.db,
      baseline,
      ...(Object.keys(o.events).length ? { events: o.events } : {}),
    };
    const progress = progressBar(points.length, o.json || o.ndjson ? ({ isTTY: false } as NodeJS.WriteStream) : process.stderr);
    let done = 0;
    let bad = 0;
    progress.tick(0, 0);
    const campaigns: CampaignResult[] = await runPool({
      jobs: o.jobs,
      setup,
      points,
      onResult: (r) => {
        done++;
        const isBroken = broken(r);
        if (isBroken) bad++;
        progress.tick(done, bad);
        emit({
          event: 'result',
          result: r,
          broken: isBroken,
          messages: isBroken ? invariantsBroken(r) : [],
          reproduction: isBroken ? reproduction(r, loaded.path) : [],
        });
      },
    });
    progress.end();
    const summary = summarise(campaigns);
    const report: RehearsalReport = {
      script: loaded.path,
      agent: loaded.agent.name,
      input: o.input,
      selection: { mode: o.random === null ? 'all' : 'random', requested: o.random, seed: o.seed, available: available.length },
      depth: o.depth,
      jobs: Math.max(1, Math.min(o.jobs, points.length)),
      baseline,
      campaigns,
      summary,
      ok: summary.broken === 0,
      ms: performance.now() - started,
    };
    if (o.report) writeOut(o.report, () => `${JSON.stringify(secrets.deep(report), null, 2)}\n`);
    if (o.junit) writeOut(o.junit, () => junitReport(secrets.deep(report)));
    if (o.ndjson) emit({ event: 'report', report });
    else io.out(o.json ? JSON.stringify(report, null, 2) : renderReport(report));
    if (o.keep && !o.json && !o.ndjson) io.out(`  scratch kept   ${root}`);
    return report.ok ? 0 : 1;
  } finally {
    process.removeListener('SIGINT', interrupted);
    if (savedStateDir === undefined) delete process.env.LOGBOOK_STATE_DIR;
    else process.env.LOGBOOK_STATE_DIR = savedStateDir;
    if (!o.keep) {
      fs.rmSync(root, { recursive: true, force: true });
      dropScratch(root, o.db);
    }
  }
}

export const rehearseCommand: CommandModule = { name: 'rehearse', usage: USAGE, run: rehearse };
