// What the session says when a run ends: its exit code, and after a SIGKILL where it died and what is in doubt.

import type { Postmortem } from '../link/runnerProtocol';
import { EXIT } from '../runtime/errors';
import { runExitCode } from '../runtime/policy';
import { RUN_STATUSES, type RunStatus } from '../runtime/types';
import { resumeHint } from '../link/hints';

export const KILLED_EXIT_CODE = 137;

/** The policy's exit codes, as the CLI's: 0 done, 1 failed or stopped before its end, 3 waiting for a person; a crash is 128 + SIGKILL. */
export function exitCodeFor(status: string): number {
  return (RUN_STATUSES as readonly string[]).includes(status) || status === 'interrupted' ? runExitCode(status as RunStatus) : EXIT.failed;
}

export interface CrashFacts {
  readonly pid: number | undefined;
  /** Who sent the SIGKILL: the kill request, the terminate grace period running out, or someone else. */
  readonly cause: 'kill' | 'terminate-timeout' | 'other';
  /** Where the debugger had the run paused when it was killed, if it was. */
  readonly pausedAt: string | undefined;
  readonly report: Postmortem | undefined;
  readonly reportError: string | undefined;
}

export function crashMessage(f: CrashFacts): string {
  const lines: string[] = [];
  const pid = f.pid ?? '?';
  lines.push(
    f.cause === 'kill'
      ? `Killed the run: the runner (pid ${pid}) got SIGKILL, a real crash of the process that writes the journal; nothing was flushed or cleaned up.`
      : f.cause === 'terminate-timeout'
        ? `The run did not reach a boundary within the terminate grace period (it was inside a long effect), so the runner (pid ${pid}) was killed with SIGKILL.`
        : `The runner (pid ${pid}) died with SIGKILL (a crashAt fault point fired, or the system killed it).`,
  );
  if (f.pausedAt) lines.push(`It was paused at: ${f.pausedAt}.`);
  const r = f.report;
  if (!r?.runId) {
    lines.push(f.reportError ? `The journal could not be read after the crash: ${f.reportError}` : 'It died before the run started: nothing was journaled.');
    return lines.join('\n');
  }
  if (r.lastStep)
    lines.push(
      `Run ${r.runId} died in step ${r.lastStep.idx + 1} "${r.lastStep.name}" (${r.lastStep.status === 'started' ? 'started, not checkpointed' : r.lastStep.status}).`,
    );
  else lines.push(`Run ${r.runId} died before its first step.`);
  for (const a of r.inDoubt) {
    lines.push(
      `In doubt: ${a.type} ${a.id} was started but not committed (the journal counts ${a.executions} call(s) of its execute, and a call the crash cut short is not counted); resuming reconciles it (verify, re-execute, or a decision).`,
    );
  }
  for (const a of r.compensationInDoubt)
    lines.push(`In doubt: the inverse of ${a.type} ${a.id} was started but not committed; compensating again repeats it with the same key.`);
  if (r.inDoubt.length === 0 && r.compensationInDoubt.length === 0) lines.push('No action is in doubt: the crash fell between actions.');
  lines.push(resumeHint(r.runId));
  return lines.join('\n');
}
