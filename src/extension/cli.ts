// Runs the `logbook` CLI on the configured Node for every command that changes a run: the host never writes the journal.

import { spawn } from 'node:child_process';

export interface CliCall {
  readonly node: string;
  readonly cli: string;
  readonly db: string;
  readonly cwd: string | undefined;
  /** Variables from the logbook.envFile / logbook.env settings, over the editor's own environment. */
  readonly env: Record<string, string>;
  readonly log: (level: 'info' | 'warn' | 'error', line: string) => void;
}

export interface CliResult {
  readonly code: number | null;
  readonly json: unknown;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `logbook <args> --journal <db> --json`; resolves with the parsed output, whatever the exit code. */
export function runCli(call: CliCall, args: readonly string[]): Promise<CliResult> {
  const argv = [call.cli, ...args, '--journal', call.db, '--json'];
  call.log('info', `$ ${call.node} ${argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(call.node, argv, {
      cwd: call.cwd,
      env: { ...process.env, ...call.env, NO_COLOR: '1', ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      for (const line of d.split('\n').filter(Boolean)) call.log('info', `logbook: ${line}`);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          err.code === 'ENOENT'
            ? `Could not start "${call.node}" (logbook.runtimeExecutable): no such executable. Set logbook.runtimeExecutable to a Node.js 20 or newer.`
            : `Could not run the logbook CLI with "${call.node}": ${err.message}.`,
        ),
      );
    });
    child.on('close', (code) => {
      let json: unknown = undefined;
      try {
        json = stdout.trim() ? (JSON.parse(stdout) as unknown) : undefined;
      } catch {
        json = undefined;
      }
      call.log(code === 0 ? 'info' : 'warn', `logbook ${args[0] ?? ''} exited with ${code}`);
      resolve({ code, json, stdout, stderr });
    });
  });
}

/** The message a person should read from a CLI failure: its `error [CODE] …` line, else the last stderr line. */
export function cliProblem(r: CliResult): string {
  const lines = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const err = lines.find((l) => l.startsWith('error')) ?? lines[lines.length - 1];
  const fromJson = (r.json as { error?: { message?: string } } | undefined)?.error?.message;
  return fromJson ?? err ?? `logbook exited with code ${r.code}`;
}
