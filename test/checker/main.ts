// `npm run check:exactly-once -- [--seed N] [--runs N] [--path P] [--processes | --workers] [--kinds K,…] [--case JSON] [--journal URL]`.

import { parseArgs } from 'node:util';
import * as fs from 'node:fs';
import { check, formatCase, scratchDir } from './checker';
import { runCase } from './executor';
import type { CaseJ } from './spec';
import { MIGRATE_STATS } from './migrateOps';
import { DAMAGE_STATS } from './damageOps';

async function cli(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      runs: { type: 'string' },
      path: { type: 'string' },
      'shrink-seconds': { type: 'string' },
      quiet: { type: 'boolean' },
      processes: { type: 'boolean' },
      workers: { type: 'boolean' },
      kinds: { type: 'string' },
      case: { type: 'string' },
      journal: { type: 'string' },
    },
    strict: true,
  });
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const runs = values.runs === undefined ? 300 : Number(values.runs);
  if (!Number.isInteger(seed) || !Number.isInteger(runs) || runs < 1) throw new Error('--seed and --runs take whole numbers (--runs 1 or more).');
  if (values.case !== undefined) {
    // One case as the report printed it (its JSON), run as it is: no generation, no shrinking.
    const c = JSON.parse(values.case) as CaseJ;
    const dir = scratchDir();
    try {
      const r = await runCase(c, { dir, processes: values.processes === true || values.workers === true, ...(values.journal ? { db: values.journal } : {}) });
      process.stdout.write(`${formatCase(c, r)}\n1 schedules, ${r.violations.length ? 1 : 0} violations\n`);
      return r.violations.length ? 1 : 0;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const started = Date.now();
  // Said first, so a long run stopped half-way can still be replayed.
  process.stderr.write(`exactly-once checker: seed ${seed}, ${runs} schedules${values.path ? ` from path ${values.path}` : ''}\n`);
  let last = 0;
  const report = await check({
    seed,
    runs,
    ...(values.path ? { path: values.path } : {}),
    shrinkMs: Number(values['shrink-seconds'] ?? 60) * 1000,
    shrinkKinds: 8,
    ...(values.kinds ? { kinds: values.kinds.split(',') } : {}),
    processes: values.processes === true,
    workers: values.workers === true,
    ...(values.journal ? { db: values.journal } : {}),
    progress: (done, bad) => {
      if (values.quiet || Date.now() - last < 5000) return;
      last = Date.now();
      process.stderr.write(`  ${done} schedules, ${bad} violating, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    },
  });
  const lines = report.text.split('\n');
  const final = lines.pop();
  const m = MIGRATE_STATS;
  // Counted over shrinking too: how often the schema-9 journal was opened again, and who upgraded it when two raced.
  const migrated = `migrate-9: the journal put back to schema 9 ${m.ops} times (${m.threadMigrated} upgraded by a second opener's thread, ${m.driverMigrated} by the driver while it waited${m.pg ? `, ${m.pg} on PostgreSQL` : ''})`;
  const d = DAMAGE_STATS;
  const damaged = `damage-key: an action key stored as a BLOB before a resume ${d.damaged} times in ${d.ops} operations, the resume refused ${d.refused} times`;
  const logDamaged = `damage-log: a killed run's unfolded writes damaged ${d.logDamaged} times in ${d.logOps} operations, the resume or compensation refused ${d.logRefused} times`;
  process.stdout.write(`${lines.join('\n')}\n${migrated}\n${damaged}\n${logDamaged}\n(took ${((Date.now() - started) / 1000).toFixed(1)} s)\n${final ?? ''}\n`);
  return report.violating === 0 ? 0 : 1;
}

cli().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
