// LangGraph's checkpointer validation suite against agent-logbook/langgraph's saver (SQLite and a real PostgreSQL).
//
// The suite is a vitest library (its validate-checkpointer CLI is broken in 1.1.1), so it runs under vitest here,
// after mocha. A test the suite skipped counts as a failure: nothing is to be skipped for Logbook's saver.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-lg-report-')), 'report.json');
const r = spawnSync(
  process.execPath,
  [
    path.join(root, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--globals',
    '--config',
    'test/langgraph/vitest.config.mjs',
    '--reporter=dot',
    '--reporter=json',
    `--outputFile.json=${out}`,
  ],
  { cwd: root, stdio: 'inherit' },
);
if (r.status !== 0) process.exit(r.status ?? 1);
const report = JSON.parse(fs.readFileSync(out, 'utf8'));
const skipped = report.testResults.flatMap((f) => f.assertionResults).filter((t) => t.status !== 'passed');
if (skipped.length > 0 || report.numTotalTests === 0) {
  console.error(`[test:langgraph] ${skipped.length} of ${report.numTotalTests} tests did not pass (skipped counts):`);
  for (const t of skipped.slice(0, 20)) console.error(`  ${t.status}: ${t.fullName}`);
  process.exit(1);
}
console.log(`[test:langgraph] ${report.numPassedTests} of LangGraph's checkpointer validation tests passed, none skipped.`);
