// Starting and resuming runs: input validation, the lease, one attempt of the script, and its final status.

import { randomBytes } from 'node:crypto';
import { ErrorCodes, LogbookError, RunSuspended, describe, errorRecord } from './errors';
import type { AgentDefinition } from './define';
import { Faults } from './faults';
import { fromJournalJson, toJournalJson } from './json';
import { validate } from './schema';
import type { RuntimeHooks } from './hooks';
import { RunSession, emptyStats, type AttemptStats } from './session';
import { acquireRun, createRun, notFound } from './store/lease';
import { currentOwner } from './store/owner';
import { RunWriter, type Durability, type Lease } from './store/writer';
import type { Store } from './store';
import type { Decision, RunStatus } from './types';
import { compensateWithLease, type CompensationReport } from './compensate';
import { ACTION_WORDS, actionDisplay, runAllows } from './policy';

export interface EngineOptions {
  readonly faults?: Faults;
  readonly hooks?: RuntimeHooks;
  readonly durability?: Durability;
  /** Who is driving, shown to anyone who finds the lease held (cli, debugger, rehearsal). */
  readonly role?: string;
  readonly log?: (line: string) => void;
}

export interface RunOutcome {
  readonly runId: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly attempt: number;
  readonly output?: unknown;
  readonly error?: { readonly code?: string; readonly name: string; readonly message: string };
  /** What the run waits for when it stopped in needs-decision or awaiting-approval. */
  readonly waitingOn?: { readonly actionId: string; readonly reason: string };
  readonly stats: AttemptStats;
  readonly compensation?: CompensationReport;
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export async function startRun(
  store: Store,
  agent: AgentDefinition,
  opts: EngineOptions & { readonly script: string; readonly input: unknown; readonly runId?: string; readonly forkedFrom?: { runId: string; stepIdx: number } },
): Promise<RunOutcome> {
  const runId = opts.runId ?? newRunId();
  if (!RUN_ID.test(runId)) {
    throw new LogbookError(ErrorCodes.USAGE, `The run id ${JSON.stringify(runId)} is not usable.`, 'Use letters, digits, and . _ : - (up to 128 characters), starting with a letter or digit.');
  }
  const v = await validate(agent.input, opts.input ?? {});
  if (!v.ok) {
    throw new LogbookError(ErrorCodes.INVALID_INPUT, `The input for agent ${agent.name} is invalid: ${v.message}.`, "Pass --input with JSON that matches the agent's input schema.", { agent: agent.name });
  }
  const inputJson = toJournalJson(v.value, `The input of agent ${agent.name}`, 'Pass plain JSON as input.');
  const lease = createRun(store.db, store.reader, { id: runId, agent: agent.name, script: opts.script, input: inputJson, ...(opts.forkedFrom ? { forkedFrom: opts.forkedFrom } : {}) }, currentOwner(opts.role ?? 'cli'));
  return drive(store, agent, lease, v.value, opts);
}

/** Checks that a run can be resumed by this agent, before anything is written. */
export function checkResumable(store: Store, agent: AgentDefinition, runId: string, decisions: Record<string, Decision>): void {
  const row = store.reader.run(runId);
  if (!row) throw notFound(runId);
  if (row.agent !== agent.name) {
    throw new LogbookError(ErrorCodes.RUN_NOT_RESUMABLE, `Run ${runId} belongs to agent ${row.agent}, but the script defines ${agent.name}.`, `Resume it with its own script (${row.script}).`, { runId });
  }
  // The policy says what may go forward; the lease (taken next) says whether someone else is driving it.
  const blocker = runAllows(row.status, false).resumeBlocker;
  if (blocker === 'completed') {
    throw new LogbookError(ErrorCodes.RUN_NOT_RESUMABLE, `Run ${runId} already completed; there is nothing to resume.`, `Start a new run with \`logbook run ${row.script}\`, or compensate this one with \`logbook compensate ${runId}\`.`, { runId, status: row.status });
  }
  if (blocker === 'compensation') {
    throw new LogbookError(ErrorCodes.RUN_NOT_RESUMABLE, `Run ${runId} is ${row.status}; it cannot go forward any more.`, `Finish the compensation with \`logbook compensate ${runId}\`.`, { runId, status: row.status });
  }
  for (const [id, decision] of Object.entries(decisions)) {
    const a = store.reader.action(runId, id);
    if (!a) throw new LogbookError(ErrorCodes.ACTION_NOT_FOUND, `Run ${runId} has no action ${id} to decide.`, `See the in-doubt actions with \`logbook show ${runId}\`.`, { runId, actionId: id });
    if (!ACTION_WORDS[actionDisplay(a, false)].canDecide) {
      throw new LogbookError(ErrorCodes.BAD_DECISION, `Action ${id} is ${a.status}, not in doubt, so "${decision}" cannot be applied.`, 'Only decide actions shown as "in doubt" by `logbook show`.', { runId, actionId: id });
    }
  }
}

export async function resumeRun(
  store: Store,
  agent: AgentDefinition,
  runId: string,
  opts: EngineOptions & { readonly decisions?: Record<string, Decision> },
): Promise<RunOutcome> {
  const decisions = opts.decisions ?? {};
  checkResumable(store, agent, runId, decisions);
  const lease = acquireRun(store.db, store.reader, runId, currentOwner(opts.role ?? 'cli'), { status: 'running', newAttempt: true, purpose: 'resume' });
  const row = store.reader.run(runId);
  if (!row) throw notFound(runId);
  const writer = new RunWriter(store.db, lease, store.reader.nextActionSeq(runId), opts.durability);
  for (const [id, decision] of Object.entries(decisions)) {
    const a = store.reader.action(runId, id);
    if (a) writer.decision(a.step_idx, id, decision);
  }
  return drive(store, agent, lease, fromJournalJson(row.input) ?? {}, opts, writer);
}

/** Errors that mean the script or journal is wrong, not that the world refused: never auto-compensated. */
function isProgrammingError(err: unknown): boolean {
  const codes: string[] = [ErrorCodes.NONDETERMINISM, ErrorCodes.KEY_CONFLICT, ErrorCodes.NOT_JSON, ErrorCodes.INVALID_ARGS, ErrorCodes.INVALID_DEFINITION, ErrorCodes.VERSION_CHANGED, ErrorCodes.ACTION_OUTSIDE_STEP, ErrorCodes.STEP_OUTSIDE_RUN, ErrorCodes.VERIFY_FAILED, ErrorCodes.JOURNAL_INVALID];
  return err instanceof LogbookError && codes.includes(err.code);
}

async function drive(store: Store, agent: AgentDefinition, lease: Lease, input: unknown, opts: EngineOptions, existingWriter?: RunWriter): Promise<RunOutcome> {
  const writer = existingWriter ?? new RunWriter(store.db, lease, store.reader.nextActionSeq(lease.runId), opts.durability);
  const stats = emptyStats();
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const session = new RunSession({ reader: store.reader, writer, agent, input, faults: opts.faults ?? new Faults(), hooks: opts.hooks, stats, log });
  const heartbeat = setInterval(() => {
    try {
      writer.heartbeat();
    } catch {
      // A lost lease surfaces on the next real write.
    }
  }, 10_000);
  heartbeat.unref();
  const base = { runId: lease.runId, agent: agent.name, attempt: lease.attempt, stats };
  let released = false;
  try {
    if (opts.hooks?.pause) {
      await opts.hooks.pause({ kind: 'run:entry', run: { id: lease.runId, agent: agent.name, attempt: lease.attempt, status: 'running', input } });
    }
    const output = await agent.run(session.api, input);
    await session.settle();
    if (session.suspended) throw session.suspended;
    // A completed run holds nothing in doubt: errors the script caught are settled before it completes.
    await session.settleLeftovers();
    const outputJson = toJournalJson(output, `The output of agent ${agent.name}`, 'Return plain JSON from run().');
    writer.flush();
    writer.runStatus('completed', { output: outputJson, data: { stats: summary(stats) } });
    if (opts.hooks?.pause) await opts.hooks.pause({ kind: 'run:end', run: { id: lease.runId, agent: agent.name, attempt: lease.attempt, status: 'completed', input } });
    return { ...base, status: 'completed', output };
  } catch (thrown) {
    await session.settle();
    const err = session.suspended ?? thrown;
    if (err instanceof RunSuspended) {
      if (err.status === 'interrupted') writer.note('run.stopped', { reason: err.reason });
      return { ...base, status: err.status, ...(err.actionId ? { waitingOn: { actionId: err.actionId, reason: err.reason } } : {}) };
    }
    const record = errorRecord(err);
    const error = { name: record.name, message: record.message, ...(record.code ? { code: record.code } : {}) };
    if (err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST) {
      released = true;
      return { ...base, status: 'failed', error };
    }
    writer.runStatus('failed', { error: record, data: { error: { ...error }, stats: summary(stats) } });
    // An error that left an action in doubt does not say the run failed (it may have succeeded): the run stays resumable,
    // and the declared policy does not undo effects whose outcome nobody knows yet.
    const unknownOutcome = store.reader.inDoubtAfterError(lease.runId).length > 0;
    if (unknownOutcome && agent.onFailure === 'compensate') log(`${agent.name}: the run failed with an action in doubt after an error; it is not compensated: resume reconciles it.`);
    if (agent.onFailure === 'compensate' && !isProgrammingError(err) && !unknownOutcome) {
      log(`${agent.name}: the run failed (${describe(err)}); its declared policy compensates it.`);
      writer.release();
      released = true;
      const relock = acquireRun(store.db, store.reader, lease.runId, currentOwner(opts.role ?? 'cli'), { status: 'compensating', newAttempt: false, purpose: 'compensate (declared policy)' });
      const compensation = await compensateWithLease(store, relock, opts);
      return { ...base, status: compensation.status, error, compensation };
    }
    return { ...base, status: 'failed', error };
  } finally {
    clearInterval(heartbeat);
    if (!released) {
      try {
        writer.release();
      } catch {
        // The run's status is already durable; a lease left behind is recognised as dead by its pid.
      }
    }
  }
}

function summary(s: AttemptStats): Record<string, number> {
  return { stepsReplayed: s.stepsReplayed, stepsRun: s.stepsRun, stepsRedone: s.stepsRedone, actionsSkipped: s.actionsSkipped, actionsExecuted: s.actionsExecuted, reconciled: s.reconciled.length };
}

/** Records an approval or rejection for an action waiting at its gate (the run itself is not running). */
export function recordApproval(store: Store, runId: string, actionId: string, approved: boolean, note: string | null, role = 'cli'): void {
  const a = store.reader.action(runId, actionId);
  if (!store.reader.run(runId)) throw notFound(runId);
  if (!a) throw new LogbookError(ErrorCodes.ACTION_NOT_FOUND, `Run ${runId} has no action ${actionId}.`, `See the actions waiting for approval with \`logbook show ${runId}\`.`, { runId, actionId });
  if (a.status !== 'awaiting-approval' || a.approval !== 'pending') {
    throw new LogbookError(ErrorCodes.BAD_DECISION, `Action ${actionId} is not waiting for approval (it is ${a.approval === 'approved' ? 'already approved' : a.status}).`, 'Only actions shown as "awaiting approval" can be approved or rejected.', { runId, actionId });
  }
  const lease = acquireRun(store.db, store.reader, runId, currentOwner(role), { status: 'awaiting-approval', newAttempt: false, purpose: approved ? 'approve' : 'reject' });
  const writer = new RunWriter(store.db, lease, store.reader.nextActionSeq(runId));
  try {
    writer.approval(a.step_idx, actionId, approved, note);
  } finally {
    writer.release();
  }
}
