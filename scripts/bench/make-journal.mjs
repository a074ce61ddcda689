// Makes a large journal for benchmarks: one real run by the CLI, cloned by SQL into N runs, plus one run of M steps.
// Usage: node scripts/bench/make-journal.mjs <db> <agent script> [runs=10000] [hugeSteps=100000]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const Database = createRequire(path.join(root, 'package.json'))('better-sqlite3');
const [db, script, runsArg = '10000', hugeArg = '100000'] = process.argv.slice(2);
if (!db || !script) {
  console.error('usage: node scripts/bench/make-journal.mjs <db> <agent script> [runs] [hugeSteps]');
  process.exit(2);
}
const runs = Number(runsArg);
const huge = Number(hugeArg);
fs.rmSync(db, { force: true });
const seed = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'run', script, '--run-id', 'seed', '--input', '{"items":3}', '--journal', db], {
  encoding: 'utf8',
  env: { ...process.env, LOGBOOK_STATE_DIR: path.dirname(db) },
});
if (seed.status !== 0) throw new Error(`seed run failed: ${seed.stderr}`);

const d = new Database(db);
const RUN = 'agent, script, input, status, attempt, output, error';
const LEASE = 'lease_token, lease_owner, lease_pid, lease_pid_start, lease_host, lease_epoch, lease_expires, forked_from, forked_at_step';
const t0 = Date.now();
d.transaction(() => {
  d.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO runs (id, ${RUN}, created_at, updated_at, ${LEASE})
    SELECT printf('bench-%05d', i), ${RUN}, created_at - i * 60000, updated_at - i * 60000, ${LEASE} FROM runs, n WHERE id = 'seed'`,
  ).run(runs - 1);
  d.prepare(
    `INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at, ended_at)
    SELECT r.id, s.idx, s.name, s.status, s.result, s.error, s.attempt, s.started_at, s.ended_at FROM steps s, runs r WHERE s.run_id = 'seed' AND r.id LIKE 'bench-%'`,
  ).run();
  d.prepare(
    `INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions, reconciliation, decision, approval, approval_note, compensation, compensation_result, compensation_executions, attempt, started_at, ended_at, commit_seq)
    SELECT r.id, replace(a.id, 'seed', r.id), a.seq, a.step_idx, a.type, a.version, a.effect, a.args, a.status, a.result, a.error, a.executions, a.reconciliation, a.decision, a.approval, a.approval_note, a.compensation, a.compensation_result, a.compensation_executions, a.attempt, a.started_at, a.ended_at, a.commit_seq
    FROM actions a, runs r WHERE a.run_id = 'seed' AND r.id LIKE 'bench-%'`,
  ).run();
  if (huge > 0) {
    d.prepare(
      `INSERT INTO runs (id, ${RUN}, created_at, updated_at, ${LEASE}) SELECT 'huge', ${RUN}, created_at + 1, updated_at + 1, ${LEASE} FROM runs WHERE id = 'seed'`,
    ).run();
    d.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
      INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at, ended_at)
      SELECT 'huge', i, 'notify user ' || i, s.status, s.result, s.error, s.attempt, s.started_at, s.ended_at FROM steps s, n WHERE s.run_id = 'seed' AND s.idx = 0`,
    ).run(huge);
    d.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
      INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, error, executions, reconciliation, decision, approval, approval_note, compensation, compensation_result, compensation_executions, attempt, started_at, ended_at, commit_seq)
      SELECT 'huge', 'notice:huge:user' || i, i + 1, i, a.type, a.version, a.effect, a.args, a.status, a.result, a.error, a.executions, a.reconciliation, a.decision, a.approval, a.approval_note, a.compensation, a.compensation_result, a.compensation_executions, a.attempt, a.started_at, a.ended_at, i + 1
      FROM actions a, n WHERE a.run_id = 'seed' AND a.step_idx = 0`,
    ).run(huge);
  }
})();
const count = d.prepare('SELECT COUNT(*) FROM runs').pluck().get();
d.close();
console.log(`[make-journal] ${db}: ${count} runs${huge ? `, run "huge" with ${huge} steps and actions` : ''} in ${Date.now() - t0} ms`);
