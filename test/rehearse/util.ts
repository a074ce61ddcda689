// Helpers for rehearsal tests: `logbook rehearse` as a real child process, its JSON report, and provider records.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI } from '../helpers';

export interface RehearseRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly report: any;
}

/**
 * Runs `logbook rehearse <args>` (no --journal: every campaign gets its own scratch journal). The report is read from
 * --json output, or with `human` from a --report file while stdout keeps the human output.
 */
export function rehearse(cwd: string, args: string[], env: Record<string, string> = {}, human = false): RehearseRun {
  const reportFile = path.join(cwd, 'rehearsal-report.json');
  const r = spawnSync(process.execPath, [CLI, 'rehearse', ...args, ...(human ? ['--report', reportFile] : ['--json'])], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  let report: any;
  try {
    report = JSON.parse(human ? fs.readFileSync(reportFile, 'utf8') : r.stdout);
  } catch {
    throw new Error(`rehearse printed no JSON (exit ${r.status}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, report };
}

export function readJson(dir: string, file: string): any {
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
}

/** A readable list of what broke, for assertion messages. */
export function brokenSummary(report: any): string {
  return (report.campaigns as any[])
    .filter((c) => !c.finished || !c.sameOutput || c.duplicates.length || c.sameEffects === false || c.unsettled.length || c.error)
    .map((c) => `${c.point.spec}: ${JSON.stringify({ error: c.error, status: c.status, dup: c.duplicates, diff: c.effectsDiff })}`)
    .join('\n');
}
