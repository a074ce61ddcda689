// The power-loss campaign: record every scenario once, cut each recording at many points under both models, check every cut.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLog, type Op } from './log';
import { rebuild, rng, syncPoints, type Flavour, type Model } from './cuts';
import { checkCut, materialize, promisesAt } from './check';
import { record } from './record';
import { SCENARIOS, type Scenario } from './scenarios';
import type { Shim } from './shim';
import { diskFullRuns, type DiskFullRuns } from './diskFull';
import { MIGRATION_SCENARIO, checkMigrationCut, diskFullMigration, recordMigration, type DiskFullResult, type MigrationRecording } from './migration';

export const MODELS: readonly Model[] = ['sqlite', 'ext4-ordered'];
/** How many writes of the upgrade the disk fills at, one upgrade each. */
export const DISK_FULL_POINTS = 40;
/** How many writes of each scenario's run the disk fills at, one run each. */
export const DISK_FULL_RUN_POINTS = 8;

export interface CampaignOptions {
  readonly cutsPerModel: number;
  readonly seed: number;
  /** Every n-th cut is also resumed to its end (the slow check). */
  readonly resumeEvery: number;
  readonly work: string;
  readonly log?: (line: string) => void;
  /** The recorded runs' lease length: resumes wait it out once, as after a reboot. */
  readonly leaseTtlMs: number;
}

export interface CutResult {
  readonly cuts: number;
  readonly resumed: number;
  readonly violations: string[];
}

/** Cut points of a recording: right after each sync point, right before the next one, and one in between. */
export function cutPoints(ops: readonly Op[], random: () => number): number[] {
  const syncs = [-1, ...syncPoints(ops), ops.length];
  const out: number[] = [];
  for (let k = 0; k + 1 < syncs.length; k++) {
    const from = syncs[k]! + 1;
    const to = syncs[k + 1]!;
    out.push(from, to);
    if (to - from > 1) out.push(from + 1 + Math.floor(random() * (to - from - 1)));
  }
  return [...new Set(out)].filter((p) => p >= 0 && p <= ops.length);
}

const FLAVOURS: readonly Flavour[] = ['all', 'none', 'random', 'random', 'random'];

/** `count` cuts of one recording under one model. */
export async function cutRecording(s: Scenario, ops: readonly Op[], model: Model, count: number, o: CampaignOptions, salt: number): Promise<CutResult> {
  const points = cutPoints(ops, rng(o.seed ^ salt));
  const violations: string[] = [];
  let resumed = 0;
  const dir = path.join(o.work, `cut-${s.name}-${model}`);
  for (let j = 0; j < count; j++) {
    const at = points[j % points.length]!;
    // Each pass over the points shifts the flavours, so every point meets each of them.
    const flavour = FLAVOURS[(j + Math.floor(j / points.length)) % FLAVOURS.length]!;
    const cutSeed = (o.seed * 7919 + salt * 104729 + j) >>> 0;
    materialize(dir, rebuild(ops, at, model, rng(cutSeed), flavour));
    const resume = j % o.resumeEvery === 0;
    if (resume) resumed++;
    const bad = await checkCut(dir, s, promisesAt(ops, at, s), resume);
    for (const b of bad) violations.push(`${s.name} ${model} cut ${j} (op ${at}/${ops.length}, ${flavour}, seed ${cutSeed}): ${b}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { cuts: count, resumed, violations };
}

/** `count` cuts of the migration's recording under one model (no run to resume: the check reopens the journal). */
export function cutMigration(rec: MigrationRecording, model: Model, count: number, o: CampaignOptions, salt: number): CutResult {
  const points = cutPoints(rec.ops, rng(o.seed ^ salt));
  const violations: string[] = [];
  const dir = path.join(o.work, `cut-${MIGRATION_SCENARIO}-${model}`);
  for (let j = 0; j < count; j++) {
    const at = points[j % points.length]!;
    const flavour = FLAVOURS[(j + Math.floor(j / points.length)) % FLAVOURS.length]!;
    const cutSeed = (o.seed * 7919 + salt * 104729 + j) >>> 0;
    const files = rebuild(rec.ops, at, model, rng(cutSeed), flavour, rec.initial);
    // A cut before the first open leaves the seed as it was.
    for (const [name, bytes] of rec.initial) if (!files.has(name)) files.set(name, bytes);
    materialize(dir, files);
    for (const b of checkMigrationCut(dir, rec))
      violations.push(`${MIGRATION_SCENARIO} ${model} cut ${j} (op ${at}/${rec.ops.length}, ${flavour}, seed ${cutSeed}): ${b}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { cuts: count, resumed: 0, violations };
}

export interface CampaignReport {
  readonly perModel: Record<Model, CutResult>;
  readonly recordings: Array<{ name: string; ops: number; syncs: number; ended: string }>;
  readonly diskFull: DiskFullResult;
  readonly diskFullRuns: DiskFullRuns;
}

export async function campaign(shim: Shim, o: CampaignOptions): Promise<CampaignReport> {
  const recordings = [];
  const logs: Array<{ s: Scenario; ops: Op[] }> = [];
  for (const s of SCENARIOS) {
    const r = await record(shim, s, o.work);
    if (r.ended !== 'completed') throw new Error(`powerloss: scenario ${s.name} ended ${r.ended} while recording`);
    const ops = readLog(r.log);
    logs.push({ s, ops });
    recordings.push({ name: s.name, ops: ops.length, syncs: syncPoints(ops).length, ended: r.ended });
  }
  const migration = recordMigration(shim, o.work);
  recordings.push({ name: MIGRATION_SCENARIO, ops: migration.ops.length, syncs: syncPoints(migration.ops).length, ended: 'migrated' });
  // Not a power cut: the disk fills during the upgrade, from one write of it on, and the process goes on.
  const diskFull = diskFullMigration(shim, o.work, migration, DISK_FULL_POINTS);
  o.log?.(
    `  disk full during the migration: ${diskFull.points} writes, ${diskFull.refused} refused with LB_DB_DISK_FULL, ${diskFull.violations.length} violations`,
  );
  const runsFull = await diskFullRuns(shim, o, logs, DISK_FULL_RUN_POINTS);
  o.log?.(`  disk full during a run: ${runsFull.points} runs, ended ${JSON.stringify(runsFull.ended)}, ${runsFull.violations.length} violations`);
  const scenarios = logs.length + 1;
  // The last recording's lease, left in its cuts, must have expired before a resume can take the run over.
  await new Promise((r) => setTimeout(r, o.leaseTtlMs + 200));
  const perModel = {} as Record<Model, CutResult>;
  for (const [mi, model] of MODELS.entries()) {
    const total: CutResult = { cuts: 0, resumed: 0, violations: [] };
    for (const [si, { s, ops }] of logs.entries()) {
      const count = Math.ceil(o.cutsPerModel / scenarios);
      const r = await cutRecording(s, ops, model, count, o, mi * 1000 + si);
      o.log?.(`  ${model} ${s.name}: ${r.cuts} cuts (${r.resumed} resumed), ${r.violations.length} violations`);
      perModel[model] = total;
      Object.assign(total, { cuts: total.cuts + r.cuts, resumed: total.resumed + r.resumed });
      total.violations.push(...r.violations);
    }
    const m = cutMigration(migration, model, Math.ceil(o.cutsPerModel / scenarios), o, mi * 1000 + logs.length);
    o.log?.(`  ${model} ${MIGRATION_SCENARIO}: ${m.cuts} cuts, ${m.violations.length} violations`);
    Object.assign(total, { cuts: total.cuts + m.cuts });
    total.violations.push(...m.violations);
    perModel[model] = total;
  }
  return { perModel, recordings, diskFull, diskFullRuns: runsFull };
}
