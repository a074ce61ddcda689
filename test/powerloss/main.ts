// `npm run test:powerloss -- [--cuts N] [--seed N] [--resume-every N] [--json]`: the power-loss campaign and its negative controls.

import { LEASE_TTL_MS } from './env';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { campaign, MODELS } from './campaign';
import { controls, controlsHold } from './controls';
import { CACHE, loadShim } from './shim';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { cuts: { type: 'string' }, seed: { type: 'string' }, 'resume-every': { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const cutsPerModel = Number(values.cuts ?? 1000);
  const seed = Number(values.seed ?? 22);
  const resumeEvery = Number(values['resume-every'] ?? 10);
  if (![cutsPerModel, seed, resumeEvery].every(Number.isInteger) || cutsPerModel < 1 || resumeEvery < 1)
    throw new Error('--cuts, --seed and --resume-every take whole numbers (1 or more).');
  const started = Date.now();
  const work = path.join(CACHE, `work-${process.pid}`);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  process.stderr.write(`powerloss: seed ${seed}, ${cutsPerModel} cuts per model, every ${resumeEvery}th resumed\n`);
  const shim = loadShim();
  try {
    const report = await campaign(shim, { cutsPerModel, seed, resumeEvery, work, log, leaseTtlMs: LEASE_TTL_MS });
    for (const r of report.recordings) log(`  recorded ${r.name}: ${r.ops} operations, ${r.syncs} sync points`);
    const ctl = await controls(shim, { cutsPerModel, seed, resumeEvery, work, log, leaseTtlMs: LEASE_TTL_MS });
    const ctlBad = controlsHold(ctl);
    log(`  control without fsync: ${ctl.noSync.lostCommits} lost acknowledged commits in ${ctl.noSync.cuts} cuts (must be > 0)`);
    for (const f of ctl.failedSyncs) log(`  control failing fsync #${f.sync}: run ended ${f.ended}, ${f.ackedAfter} acknowledged after it`);
    log(
      `  control migration committed statement by statement: ${ctl.splitMigration.mixed} cuts with a mixed schema in ${ctl.splitMigration.cuts} (must be > 0)`,
    );
    log(
      `  control migration committed statement by statement, disk full: ${ctl.diskFullSplit.mixed} upgrades with a mixed schema in ${ctl.diskFullSplit.points} (must be > 0)`,
    );
    log(
      `  control failing fsync #${ctl.cli.sync} under logbook run: exit ${ctl.cli.exit}${ctl.cli.dbIo ? ', LB_DB_IO' : ''}${ctl.cli.failed ? '' : ' (never reached)'}`,
    );
    const violations = [...MODELS.flatMap((m) => report.perModel[m].violations), ...report.diskFull.violations, ...report.diskFullRuns.violations, ...ctlBad];
    for (const v of violations.slice(0, 40)) log(`  VIOLATION ${v}`);
    if (violations.length > 40) log(`  … and ${violations.length - 40} more`);
    log(`  took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const total = MODELS.reduce((n, m) => n + report.perModel[m].cuts, 0);
    const per = MODELS.map(
      (m) => `${m === 'sqlite' ? 'sqlite model' : m}: ${report.perModel[m].cuts} cuts, ${report.perModel[m].violations.length} violations`,
    ).join('; ');
    if (values.json)
      log(
        JSON.stringify({
          perModel: report.perModel,
          recordings: report.recordings,
          diskFull: report.diskFull,
          diskFullRuns: report.diskFullRuns,
          controls: ctl,
        }),
      );
    process.stdout.write(`powerloss: ${total} cuts, ${violations.length} violations (${per})\n`);
    return violations.length === 0 ? 0 : 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
