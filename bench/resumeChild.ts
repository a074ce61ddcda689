// Child process for the resume rows: opens a journal, resumes a run, and reports when the first new action is reached.

import * as fs from 'node:fs';
import { openStore, resumeRun } from '../src/runtime';
import { journalAgent, probe } from './journalAgent';
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

async function main(): Promise<void> {
  const [file, runId, at] = process.argv.slice(2);
  if (!file || !runId || at === undefined) throw new Error('usage: resumeChild <journal> <run-id> <first-new-action>');
  const t0 = nowUs();
  const store = openStore(file);
  const openUs = nowUs() - t0;
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
