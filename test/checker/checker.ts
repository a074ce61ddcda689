// The property: generated cases run against the invariants; violations counted, then each kind shrunk to a minimal case.

import fc from 'fast-check';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WORKER_STARTS, caseArbOf } from './arbitraries';
import { describeOp, runCase, type CaseOptions, type CaseResult } from './executor';
import { describeCase, type CaseJ } from './spec';
import type { Sabotage } from './world';

export interface CheckOptions {
  readonly seed: number;
  readonly runs: number;
  /** Replays one case (a path fast-check printed) instead of generating `runs`. */
  readonly path?: string;
  readonly sabotage?: Sabotage;
  readonly arbitrary?: fc.Arbitrary<CaseJ>;
  /** How long shrinking one violation may take. */
  readonly shrinkMs?: number;
  /** At most this many violation kinds are shrunk (each takes a while). */
  readonly shrinkKinds?: number;
  /** Shrink only these kinds (a negative control looks for its own). */
  readonly kinds?: readonly string[];
  /** Stop generating at the first violation of a wanted kind (a control needs one, not a count). */
  readonly firstOnly?: boolean;
  readonly progress?: (done: number, violating: number) => void;
  /** Real child processes (the built CLI, real SIGKILL) instead of simulated ones. */
  readonly processes?: boolean;
  /** Real child processes, every schedule starting with a run queued for `logbook worker` processes. */
  readonly workers?: boolean;
  /** One journal for all cases (a postgres:// URL), instead of a SQLite file per case. */
  readonly db?: string;
}

export interface Shrunk {
  readonly kind: string;
  readonly firstPath: string;
  readonly schedules: number;
  readonly path: string;
  readonly c: CaseJ;
  readonly result: CaseResult;
  /** It did not fail again when shrinking began (its violation depends on timing): the first run's case and log. */
  readonly unshrunk?: boolean;
}

export interface CheckReport {
  readonly seed: number;
  readonly schedules: number;
  /** Schedules with at least one violation. */
  readonly violating: number;
  readonly kinds: ReadonlyMap<string, { count: number; firstPath: string }>;
  readonly shrunk: readonly Shrunk[];
  /** How long the schedules took to run (shrinking not included). */
  readonly ms: number;
  readonly text: string;
}

/** Journals of the checker live in memory where the machine has it: fsync is then free, and cases are many. */
export function scratchDir(): string {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  return fs.mkdtempSync(path.join(base, 'logbook-checker-'));
}

/** A case run against a journal in a scratch folder of its own, removed after: what the checker made of it. */
export async function inScratch(c: CaseJ, opts: Omit<CaseOptions, 'dir'> = {}): Promise<CaseResult> {
  const dir = scratchDir();
  try {
    return await runCase(c, { ...opts, dir });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runOne(c: CaseJ, dir: string, o: CheckOptions): Promise<CaseResult> {
  return runCase(c, {
    dir,
    ...(o.sabotage ? { sabotage: o.sabotage } : {}),
    ...(o.db ? { db: o.db } : {}),
    processes: o.processes === true || o.workers === true,
  });
}

export async function check(o: CheckOptions): Promise<CheckReport> {
  const dir = scratchDir();
  const arb = o.arbitrary ?? (o.workers ? caseArbOf(true, WORKER_STARTS) : caseArbOf(o.processes === true));
  try {
    const kinds = new Map<string, { count: number; firstPath: string }>();
    const firsts = new Map<string, { c: CaseJ; result: CaseResult }>();
    let schedules = 0;
    let violating = 0;
    let replayed: { c: CaseJ; result: CaseResult } | undefined;
    // 1. Count: every generated case runs; the property itself never fails, so all `runs` are tried.
    const counting = fc.asyncProperty(arb, async (c) => {
      if (o.firstOnly && [...kinds.keys()].some((k) => o.kinds === undefined || o.kinds.includes(k))) return true;
      const r = await runOne(c, dir, o);
      if (o.path) replayed = { c, result: r };
      const at = String(schedules++);
      if (r.violations.length) violating++;
      for (const v of new Set(r.violations.map((x) => x.kind))) {
        const k = kinds.get(v);
        kinds.set(v, { count: (k?.count ?? 0) + 1, firstPath: k?.firstPath ?? at });
        if (!firsts.has(v)) firsts.set(v, { c, result: r });
      }
      o.progress?.(schedules, violating);
      return true;
    });
    const started = Date.now();
    const counted = await fc.check(counting, { seed: o.seed, numRuns: o.path ? 1 : o.runs, ...(o.path ? { path: o.path } : {}) });
    // The property never fails on its own: a failure is the harness throwing, which must not pass for a short clean run.
    if (counted.failed)
      throw new Error(
        `checker harness: schedule ${schedules} threw: ${String(counted.errorInstance instanceof Error ? (counted.errorInstance.stack ?? counted.errorInstance) : counted.errorInstance)}`,
      );
    const ms = Date.now() - started;
    // 2. Shrink: per kind, from the first case that showed it, keeping that kind of violation while shrinking.
    const shrunk: Shrunk[] = [];
    const wanted = [...kinds].filter(([kind]) => o.kinds === undefined || o.kinds.includes(kind));
    for (const [kind, k] of wanted.slice(0, o.shrinkKinds ?? 3)) {
      // Past the budget, every candidate "passes" untried, so shrinking ends with the smallest failing case so far.
      // (fast-check's own time limit would abandon a case still running, which then races the next one.)
      const deadline = Date.now() + (o.shrinkMs ?? 60_000);
      const failing = fc.asyncProperty(arb, async (c) => Date.now() > deadline || !(await runOne(c, dir, o)).violations.some((v) => v.kind === kind));
      const startPath = o.path ? o.path : k.firstPath;
      const d = await fc.check(failing, { seed: o.seed, path: startPath, numRuns: 1 });
      const c = d.counterexample?.[0];
      const first = firsts.get(kind);
      if (!c) {
        if (first) shrunk.push({ kind, firstPath: k.firstPath, schedules: k.count, path: k.firstPath, ...first, unshrunk: true });
        continue;
      }
      shrunk.push({ kind, firstPath: k.firstPath, schedules: k.count, path: d.counterexamplePath ?? startPath, c, result: await runOne(c, dir, o) });
    }
    const report = { seed: o.seed, schedules, violating, kinds, shrunk, ms };
    // Not the URL itself (it may hold a password), and a database whose run ids r1, r2… are still free.
    const flags = `${o.workers ? ' --workers' : o.processes ? ' --processes' : ''}${o.db ? ' --journal <a fresh database on the same server>' : ''}`;
    const text = formatReport(report, o.arbitrary || o.sabotage ? 'custom' : flags);
    if (!replayed) return { ...report, text };
    const r = replayed;
    return { ...report, text: `replayed path ${o.path ?? ''}:\n${formatCase(r.c, r.result)}\n\n${text}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A case and what it did, as the report prints it. */
export function formatCase(c: CaseJ, result: CaseResult): string {
  return [
    ...describeCase(c, describeOp)
      .split('\n')
      .map((l) => `  ${l}`),
    '  what happened:',
    ...result.log.map((l) => `    ${l}`),
    '  violations:',
    ...(result.violations.length ? result.violations.map((v) => `    ${v.kind}: ${v.detail}`) : ['    none']),
    `  the case as JSON: ${JSON.stringify(c)}`,
  ].join('\n');
}

export function formatShrunk(s: Shrunk, seed: number, flags: string): string {
  return [
    s.unshrunk
      ? `violation ${s.kind}: in ${s.schedules} schedule(s), first at path ${s.firstPath}; it did not fail again when shrinking began (it depends on timing): its first run`
      : `violation ${s.kind}: in ${s.schedules} schedule(s), first at path ${s.firstPath}; shrunk to path ${s.path}`,
    `  replay: ${flags === 'custom' ? 'through the test that made it (its own generator)' : `npm run check:exactly-once -- --seed ${seed} --path ${s.path}${flags}`}`,
    formatCase(s.c, s.result),
  ].join('\n');
}

function formatReport(r: Omit<CheckReport, 'text'>, flags: string): string {
  const lines = [`exactly-once checker: seed ${r.seed}, ${r.schedules} schedules in ${(r.ms / 1000).toFixed(1)} s`];
  for (const [kind, k] of r.kinds) lines.push(`  ${kind}: ${k.count} schedule(s), first at path ${k.firstPath}`);
  for (const s of r.shrunk) lines.push('', formatShrunk(s, r.seed, flags));
  lines.push('', `${r.schedules} schedules, ${r.violating} violations`);
  return lines.join('\n');
}
