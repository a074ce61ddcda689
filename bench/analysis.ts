// The Notes of BENCHMARKS.md: how the figures were taken, and for each missed budget by how much and why, in this
// run's own numbers (the "why" comes from profiling the runtime; see the bench's report in the branch history).

import { fmtUs } from './measure';
import type { Row } from './report';

export interface Context {
  readonly F: number;
  readonly S: number;
  readonly T: number;
  readonly rows: readonly Row[];
  /** WAL pages written per action, by row kind (full, group, readOnly), from strace. */
  readonly pages: Readonly<Record<string, number>>;
}

/** Everything the Notes section says, from this run's figures: how they were taken, why a budget was missed, what
 *  the PostgreSQL rows mean. bench/run.ts writes it; test/unit/benchmarks-md.test.ts renders it again to check
 *  BENCHMARKS.md holds nothing else. */
export function reportNotes(ctx: Context & { readonly cores: number }): string[] {
  return [...methodNotes(ctx.F), ...whyMissed(ctx), ...pgNotes(ctx.rows, ctx.cores)];
}

const num = (rows: readonly Row[], id: string, key: string): number => rows.find((r) => r.id === id)?.numbers?.[key] ?? Number.NaN;

export function methodNotes(F: number): string[] {
  return [
    `Ratios against F use the F of the same round (F is sampled between every two probes); the median of the per-round ratios is shown. F here is ${fmtUs(F)}. Garbage is collected between probes (node --expose-gc), so no probe pays for another's.`,
    "Action figures time `await run.do(...)` as the script sees it: args validation, key, journal lookup, the bracket's writes (each a fenced immediate transaction), the effect, and the result's JSON check. The step around them is not counted.",
    'Checkpoint figures time `await run.step(name, () => state)`: the step row, the JSON-safety walk of the state, its serialisation, and the durable commit.',
    'Resume figures resume a synthetic journal in a fresh process (cold JIT, cold SQLite cache, warm OS page cache), from `resumeRun` to the script attempting its first new action. Replay figures are the marginal cost per journaled item between two such resumes of different sizes, so the fixed cost of a resume and the JIT warm-up drop out.',
    'Verdicts: rows bound by the disk (actions, checkpoints) are judged on wall time, against the F of the same round. Rows bound by the CPU (replay, resume, the read-only overhead) are judged on the CPU time the process used over the same interval, shown next to the wall time: on a shared machine wall time also counts the time spent waiting for a core, which says nothing about Logbook. The load average in the machine table says how shared the machine was.',
  ];
}

/** One sentence per missed budget: how far off, and why, with this run's figures. */
export function whyMissed(ctx: Context): string[] {
  const out: string[] = [];
  for (const r of ctx.rows) {
    if (r.verdict !== 'FAIL') continue;
    const head = `**${r.figure}**: ${r.value} against ${r.budget} (${r.note?.split(';')[0] ?? ''}).`;
    out.push(`${head} ${reason(r, ctx)}`.trim());
  }
  return out;
}

/** Splits an action figure into SQLite's part (baseline B: the same writes in raw SQL) and the runtime's. */
function bracketSplit(ctx: Context, key: string, id: string): string {
  const r = ctx.rows.find((x) => x.id === id);
  const us = r?.numbers?.us ?? Number.NaN;
  const b = r?.numbers?.bracketUs ?? Number.NaN;
  const bf = r?.numbers?.bracketRatioF ?? Number.NaN;
  const pages = ctx.pages[key];
  const pageText =
    pages !== undefined && Number.isFinite(pages)
      ? `, which write ~${pages.toFixed(0)} WAL pages per action (in each transaction the events, which carry their writes, and their index entries; every 16 brackets a lazy transaction folds the writes into the action rows and their three indexes)`
      : '';
  return ` SQLite alone, making the bracket's same writes in raw SQL on the same schema (baseline B: format 2's two transactions and its fold every 16 brackets), costs ${bf.toFixed(2)} F here${pageText}; Logbook's code adds ${fmtUs(Math.max(0, us - b))} (args validation, key, the journal lookup, JSON checks, and the same work slowed after each fsync). SQLite's one-row durable commit is S = ${(ctx.S / ctx.F).toFixed(2)} F.`;
}

function reason(r: Row, ctx: Context): string {
  const { F, rows } = ctx;
  const id = r.id;
  if (id === 'action.full') {
    const b = num(rows, id, 'bracketRatioF');
    const v2 = num(rows, id, 'v2RatioF');
    return `Two fsyncs per action, as designed.${bracketSplit(ctx, 'full', id)} Format 2's final writes (one append-only row per transition in a table clustered by run, no secondary index: not built) cost ${v2.toFixed(2)} F in raw SQL here. So whichever of the two formats, SQLite alone leaves at most ${fmtUs(Math.max(0, (3 - Math.min(b, v2)) * F))} of the 3 F budget for all the engine does per action besides its writes: the args validated by the action's schema and serialised, the key, its lookup in the journal, the result's JSON check, the bodies of two fenced transactions. That work takes about 20 µs of CPU on a warm CPU (tmpfs, one process), and the same code about three times as long right after each fsync on this disk (docs/journal-format.md, *Status*): it does not fit in what is left.`;
  }
  if (id === 'ai.tool') {
    const b = num(rows, id, 'bracketRatioF');
    const v2 = num(rows, id, 'v2RatioF');
    return `A tool the model calls runs as a run.do of its action (logbookTools), bracketed as action.full is: \`started\` durable before the tool's execute, \`committed\` durable after it. Its floor is action.full's: SQLite alone with the bracket's writes costs ${b.toFixed(2)} F here (format 2's final writes ${v2.toFixed(2)} F), against the same 3 F; why the engine's share above those writes cannot go is said there. The integration adds the tool call's own work on top: the model's input validated by the tool's schema, the key from the tool call's id, and the result encoded for the journal and decoded for the model.`;
  }
  if (id === 'action.group') {
    return `One fsync per action, as designed.${bracketSplit(ctx, 'group', id)} Format 2's final writes (one append-only row per transition in a table clustered by run, no secondary index, the state folded off the hot path) cost ${num(rows, id, 'v2RatioF').toFixed(2)} F in raw SQL here: above 1.3 F before any code runs, because a durable commit on this disk costs S = ${(ctx.S / F).toFixed(2)} F and a bracket makes at least one plus the lazy commit before it.`;
  }
  if (id === 'ai.model') {
    const over = num(rows, id, 'us') - num(rows, id, 'bareUs');
    const b = num(rows, id, 'bracketUs');
    const after = num(rows, id, 'bracketAfterCallUs');
    // As a ratio of the same rounds' F, the figure the row's note shows.
    const floorAfterF = num(rows, id, 'floorAfterCallF');
    return `One transaction per call, durable, as designed: the call's \`started\` and "executing" are held and written in the commit of its result (a call slower than 50 ms shows up as started in a lazy commit of its own). That transaction alone, in raw SQL on the journal's schema (format 2: the three events, which carry their writes, and their index entries; the fold every 16 calls), costs ${(b / F).toFixed(2)} F here back to back, where S writes one row. Made as the engine makes it, each right after a bare generateText call, the same raw transaction costs ${(after / F).toFixed(2)} F: the call's work between two commits (its allocations and promises) leaves the next commit slower on this machine, with or without Logbook. The disk alone shows it: F's own 4 KiB overwrite + fsync, no SQLite, each right after a bare call, costs ${floorAfterF.toFixed(2)} F (F is measured back to back), to set against the budget's 1.5 F above the call. The rest, ${fmtUs(Math.max(0, over - after))}, is what the runtime and the integration add: the fingerprint of the prompt (encode, sorted keys), args validation and the JSON check, the journal lookup of the call's key, encoding and decoding the result, and the same slowdown of that work after each fsync. Format 2's final writes (one append-only row per transition, no secondary index) take the transaction's own pages down to one row's (the row's note gives its raw cost back to back); what the disk charges a commit in the call's place stays with any format.`;
  }
  if (id === 'action.readOnly') {
    return `No fsync, as required, and no transaction of its own: the record is written behind, inside the run's next transaction (or within 50 ms, or once 64 wait). What is left is the work every action does before it runs: args validation, the key, the lookup of that key in the journal (a primary-key read, so that a key used before in the run returns its journaled result), the JSON check of the result, and the share of a batched commit.`;
  }
  if (id === 'checkpoint.1024') {
    const us = num(rows, id, 'us');
    const b = num(rows, id, 'bracketUs');
    return `A checkpoint is one durable transaction (the step's start is written behind into it): its floor is S = ${(ctx.S / F).toFixed(2)} F, SQLite's own one-row durable commit on this disk, and the figure is ${(us / ctx.S).toFixed(2)} S: the transaction writes the two events (which carry the step's writes, the state after them as it is) and their index entries where S writes one row, and every 24 steps a lazy transaction folds them into the step rows. The same writes in raw SQL, back to back, cost ${(b / F).toFixed(2)} F here. The budget leaves ${fmtUs(Math.max(0, 1.5 * F - ctx.S))} above SQLite's floor for everything else. Profiled alone (2,000 steps of 1 KB), the time is inside SQLite's transaction (its statements, WAL writes and the fsync) for nearly all of it, and in the runtime's JavaScript for under a tenth; the same probe moves between about 2.5 F and 4 F from one run to the next on this machine, with the kernel time of the fsync.`;
  }
  if (id === 'dap.overhead' || id === 'dap.overhead.long') {
    const fixed = num(rows, id, 'fixedMs');
    const marginal = num(rows, id, 'marginal');
    const alone = num(rows, id, 'aloneMs');
    const floor = num(rows, id, 'floor');
    return `Most of the difference is fixed: the debugger starts two processes where the CLI starts one (the adapter, on the configured Node as the design requires, then the runner), and speaks DAP before the run begins, ${fixed.toFixed(0)} ms here. The adapter's process alone, spawned and answering \`initialize\` with no run, takes ${alone.toFixed(0)} ms in the same run: added to the CLI's run, that alone is ${floor.toFixed(2)}× the CLI's time, against a budget of 1.1×. Beyond the start, each unit of work costs ${marginal.toFixed(2)}× the CLI's: the hooks at every boundary, and the source line of each step and action, which the debugger shows in its frames and matches against line breakpoints. V8 gives a caller's position only through a stack capture: the one frame below the run object's method the script called, about 8 µs a call in a run on this machine, then its source-map lookup. Profiled in the runner on this disk (1,000 recipients, 2026-12-05), a recipient's step and action cost it about 32 µs of CPU for their two captures and 27 µs for their boundaries (the runtime's events and the runner's queue and stop policy), beside the 1.8 ms the CLI spends on the same recipient. On a short run the fixed part dominates the ratio.`;
  }
  if (id.startsWith('checkpoint.')) {
    const us = num(rows, id, 'us');
    const cpu = num(rows, id, 'cpuUs');
    const disk =
      F <= 300
        ? `this run's F is ${(300 / F).toFixed(1)}× faster than the issue's 0.3 ms, which shrinks only the fsync's share`
        : `this run's F is ${(F / 300).toFixed(1)}× slower than the issue's 0.3 ms`;
    return `${fmtUs(cpu)} of the ${fmtUs(us)} is CPU time, user and kernel: SQLite copying the text into overflow pages and writing them to the WAL (about 250 pages per MB, two write calls each), and the WAL checkpoints that copy them on into the database every 1,000 pages; the runtime's serialisation and JSON-safety check take about 1.5 ms of it. SQLite alone, inserting the same 1 MB durably in a bare table, measured 15–22 ms on this machine. The budget is in milliseconds; ${disk}.`;
  }
  if (id === 'replay.step') {
    return "Per step, replay reads the step's row back (up to 512 at a time), checks it, parses its checkpoint and returns it to the script, whose own loop and `await` are part of the figure. The CPU time of the same work moves 2–3× with the load of this shared machine (compare the plain call's wall time with a quiet machine's ~0.1 µs).";
  }
  if (id === 'replay.action') {
    const cpu = num(rows, id, 'cpuUs');
    const reads = num(rows, id, 'readsCpuUs');
    const check = num(rows, id, 'checkCpuUs');
    // Always worded: read back from BENCHMARKS.md the numbers are NaN, and the sentence must render the same.
    const split = ` Of the ${fmtUs(cpu)} of CPU per action, two parts are measured alone in the same run, each the same slope in fresh processes. The journal's reads take ${fmtUs(reads)}: the damage check, which tests every journaled value of the unfinished step with SQLite's json_valid before the resume writes anything, and the step's rows, read a page at a time through actions_by_step (run_id, step_idx, seq), one table lookup per row. The script's loop with each action's determinism check, and no journal, takes ${fmtUs(check)}: its args validated by the action's schema and serialised, its key derived, both compared with the row's, its result parsed and awaited. Together ${fmtUs(reads + check)}, against the ${fmtUs(cpu)} of the whole: measured apart, each in a process of its own, the two parts cost about what the skip does (their sum can come out above it, as each process's compiler warms up on its own), so what is left to the runtime's own code is the row's lookup in the step's window and the in-flight and status checks.`;
    return `A skipped action is more than a lookup: it must read the journal's row, and check that the script asks for the same effect the journal holds before it returns the journaled result.${split} The damage check has to come before the resume writes anything (it is what keeps a damaged row from being taken for the script's failure), and the determinism check before each skip (it is what keeps a changed script from skipping an effect it no longer asks for). What would make the reads cheaper is format v2's clustered entries (docs/journal-format.md), which lay a step's rows side by side in the key's order instead of behind an index.`;
  }
  if (/^resume\.\d+$/.test(id)) {
    const per = rows.filter((x) => /^resume\.\d+$/.test(x.id)).map((x) => x.numbers?.perActionCpuUs ?? Number.NaN);
    const sizes = rows.filter((x) => /^resume\.\d+$/.test(x.id)).map((x) => Number(x.id.slice('resume.'.length)));
    const falls = `The cost per action falls with size (${per.map((x) => `${x.toFixed(1)} µs`).join(', ')} from the smallest journal to the largest): a fresh process runs its first thousands of steps in V8's interpreter before the optimising compiler takes over, and the resume of an empty run alone costs the figure given in the note.`;
    if (Number(id.slice('resume.'.length)) !== Math.max(...sizes)) return falls;
    const reads = num(rows, id, 'readsCpuUs');
    return `${falls} The journal's reads alone, in a fresh process with no script and no engine, take ${fmtUs(reads)} of CPU in the same run: the damage check (every journaled value tested with json_valid before the resume writes anything, so that a damaged row is never taken for the script's failure) and each step's header, read 512 at a time. A script is code, not a graph: to reach its millionth step a resume runs it from its start and hands each journaled step its checkpoint back, so every step is read, where LangGraph loads only its latest checkpoint (the peer rows compare the two at 100 steps).`;
  }
  if (id.startsWith('ext.')) {
    return "Measured once per start of code-server, in its real extension host: a first request is cold only once, so this row is a single sample rather than a median of rounds, and it moves with the load of the machine (the extension host, the browser and the reader process all start together on two cores). The reader's own queries for it take a few milliseconds.";
  }
  if (id === 'resume.memory') {
    return 'Retained memory grew with the journal: something held per step survives a full GC.';
  }
  return '';
}

/** What the PostgreSQL rows mean, and why the bracket costs what it does next to a DBOS step. The measurements behind
 *  these sentences (before and after one-request transactions) are in docs/storage.md. */
export function pgNotes(rows: readonly Row[], cores: number): string[] {
  // A row that could not be measured has no numbers, and says why itself.
  const n = (id: string, key: string): number | undefined => rows.find((r) => r.id === id && r.verdict !== 'error')?.numbers?.[key];
  const action = n('pg.action', 'us');
  // Measured (with --peers) when it has a verdict; otherwise the row says how to run it.
  const dbos = rows.find((r) => r.id === 'pg.dbos' && (r.verdict === 'PASS' || r.verdict === 'FAIL'));
  if (action === undefined) return [];
  const notes = [
    "**PostgreSQL rows**: a private server on this machine (scripts/pg-server.mjs, fsync=on), the runtime in-process through PgDb (the pg client on a worker thread, the caller blocked on its answer). Fpg is a 4 KiB write + fsync in the server's data directory; the server's own commit also writes and flushes its WAL and wakes a backend process, so on a loaded 2-core machine a commit costs several Fpg.",
    '**Why a bracketed action costs more than a DBOS step**: a DBOS step records its output once, after it ran (one INSERT in autocommit: one round trip, one WAL flush); nothing durable says it started, so a crash inside it re-runs it. Our bracket makes `started` durable before the effect and `committed` after it (two WAL flushes); the count of the call goes in with `committed`, so nothing records an execution before it happens: two journal transactions per action. Each is one request to the pg worker thread and one round trip to the server (the transaction sent as one query, its fence a function that raises when the lease is not held).',
  ];
  if (dbos) {
    notes.push(
      `**The goal (a bracket no dearer than a DBOS step) is ${dbos.verdict === 'PASS' ? 'met' : 'not met'} here** (${fmtUs(action)} vs ${fmtUs(dbos.numbers?.dbosUs ?? Number.NaN)}). What is left is what each transaction writes: the action row and its index entries, an event row and its index entry, and the fence's lease renewal (format 2's one fence-and-append statement per transition; the row's note gives PostgreSQL alone with those writes).`,
    );
  }
  const claim = n('pg.claim', 'us');
  if (claim !== undefined) {
    notes.push(
      `**Recovery**: once a run's lease has expired (\`$LOGBOOK_LEASE_TTL_MS\`, 30 s by default), a worker takes it in one transaction and reaches the action the crash interrupted in ${fmtUs(claim)} (the claim, a lease with a new epoch, the replay of 3 steps, the reconciliation). A worker finds such a run within its poll interval (\`--poll-ms\`, 500 ms by default).`,
    );
  }
  const workers = n('pg.workers', 'runsPerS');
  if (workers !== undefined) {
    notes.push(
      `**Workers' throughput** (${workers.toFixed(0)} runs/s) is bound here by the ${cores} cores shared by 4 worker processes, their pg threads and the server's backends: 3 journal transactions per action (one worker-thread request each) plus a claim and a completion per run.`,
    );
  }
  notes.push(
    'Earlier PostgreSQL measurements, before and after one-request transactions, and what a hop through the worker thread costs: [docs/storage.md](docs/storage.md#what-a-journal-write-costs-on-postgresql).',
  );
  return notes;
}
