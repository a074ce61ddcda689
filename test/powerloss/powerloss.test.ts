// The power-loss harness in the suite: its default campaign finds no violation, and its negative controls are caught.

import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as path from 'node:path';

const MAIN = path.join(__dirname, 'main.ts');
const TSX = require.resolve('tsx/cli');

interface Report {
  readonly perModel: Record<string, { cuts: number; resumed: number; violations: string[] }>;
  readonly controls: {
    noSync: { cuts: number; lostCommits: number };
    failedSyncs: Array<{ sync: number; ended: string; ackedAfter: number; failed: boolean }>;
    cli: { sync: number; exit: number | null; dbIo: boolean; failed: boolean; completed: boolean };
    splitMigration: { cuts: number; mixed: number };
    diskFullSplit: { points: number; mixed: number };
  };
  readonly diskFull: { points: number; refused: number; violations: string[] };
  readonly diskFullRuns: { points: number; ended: Record<string, number>; violations: string[] };
}

/** Its own process: the shim becomes the default VFS of the process that loads it, and mocha's must stay untouched. */
function runHarness(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSX, MAIN, '--json'], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('power loss (test/powerloss)', function () {
  this.timeout(300_000);
  let out: { code: number; stdout: string; stderr: string };
  let report: Report;

  before(async () => {
    out = await runHarness();
    const json = out.stderr.split('\n').find((l) => l.startsWith('{'));
    assert.ok(json, `the harness printed no report (exit ${out.code}):\n${out.stderr}`);
    report = JSON.parse(json) as Report;
  });

  it('cuts at least 1,000 times per model and finds no violation', () => {
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 1, out.stdout);
    assert.match(lines[0]!, /^powerloss: \d+ cuts, 0 violations \(sqlite model: \d+ cuts, 0 violations; ext4-ordered: \d+ cuts, 0 violations\)$/);
    for (const [model, r] of Object.entries(report.perModel)) {
      assert.ok(r.cuts >= 1000, `${model}: ${r.cuts} cuts`);
      assert.ok(r.resumed > 0, `${model}: no cut was resumed`);
      assert.deepEqual(r.violations, [], model);
    }
    assert.equal(out.code, 0, out.stderr);
  });

  it('an upgrade on a disk that fills at any of 40 of its writes is refused with LB_DB_DISK_FULL or completes, and loses nothing', () => {
    assert.ok(report.diskFull.points >= 30, JSON.stringify(report.diskFull));
    assert.ok(report.diskFull.refused > 0, 'the disk never filled before the upgrade committed');
    assert.deepEqual(report.diskFull.violations, []);
  });

  it('a run on a disk that fills at any of 8 of its writes (each scenario) stops with LB_DB_DISK_FULL, keeps its promises, and resumes once', () => {
    const r = report.diskFullRuns;
    assert.ok(r.points >= 40, JSON.stringify(r));
    assert.ok((r.ended['interrupted LB_DB_DISK_FULL'] ?? 0) > 0, `no run was stopped mid-way: ${JSON.stringify(r.ended)}`);
    assert.deepEqual(r.violations, []);
  });

  it('finds a schema of no version when a migration whose statements commit one by one meets a full disk', () => {
    assert.ok(report.controls.diskFullSplit.mixed > 0, JSON.stringify(report.controls.diskFullSplit));
  });

  it('finds lost acknowledged commits in a journal whose fsyncs do nothing', () => {
    assert.ok(report.controls.noSync.lostCommits > 0, JSON.stringify(report.controls.noSync));
  });

  it('finds a schema of no version in a migration whose statements commit one by one', () => {
    assert.ok(report.controls.splitMigration.mixed > 0, JSON.stringify(report.controls.splitMigration));
  });

  it('never acknowledges a commit whose fsync failed: the run stops with LB_DB_IO', () => {
    assert.ok(report.controls.failedSyncs.length > 0);
    for (const f of report.controls.failedSyncs) {
      assert.ok(f.failed, `fsync #${f.sync} was not reached`);
      assert.match(f.ended, /\bLB_DB_IO\b/);
      assert.equal(f.ackedAfter, 0, `fsync #${f.sync}`);
    }
  });

  it('logbook run whose journal fsync fails exits 5 with LB_DB_IO, not reporting the run completed', () => {
    const c = report.controls.cli;
    assert.ok(c.failed, `fsync #${c.sync} was not reached`);
    assert.equal(c.exit, 5);
    assert.ok(c.dbIo && !c.completed, JSON.stringify(c));
  });
});
