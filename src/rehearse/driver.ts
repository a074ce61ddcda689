// Drives one run on a scratch journal to its end through real CLI processes, deciding and approving where it stops.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../runtime/store';
import { recordApproval } from '../runtime/engine';
import { sendEvent } from '../runtime/send';
import type { ProbeSeen } from './probe';
import type { Decision, StoredRunStatus } from '../runtime/types';
import { childEnv, runCli, type ChildResult } from './child';
import { actionOf, committedByType, pendingApprovals, readRunState } from './campaignReadout';
import { createScratch, journalOf } from './scratchJournal';

export type Command = 'run' | 'resume' | 'compensate';

export interface ProcessContext {
  /** 1-based count of driving processes (run / resume / compensate) in this drive. */
  readonly index: number;
  readonly command: Command;
  /** Arguments after the command, without --crash-at (so a caller can rehearse the same process on a copy). */
  readonly args: readonly string[];
  readonly kills: number;
}

export interface DriveOptions {
  readonly cli: string;
  readonly script: string;
  readonly input: unknown;
  readonly runId: string;
  /** Scratch directory: journal.db (unless `db`) and the providers' state files. */
  readonly dir: string;
  /** A PostgreSQL server to keep the scratch journal on (a schema per scratch directory), or null for a SQLite file. */
  readonly db: string | null;
  /** The crash spec to arm for a process, if any. */
  readonly arm?: (ctx: ProcessContext) => Promise<string | undefined> | string | undefined;
  /** A file to trace this process's fault points into, if any. */
  readonly traceFile?: (ctx: ProcessContext) => string | undefined;
  readonly probe: () => Promise<ProbeSeen | undefined>;
  readonly maxProcesses?: number;
  /** What a run waiting in run.waitFor is sent (`--event NAME=JSON`), by name: the k-th wait for a name gets the k-th (or the last). */
  readonly events?: Readonly<Record<string, readonly unknown[]>>;
}

export interface DriveDecision {
  readonly type: string;
  readonly id: string;
  readonly decision: Decision;
  readonly source: 'provider record' | 'assumed';
  /** Decided "happened": whether the probe gave the effect's result, which the decision then carries (--result). */
  readonly withResult?: boolean;
}

export interface DriveResult {
  readonly status: StoredRunStatus | 'not-started';
  readonly processes: number;
  readonly kills: string[];
  readonly decisions: DriveDecision[];
  readonly approvals: Array<{ type: string; id: string }>;
  readonly saved: Record<string, number>;
  /** Set when a process ended in a way the rehearsal cannot continue from (bad usage, a stray kill, a loop). */
  readonly error: string | null;
  /** What was run, in order, as `logbook` argv without --journal and --json: a person can replay it (see reproduction()). */
  readonly commands: string[][];
  /**
   * Actions whose call of execute had returned when a kill came, once per such call: the journal counts a call with
   * the write that settles it, so these calls are in no count (the killed process's last words name them).
   */
  readonly uncounted: string[];
}

/** A crash spec whose point makes execute throw instead of killing the process. */
const THROW_SPEC = /@after-execute-throw$/;

export const TERMINAL: readonly StoredRunStatus[] = ['completed', 'failed', 'compensated', 'compensation-failed'];

export { journalOf };

export function describeExit(r: ChildResult): string {
  const how = r.signal ? `was killed by ${r.signal}` : `exited with ${r.code ?? '?'}`;
  const why = r.stderr.trim().split('\n').filter(Boolean).slice(-2).join(' ');
  return `${how}${why ? `: ${why}` : ''}`;
}

/** The call a killed process's last words left uncounted ($LOGBOOK_CRASH_NOTE), read once: the file is removed. */
function lastWords(file: string): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  try {
    const words = JSON.parse(fs.readFileSync(file, 'utf8')) as { uncounted?: unknown };
    return typeof words.uncounted === 'string' ? words.uncounted : undefined;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

export async function drive(o: DriveOptions): Promise<DriveResult> {
  createScratch(o.dir, o.db);
  const db = journalOf(o.dir, o.db);
  const kills: string[] = [];
  const decisions: DriveDecision[] = [];
  const approvals: Array<{ type: string; id: string }> = [];
  const saved: Record<string, number> = {};
  const commands: string[][] = [];
  const uncounted: string[] = [];
  const note = path.join(o.dir, 'crash-note.json');
  let processes = 0;
  /** How the latest process ended, said when the journal shows nothing of it. */
  let lastExit = 'did not start';
  /** Set after an injected throw failed the run: the run goes on with a resume, as it would after a real timeout. */
  let resumeFailed = false;
  const result = (status: DriveResult['status'], error: string | null = null): DriveResult => ({
    status,
    processes,
    kills,
    decisions,
    approvals,
    saved,
    error,
    commands,
    uncounted,
  });
  for (;;) {
    const state = readRunState(db, o.runId);
    let command: Command;
    /** The run the command is for: the rehearsed run, or its child that waits for a decision. */
    let target = o.runId;
    const extra: string[] = [];
    if (!state) {
      if (processes > 0) return result('not-started', `the run was not created: its first process died before writing it (it ${lastExit})`);
      command = 'run';
    } else if (TERMINAL.includes(state.status) && !(resumeFailed && state.status === 'failed')) {
      return result(state.status);
    } else if (
      state.status === 'needs-decision' &&
      state.decisionRun &&
      state.decisionRun !== o.runId &&
      !state.compensating &&
      readRunState(db, state.decisionRun)?.status !== 'needs-decision'
    ) {
      // Its child (run.child) was decided and went on: resuming the run re-attaches to it.
      command = 'resume';
    } else if (state.status === 'needs-decision') {
      const id = state.decisionFor;
      // A child's doubt (run.child) is decided on the child, which then goes on; the next round resumes this run.
      const on = state.decisionRun ?? o.runId;
      const action = id === null ? undefined : actionOf(db, on, id);
      if (!id || !action) return result(state.status, 'the run needs a decision, but the journal does not say for which action');
      const record = await o.probe();
      const seen = record?.keys[action.type];
      const decision: Decision = seen?.includes(id) ? 'happened' : 'not-happened';
      // As a person who looked the effect up would: "happened", with what it returned when the provider says.
      const results = record?.results[action.type];
      const withResult = decision === 'happened' && results?.has(id) === true;
      decisions.push({ type: action.type, id, decision, source: seen ? 'provider record' : 'assumed', ...(decision === 'happened' ? { withResult } : {}) });
      extra.push('--decide', `${id}=${decision}`);
      if (withResult) extra.push('--result', JSON.stringify(results?.get(id)));
      command = state.compensating ? 'compensate' : 'resume';
      // A compensation takes the decisions down to its children itself.
      if (on !== o.runId && !state.compensating) target = on;
    } else if (state.status === 'waiting') {
      // As the person or system the run waits for would: the event given for it, sent once (its id dedupes a repeat).
      const store = openStore(db);
      try {
        // A parent waiting for its child's event (run.child): the event goes to the child that waits for it.
        const row = store.reader.run(o.runId);
        const leaf = row ? store.waitingLeaf(row) : undefined;
        const to = leaf?.runId ?? o.runId;
        const name = leaf?.event ?? row?.waiting_for ?? '';
        const given = o.events?.[name];
        if (!given?.length) return result(state.status, `the run waits for event ${JSON.stringify(name)}: pass --event ${name}=JSON to rehearse past it`);
        const k = store.reader.inbox.ofName(to, name).length;
        const data = given[Math.min(k, given.length - 1)];
        const id = `rehearsal:${name}#${k}`;
        sendEvent(store, to, name, data, { id, role: 'rehearsal', what: 'logbook rehearse --event' });
        commands.push(['send', to, name, '--data', JSON.stringify(data), '--id', id, '--no-resume']);
      } finally {
        store.close();
      }
      command = 'resume';
    } else if (state.status === 'awaiting-approval') {
      const store = openStore(db);
      try {
        for (const a of pendingApprovals(db, o.runId)) {
          recordApproval(store, a.run_id, a.id, true, 'approved automatically by logbook rehearse', 'rehearsal');
          approvals.push({ type: a.type, id: a.id });
          commands.push(['approve', a.run_id, a.id, '--no-resume']);
        }
      } finally {
        store.close();
      }
      command = 'resume';
    } else {
      command = state.status === 'compensating' ? 'compensate' : 'resume';
    }
    resumeFailed = false;
    processes++;
    if (processes > (o.maxProcesses ?? 40)) return result(state?.status ?? 'not-started', `the run did not end after ${processes - 1} processes`);
    const args = command === 'run' ? [o.script, '--input', JSON.stringify(o.input ?? {}), '--run-id', o.runId] : [target];
    const ctx: ProcessContext = { index: processes, command, args: [...args, ...extra, '--journal', db, '--json'], kills: kills.length };
    const spec = await o.arm?.(ctx);
    const trace = o.traceFile?.(ctx);
    commands.push([command, ...args, ...extra, ...(spec ? ['--crash-at', spec] : [])]);
    // In the user's own working directory, as `logbook run` would be: a script that reads local files finds them.
    // The journal and the providers' state ($LOGBOOK_STATE_DIR) are the campaign's own scratch files.
    const r: ChildResult = await runCli(
      o.cli,
      [command, ...ctx.args, ...(spec ? ['--crash-at', spec] : [])],
      childEnv(o.dir, { ...(trace ? { LOGBOOK_TRACE_FAULTS: trace } : {}), ...(spec ? { LOGBOOK_CRASH_NOTE: note } : {}) }),
      process.cwd(),
    );
    lastExit = describeExit(r);
    if (spec && !r.signal && THROW_SPEC.test(spec)) {
      const after = readRunState(db, o.runId);
      if ((after?.injected ?? 0) > (state?.injected ?? 0)) {
        kills.push(spec);
        resumeFailed = true;
        continue;
      }
    }
    if (r.signal === 'SIGKILL' && spec) {
      kills.push(spec);
      const cut = lastWords(note);
      if (cut !== undefined) uncounted.push(cut);
      for (const [type, n] of Object.entries(committedByType(db, o.runId))) saved[type] = (saved[type] ?? 0) + n;
      continue;
    }
    if (r.signal || r.code === 2 || (r.code !== 0 && r.code !== 1 && r.code !== 3)) {
      return result(readRunState(db, o.runId)?.status ?? 'not-started', `\`logbook ${command}\` ${describeExit(r)}`);
    }
  }
}
