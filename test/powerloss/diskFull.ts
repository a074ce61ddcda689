// The disk filling up during a run: each scenario recorded again with every write failing from one of its writes on,
// then resumed once the disk has room. A full disk is a storage error, never the script's failure.

import type { Op } from './log';
import { readLog } from './log';
import { checkCut, promisesAt } from './check';
import { record } from './record';
import type { CampaignOptions } from './campaign';
import type { Scenario } from './scenarios';
import type { Shim } from './shim';

export interface DiskFullRuns {
  /** Runs recorded with the disk filling at one of their writes. */
  readonly points: number;
  /** How each ended, counted: `interrupted LB_DB_DISK_FULL`, or `completed` when the disk filled after the last commit. */
  readonly ended: Record<string, number>;
  readonly violations: string[];
}

/** How a run may end when the disk fills under it: stopped by the storage error, or done before it mattered. */
const ALLOWED = /^(completed|interrupted LB_DB_DISK_FULL|LB_DB_DISK_FULL)$/;

/**
 * `perScenario` points spread over the writes of each scenario's normal recording. Each run must stop with
 * LB_DB_DISK_FULL (never failed or compensated, as if the script had thrown), and its journal must then keep every
 * promise a power cut at that moment must keep (checkCut: every effect's durable `started`, every acknowledged
 * commit), and resume to its end without running an effect twice.
 */
export async function diskFullRuns(
  shim: Shim,
  o: CampaignOptions,
  normal: ReadonlyArray<{ s: Scenario; ops: Op[] }>,
  perScenario: number,
): Promise<DiskFullRuns> {
  const violations: string[] = [];
  const ended: Record<string, number> = {};
  const recorded: Array<{ s: Scenario; n: number; dir: string; ops: Op[] }> = [];
  for (const { s, ops } of normal) {
    const writes = ops.filter((op) => op.kind === 'write').length;
    const points = [...new Set(Array.from({ length: perScenario }, (_, i) => 1 + Math.round((i * (writes - 1)) / Math.max(1, perScenario - 1))))];
    for (const n of points) {
      const r = await record(shim, s, o.work, { failWrites: n });
      ended[r.ended] = (ended[r.ended] ?? 0) + 1;
      if (!ALLOWED.test(r.ended))
        violations.push(`${s.name}, disk full from write ${n} of ${writes}: the run ended "${r.ended}", not stopped by LB_DB_DISK_FULL`);
      recorded.push({ s, n, dir: r.log.replace(/\.log$/, ''), ops: readLog(r.log) });
    }
  }
  // The stopped runs' leases, left in their journals, must expire before a resume can take them over.
  await new Promise((r) => setTimeout(r, o.leaseTtlMs + 200));
  for (const { s, n, dir, ops } of recorded) {
    const bad = await checkCut(dir, s, promisesAt(ops, ops.length, s), true);
    violations.push(...bad.map((b) => `${s.name}, disk full from write ${n}: ${b}`));
  }
  return { points: recorded.length, ended, violations };
}
