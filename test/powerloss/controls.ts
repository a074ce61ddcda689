// The negative controls: a journal whose fsyncs do nothing must lose acknowledged commits; a failing fsync must never be acknowledged.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLog } from './log';
import { cutMigration, cutRecording, type CampaignOptions } from './campaign';
import { diskFullMigration, recordMigration } from './migration';
import { record } from './record';
import { SCENARIOS } from './scenarios';
import type { Shim } from './shim';

export interface ControlReport {
  /** Cuts of the sync-less recording, and how many found an acknowledged commit lost (must be > 0). */
  readonly noSync: { cuts: number; lostCommits: number };
  /** Each failed fsync (by its number among the recording's syncs): how the run ended and whether anything after it was acknowledged. */
  readonly failedSyncs: Array<{ sync: number; ended: string; ackedAfter: number; failed: boolean }>;
  /** The same through the built CLI (`logbook run`, the shim preloaded): its exit code and whether it said LB_DB_IO. */
  readonly cli: { sync: number; exit: number | null; dbIo: boolean; failed: boolean; completed: boolean };
  /** Cuts of a migration whose statements commit one by one, and how many found a schema of no version (must be > 0). */
  readonly splitMigration: { cuts: number; mixed: number };
  /** The same migration with the disk full from a write on, and how many upgrades left a schema of no version (must be > 0). */
  readonly diskFullSplit: { points: number; mixed: number };
}

const ROOT = path.resolve(__dirname, '..', '..');

/** `logbook run` of a five-action bracket with its `sync`-th journal fsync failing. */
export function cliFailedSync(work: string, sync: number): ControlReport['cli'] {
  const dir = path.join(work, `cli-failsync${sync}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const log = `${dir}.log`;
  const args = ['--require', 'tsx/cjs', '--require', path.join(__dirname, 'cliPreload.ts'), path.join(ROOT, 'dist', 'cli.js')];
  const r = spawnSync(
    process.execPath,
    [...args, 'run', path.join(__dirname, 'agents', 'bracket.ts'), '--run-id', 'r', '--json', '--journal', path.join(dir, 'journal.db')],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, POWERLOSS_LOG: log, POWERLOSS_DIR: dir, POWERLOSS_FAIL_SYNC: String(sync) },
    },
  );
  const failed = fs.existsSync(log) && readLog(log).some((op) => op.kind === 'mark' && op.text === 'fsync-failed');
  return { sync, exit: r.status, dbIo: `${r.stdout}${r.stderr}`.includes('LB_DB_IO'), failed, completed: /"status":\s*"completed"/.test(r.stdout) };
}

export async function controls(shim: Shim, o: CampaignOptions): Promise<ControlReport> {
  const bracket = SCENARIOS[0]!;
  const r = await record(shim, bracket, o.work, { dropSyncs: true });
  const ops = readLog(r.log);
  const cut = await cutRecording(bracket, ops, 'sqlite', Math.max(50, Math.ceil(o.cutsPerModel / 10)), { ...o, resumeEvery: 1_000_000 }, 999);
  const lostCommits = cut.violations.filter((v) => v.includes('acknowledged commit')).length;
  // The syncs of the normal recording that make an action's `committed` durable: between its effect and its acknowledgement.
  const normal = readLog((await record(shim, bracket, o.work)).log);
  const commitSyncs: number[] = [];
  let syncs = 0;
  let inBracket = false;
  for (const op of normal) {
    if (op.kind === 'sync') {
      syncs++;
      if (inBracket) commitSyncs.push(syncs);
      inBracket = false;
    }
    if (op.kind === 'mark') inBracket = op.text.startsWith('effect ');
  }
  const failedSyncs = [];
  for (const n of [commitSyncs[0], commitSyncs[Math.floor(commitSyncs.length / 2)], commitSyncs[commitSyncs.length - 1]]) {
    if (n === undefined) continue;
    const f = await record(shim, bracket, o.work, { failSync: n });
    const fops = readLog(f.log);
    const at = fops.findIndex((op) => op.kind === 'mark' && op.text === 'fsync-failed');
    const ackedAfter = at < 0 ? 0 : fops.slice(at).filter((op) => op.kind === 'mark' && op.text.startsWith('acked ')).length;
    failedSyncs.push({ sync: n, ended: f.ended, ackedAfter, failed: at >= 0 });
  }
  const splitRec = recordMigration(shim, o.work, true);
  const split = cutMigration(splitRec, 'sqlite', 60, o, 998);
  const mixed = split.violations.filter((v) => v.includes('a mix of two versions')).length;
  const full = diskFullMigration(shim, o.work, splitRec, 12, true);
  return {
    noSync: { cuts: cut.cuts, lostCommits },
    failedSyncs,
    cli: cliFailedSync(o.work, 12),
    splitMigration: { cuts: split.cuts, mixed },
    diskFullSplit: { points: full.points, mixed: full.mixed },
  };
}

/** Whether the controls caught what they must: otherwise the checker (or the shim) is broken. */
export function controlsHold(c: ControlReport): string[] {
  const bad: string[] = [];
  if (c.noSync.lostCommits === 0) bad.push(`a journal without fsync lost no acknowledged commit in ${c.noSync.cuts} cuts: the checker is broken`);
  if (c.failedSyncs.length === 0) bad.push('no commit sync was found to fail');
  for (const f of c.failedSyncs) {
    if (!f.failed) bad.push(`fsync #${f.sync} was never reached`);
    if (!/\bLB_DB_IO\b/.test(f.ended)) bad.push(`after fsync #${f.sync} failed the run ended "${f.ended}", not with LB_DB_IO`);
    if (f.ackedAfter > 0) bad.push(`after fsync #${f.sync} failed, ${f.ackedAfter} commit(s) were still acknowledged`);
  }
  if (c.splitMigration.mixed === 0)
    bad.push(`a migration committed statement by statement left no mixed schema in ${c.splitMigration.cuts} cuts: the migration check is broken`);
  if (c.diskFullSplit.mixed === 0)
    bad.push(
      `a migration committed statement by statement left no mixed schema when the disk filled at ${c.diskFullSplit.points} writes: the disk-full check is broken`,
    );
  const c2 = c.cli;
  if (!c2.failed) bad.push(`logbook run never reached its fsync #${c2.sync}`);
  if (c2.exit !== 5 || !c2.dbIo || c2.completed)
    bad.push(
      `logbook run with fsync #${c2.sync} failing exited ${c2.exit}${c2.dbIo ? '' : ' without LB_DB_IO'}${c2.completed ? ', reporting the run completed' : ''}, not 5 with LB_DB_IO`,
    );
  return bad;
}
