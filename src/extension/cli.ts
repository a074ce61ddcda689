// Runs the `logbook` CLI on the configured Node for every command that changes a run: the host never writes the journal.

import { spawn } from 'node:child_process';
import { RUN_WORDS } from '../reader/readerProtocol';

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

/** What a person is told when a CLI call that changes a run ended: how loud, and the words. */
export interface CliReport {
  readonly level: 'info' | 'warning' | 'error';
  readonly text: string;
}

/**
 * How a CLI call ended, in the run's own status words. `logbook send` answers with its report and, when it continued
 * the run, the run's outcome (its own `outcome`, kept or duplicate, is a word, not a run's outcome); `send` and
 * `approve` say `continued: "held"` when another driver (a worker, a resume) holds the run and takes what was sent.
 */
export function cliReport(r: CliResult): CliReport {
  const sent = r.json as { outcome?: unknown; continued?: unknown; runId?: unknown; owner?: unknown } | undefined;
  if (r.code === 0 && sent?.continued === 'held') {
    const owner = typeof sent.owner === 'string' ? sent.owner : 'another process';
    return { level: 'info', text: `Run ${String(sent.runId)}: kept for the session that holds it (${owner}), which takes it` };
  }
  if (r.code !== 0 && r.code !== 3) return { level: 'error', text: `Agent Logbook: ${cliProblem(r)}` };
  const j = (typeof sent?.outcome === 'object' && sent.outcome !== null ? sent.outcome : r.json) as
    { runId?: string; status?: string; waitingOn?: { reason?: string } } | undefined;
  const status = j?.status;
  const word = status && status in RUN_WORDS ? RUN_WORDS[status as keyof typeof RUN_WORDS].word : (status ?? 'done');
  return { level: r.code === 3 ? 'warning' : 'info', text: `Run ${j?.runId ?? ''}: ${word}${j?.waitingOn?.reason ? ` — ${j.waitingOn.reason}` : ''}` };
}
