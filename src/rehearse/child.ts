// Runs the `logbook` CLI as a real child process on a scratch journal, and reports how it ended (exit code or signal).

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCodes, LogbookError } from '../runtime/errors';
import { JOURNAL_ENV_NAMES } from '../shared/journalNames';

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI next to this bundle (dist/cli.js): rehearsals drive real processes, never an in-process run. */
export function cliPath(): string {
  const p = path.join(__dirname, 'cli.js');
  if (!fs.existsSync(p)) {
    throw new LogbookError(ErrorCodes.USAGE, `The rehearsal needs the built CLI at ${p}.`, 'Run `npm run build` first.');
  }
  return p;
}

/** Environment for a child: its own journal directory for provider state, no inherited tracing, no colour. */
export function childEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...extra };
  if (!('LOGBOOK_TRACE_FAULTS' in extra)) delete env.LOGBOOK_TRACE_FAULTS;
  if (!('LOGBOOK_CRASH_NOTE' in extra)) delete env.LOGBOOK_CRASH_NOTE;
  // A rehearsal's killed scratch runs are no one's traces.
  env.OTEL_SDK_DISABLED = 'true';
  for (const name of JOURNAL_ENV_NAMES) delete env[name];
  return env;
}

export function runCli(cli: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
