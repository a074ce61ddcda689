// Resume of big runs, each in a fresh child process: time to the first new action, and the child's peak RSS.

import { spawnJson } from './children';
import type { ResumeChildReport } from './resumeChild';

/** Runs the bundled resume child on one journal; rejects if it does not reach its probe or re-executes anything. */
export async function resumeInChild(
  childJs: string,
  file: string,
  runId: string,
  done: number,
  timeoutMs = 180_000,
  mode: 'resume' | 'reads' | 'check' = 'resume',
): Promise<ResumeChildReport> {
  // --expose-gc only lets the child measure what it retains after the timed interval; it changes nothing before.
  const args = [file, runId, String(done), ...(mode === 'resume' ? [] : [mode])];
  const { json: r } = await spawnJson<ResumeChildReport>(childJs, args, { timeoutMs, nodeArgs: ['--expose-gc'] });
  if (!r.ok) throw new Error(`resume of ${runId} failed: ${r.error ?? 'no report'}`);
  if (r.executedBefore !== 0) throw new Error(`resume of ${runId} executed ${r.executedBefore} journaled effects again: the journal did not replay`);
  return r;
}
