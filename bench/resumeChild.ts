// Child process for the resume rows: opens a journal, resumes a run, and reports when the first new action is reached;
// or, with `reads` after its arguments, only what the journal's store reads for that resume (no script, no session);
// or, with `check`, only the script's loop with replay's determinism check of each action (no journal, no engine).

import * as fs from 'node:fs';
import { openStore, resumeRun, type Store } from '../src/runtime';
import { LAZY_ABOVE_BYTES } from '../src/runtime/lazyValue';
import { ReadAhead, textSize } from '../src/runtime/readAhead';
import { INLINE_RESULT_BYTES } from '../src/runtime/stepCursor';
import { fromJournalJson, toJournalJson } from '../src/runtime/json';
import type { RunApi } from '../src/runtime/define';
import { JOURNAL_ACTION, journalAgent, journalSend, journalShape, probe } from './journalAgent';
import { cpuUs, nowUs } from './measure';

export interface ResumeChildReport {
  readonly ok: boolean;
  /** From the resumeRun call to the script attempting its first new action, µs. */
  readonly resumeUs: number;
  /** CPU this process used over the same interval, µs. */
  readonly resumeCpuUs: number;
  /** Opening the journal (WAL recovery, migrations check), µs. */
  readonly openUs: number;
  /** Since the process started (node boot, loading, open, resume), ms. */
  readonly sinceStartMs: number;
  readonly maxRssKb: number;
  /** Heap still reachable at the probe after a full GC (run with --expose-gc): what resuming retains, without garbage. */
  readonly retainedHeapKb: number;
  /** Effects executed before the probe: anything but 0 means the journal did not replay. */
  readonly executedBefore: number;
  readonly error?: string;
}

function report(r: ResumeChildReport): never {
  // Synchronous write: the process exits right after, like a run stopped at that boundary.
  fs.writeSync(1, `${JSON.stringify(r)}\n`);
  process.exit(r.ok ? 0 : 1);
}

/**
 * The store's reads a resume of the run makes, timed alone: the damage check before anything is written, then every
 * step's header a chunk at a time, and the journaled actions of each unfinished step a page at a time, as replay asks
 * for them (ReadAhead's pages, as StepActions reads). What is left of a resume's time is the script and the engine.
 */
function readsOnly(store: Store, runId: string, openUs: number): never {
  const c0 = cpuUs();
  const t0 = nowUs();
  if (store.reader.firstDamage(runId, { steps: Number.MAX_SAFE_INTEGER, actions: 'open', deferAbove: LAZY_ABOVE_BYTES }))
    throw new Error(`run ${runId} is damaged`);
  const count = store.reader.stepCount(runId);
  const unfinished: number[] = [];
  for (let from = 0; from < count; from += 512) {
    for (const h of store.reader.replayStepHeads(runId, from, from + 512, INLINE_RESULT_BYTES)) if (h.status !== 'completed') unfinished.push(h.idx);
  }
  for (const idx of unfinished) {
    const ahead = new ReadAhead();
    for (let after = Number.MIN_SAFE_INTEGER; ;) {
      const page = ahead.rows;
      const rows = store.reader.replayActionsOfStep(runId, idx, after, page);
      let bytes = 0;
      for (const r of rows) {
        bytes += textSize([r.args, r.result]);
        after = r.seq;
      }
      ahead.update(rows.length, bytes);
      if (rows.length < page) break;
    }
  }
  reportAlone(t0, c0, openUs);
}

/** Reports a part timed alone (reads, or the check) since `t0` and `c0`: no script ran, so no effect and no retained heap. */
function reportAlone(t0: number, c0: number, openUs: number): never {
  const resumeUs = nowUs() - t0;
  const resumeCpuUs = cpuUs() - c0;
  const maxRssKb = process.resourceUsage().maxRSS;
  report({ ok: true, resumeUs, resumeCpuUs, openUs, sinceStartMs: process.uptime() * 1000, maxRssKb, retainedHeapKb: Number.NaN, executedBefore: 0 });
}

/**
 * The script's loop over `n` actions with replay's determinism check in place of run.do, timed alone: each action's args
 * validated by its schema and serialised, its key derived, both compared with the journaled row's, its result parsed
 * and awaited, as the skip does (RunSession.skipFast). What skipping an action must do besides reading its row.
 */
async function checkOnly(runId: string, n: number): Promise<never> {
  const rows = Array.from({ length: n }, (_, i) => ({ id: journalShape.actionId(runId, i), args: journalShape.args(i), result: journalShape.result(i) }));
  const run = { id: runId } as RunApi;
  const validate = journalSend.args['~standard'].validate;
  const c0 = cpuUs();
  const t0 = nowUs();
  let last = -1;
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    const v = validate({ i });
    if (v instanceof Promise || v.issues) throw new Error(`the args of action ${i} are not valid`);
    const args = toJournalJson(v.value, JOURNAL_ACTION, '') ?? 'null';
    if (journalSend.key(v.value, run) !== row.id || args !== row.args) throw new Error(`action ${i} does not match its row`);
    const result = fromJournalJson(row.result, () => ({ runId, table: 'actions', id: row.id, column: 'result' }));
    last = ((await Promise.resolve(result)) as { ok: number }).ok;
  }
  if (last !== n - 1) throw new Error(`the check loop ended at ${last}`);
  reportAlone(t0, c0, 0);
}

async function main(): Promise<void> {
  const [file, runId, at, mode] = process.argv.slice(2);
  if (mode === 'check' && runId && at !== undefined) await checkOnly(runId, Number(at));
  if (!file || !runId || at === undefined) throw new Error('usage: resumeChild <journal> <run-id> <first-new-action> [reads|check]');
  const t0 = nowUs();
  const store = openStore(file);
  const openUs = nowUs() - t0;
  if (mode === 'reads') readsOnly(store, runId, openUs);
  let tResume = 0;
  let cResume = 0;
  probe.at = Number(at);
  probe.hit = () => {
    const resumeUs = nowUs() - tResume;
    const resumeCpuUs = cpuUs() - cResume;
    const sinceStartMs = process.uptime() * 1000;
    const maxRssKb = process.resourceUsage().maxRSS;
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const retainedHeapKb = gc ? process.memoryUsage().heapUsed / 1024 : Number.NaN;
    report({ ok: true, resumeUs, resumeCpuUs, openUs, sinceStartMs, maxRssKb, retainedHeapKb, executedBefore: probe.executed });
  };
  cResume = cpuUs();
  tResume = nowUs();
  const outcome = await resumeRun(store, journalAgent, runId, { log: () => undefined, role: 'bench' });
  report({
    ok: false,
    resumeUs: 0,
    resumeCpuUs: 0,
    openUs,
    sinceStartMs: 0,
    maxRssKb: 0,
    retainedHeapKb: 0,
    executedBefore: probe.executed,
    error: `the run ended (${outcome.status}) without reaching action ${at}: ${outcome.error?.message ?? ''}`,
  });
}

main().catch((err: unknown) =>
  report({
    ok: false,
    resumeUs: 0,
    resumeCpuUs: 0,
    openUs: 0,
    sinceStartMs: 0,
    maxRssKb: 0,
    retainedHeapKb: 0,
    executedBefore: probe.executed,
    error: String(err),
  }),
);
