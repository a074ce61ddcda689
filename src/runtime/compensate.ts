// Compensation: settle in-doubt actions, then apply each committed action's inverse newest-first, bracketed.

import { ErrorCodes, LogbookError, describe, errorRecord, runNotFound } from './errors';
import { actionRegistry, runTimeActionTypePrefixes, type ActionDefinition } from './define';
import { Faults } from './faults';
import { actionPlace, fromJournalJson, toJournalJson } from './json';
import { journaledInput, readBackFirst } from './input';
import { isStorageError } from './store/storageError';
import { announceDriving, type ActionSnapshot, type OnDriving, type PauseKind, type RunSnapshot, type RuntimeHooks } from './hooks';
import type { ReconcileHow } from './policy';
import { journaledError, settleInDoubt, settlePlan } from './settle';
import { decisionAsker } from './carryOut';
import { endSession, withNewSession } from './store';
import type { Lease } from './store';
import type { ActionRow, RunRow } from './store/rows';
import type { Store } from './store';
import { journaledDecisions, type DecisionInput } from './decisions';
import type { CompensationReport } from './outcomes';
import { afterAttempt } from './trace/attempt';
import type { RunStatus } from './types';
import type { TraceExportConfig } from './trace/config';

export type { CompensationReport } from './outcomes';

export interface CompensateOptions {
  readonly faults?: Faults;
  readonly hooks?: RuntimeHooks;
  readonly role?: string;
  readonly decisions?: Readonly<Record<string, DecisionInput>>;
  readonly log?: (line: string) => void;
  /** Called once this session holds the run's lease, before the first write of the compensation (see EngineOptions). */
  readonly onDriving?: OnDriving;
  /** Traces after the attempt (see EngineOptions.traces). */
  readonly traces?: TraceExportConfig | false;
}

export async function compensateRun(store: Store, runId: string, opts: CompensateOptions = {}): Promise<CompensationReport> {
  const row = store.reader.run(runId);
  if (!row) throw runNotFound(runId);
  journaledDecisions(opts.decisions, 'compensate'); // a bad decision is refused before the lease is taken
  // Refused before the lease is taken: a compensation that cannot call an inverse it needs writes nothing at all.
  checkCompensable(store, runId);
  // The inverses get the journal's args and results: a damaged one is refused before the attempt counter moves.
  readBackFirst(store.reader, row, { steps: 0, actions: 'all' });
  const lease = withNewSession(opts.role ?? 'cli', (owner) =>
    store.acquireRun(runId, owner, { status: 'compensating', newAttempt: true, purpose: 'compensate' }),
  );
  return afterAttempt(compensateWithLease(store, lease, opts), store, lease, opts);
}

/**
 * Throws (LB_UNKNOWN_ACTION_TYPE) when this process cannot compensate the run: an in-doubt or committed action whose
 * definition, or whose inverse, it does not have. Reads only; returns the inverses by action id.
 */
export function checkCompensable(store: Store, runId: string): Map<string, ActionDefinition | null> {
  // Its children are undone in the same walk: each must be compensable here too, and none driven right now.
  for (const child of childrenToUndo(store, runId)) {
    if (store.reader.view(child).leaseLive)
      throw new LogbookError(
        ErrorCodes.LEASE_HELD,
        `Child run ${child.id} of run ${runId} is being driven by ${child.lease_owner ?? 'another process'}, and compensating ${runId} undoes its children too.`,
        `Wait for it to stop (or cancel it with \`logbook cancel ${child.id}\`), then compensate ${runId} again.`,
        { runId, childRunId: child.id, owner: child.lease_owner },
      );
    checkCompensable(store, child.id);
  }
  const inverses = new Map<string, ActionDefinition | null>();
  for (const a of store.reader.committedNewestFirst(runId)) {
    if (a.effect !== 'read-only' && a.compensation !== 'committed' && a.compensation !== 'irreversible') inverses.set(a.id, inverseDefinition(store, runId, a));
  }
  for (const a of store.reader.inDoubt(runId)) definition(a.type);
  for (const a of store.reader.failedMayHaveHappened(runId)) definition(a.type);
  return inverses;
}

/** A run's children that compensating it undoes: all but those already compensated and those that never started. */
function childrenToUndo(store: Store, runId: string): RunRow[] {
  return store.reader.children(runId).filter((c) => c.status !== 'compensated' && c.status !== 'queued');
}

/**
 * A run's children in the order its compensation undoes them, each with its place in the run's walk: the seq of its
 * start, which was journaled in the same transaction as the parent's record of it. Compared with the parent's commit
 * order, a child started after an action committed is undone before that action, and one that started before an
 * action committed (the parent waited for it) after it: newest first, as one walk.
 */
function childUnits(store: Store, runId: string): Array<{ readonly row: RunRow; readonly seq: number }> {
  return store.reader
    .children(runId)
    .map((row) => ({ row, seq: store.reader.firstEventSeq(row.id) ?? 0 }))
    .sort((a, b) => b.seq - a.seq);
}

function definition(type: string): ActionDefinition {
  const def = actionRegistry().get(type);
  if (!def) {
    throw new LogbookError(
      ErrorCodes.UNKNOWN_ACTION_TYPE,
      `The journal has ${type} actions, but the loaded script defines no such action type.`,
      'Compensate with the script that ran the actions (pass it with --script).',
      { type },
    );
  }
  return def;
}

const isRunTimeType = (type: string): boolean => [...runTimeActionTypePrefixes()].some((p) => type.startsWith(p));

/**
 * The definition compensation applies to a committed action; `null` when its type is made at run time (a tool built
 * inside the run) and is not loaded here, but the journal says it had no inverse: then it is irreversible, knowingly.
 * One that had an inverse cannot be undone by a process that never built it: a clear error, before anything is done.
 */
function inverseDefinition(store: Store, runId: string, a: ActionRow): ActionDefinition | null {
  if (actionRegistry().has(a.type) || !isRunTimeType(a.type)) return definition(a.type);
  const had = store.reader.actionHadInverse(runId, a.id);
  if (had === false) return null;
  throw new LogbookError(
    ErrorCodes.UNKNOWN_ACTION_TYPE,
    `${a.type} ${a.id} of run ${runId} was made at run time (a tool built inside the run) ${had ? 'with an inverse' : 'and the journal does not say whether it has an inverse'}, and this process never built it, so its compensate cannot be called here. Nothing was compensated.`,
    `Define the tool's action at the top of the script with defineAction (with compensate) and give it to logbookTools as { action }, then run \`logbook compensate ${runId}\` again; or compensate from the debugger while the run's session is open.`,
    { type: a.type, actionId: a.id },
  );
}

export async function compensateWithLease(store: Store, lease: Lease, opts: CompensateOptions): Promise<CompensationReport> {
  const runId = lease.runId;
  const writer = store.openWriter(lease);
  // As while a run goes forward: a long inverse must not outlast the lease this process can prove by its clock.
  const stopHeartbeat = writer.keepAlive();
  const faults = opts.faults ?? new Faults();
  const hooks = opts.hooks;
  const compensated: Array<{ id: string; type: string; redone: boolean }> = [];
  const irreversible: Array<{ id: string; type: string }> = [];
  const settled: Array<{ id: string; type: string; outcome: string }> = [];
  const children: Array<{ runId: string; agent: string; status: RunStatus; compensated: number }> = [];
  let alreadyCompensated = 0;
  const run = store.reader.run(runId);
  const input = run ? journaledInput(run).value : undefined;
  const runSnap = (): RunSnapshot => ({ id: runId, agent: run?.agent ?? '', attempt: lease.attempt, status: 'compensating', input });
  /** Callers need not test `hooks.pause`: with no host attached nothing is built here. */
  const pause = async (kind: PauseKind, a: ActionRow, def: ActionDefinition | undefined, redoInverse?: boolean): Promise<void> => {
    if (!hooks?.pause) return;
    await hooks.pause({ kind, run: runSnap(), action: snapshot(a, def), ...(redoInverse ? { redoInverse } : {}) });
  };
  const base = (): Omit<CompensationReport, 'status'> => ({
    runId,
    compensated,
    alreadyCompensated,
    irreversible,
    settled,
    ...(children.length ? { children } : {}),
  });
  /** Stopped between inverses at the host's request: the lease is released and `compensate` again finishes it. */
  const stopped = (): CompensationReport => {
    writer.note('compensation.stopped', { reason: 'the host asked the compensation to stop', compensated: compensated.length });
    return { ...base(), status: 'interrupted' };
  };
  let inverses = new Map<string, ActionDefinition | null>();
  try {
    announceDriving(opts, lease);
    writer.note('compensation.begin', {});
    // Every inverse this compensation needs, known before the first is applied: no half-done walk for a missing one.
    // (compensateRun checked it before taking the lease; a worker's claim or a declared policy gets here directly.)
    inverses = checkCompensable(store, runId);
    for (const [id, d] of Object.entries(journaledDecisions(opts.decisions, 'compensate'))) {
      const a = store.reader.action(runId, id);
      if (a?.status === 'started') writer.decision(a.step_idx, id, d.decision, d.result);
    }
    // 1. Nothing may be left in doubt: an in-doubt effect that happened must be compensated too. The policy's settle
    //    plan decides how (the same rules resume follows; only "not happened" means "mark it", not "execute it").
    // An idempotent action journaled failed after an error that was not definite may have landed: it is settled like
    // one in doubt (verify, or redone with its key), so that one that happened is committed and its inverse walked.
    for (const a of [...store.reader.inDoubt(runId), ...store.reader.failedMayHaveHappened(runId)]) {
      const def = definition(a.type);
      const plan = settlePlan(a, def, { hasInverse: typeof def.compensate === 'function' });
      const out = await settleInDoubt(a, def, plan, {
        writer,
        ctx: { idempotencyKey: a.id, runId, attempt: lease.attempt, ...writer.leaseChecks },
        ask: decisionAsker(hooks, plan, runSnap, () => snapshot(a, def)),
        verifyFailed: (err) =>
          new LogbookError(
            ErrorCodes.VERIFY_FAILED,
            `verify of ${a.type} ${a.id} threw: ${describe(err)}. Nothing was compensated.`,
            `Fix verify and run \`logbook compensate ${runId}\` again.`,
            { actionId: a.id },
          ),
      });
      if (out.happened === null) {
        const reason = `${a.type} has no compensate, and is in doubt: it is not redone, since that would make certain an effect nothing can undo`;
        writer.compensation(a.step_idx, a.id, 'irreversible', null, { reason });
        irreversible.push({ id: a.id, type: a.type });
        settled.push({ id: a.id, type: a.type, outcome: 'left in doubt: no compensate, so not redone' });
        continue;
      }
      if (out.happened === undefined) {
        writer.runStatus('needs-decision', { data: { actionId: a.id, type: a.type, reason: 'compensation needs to know whether it happened' } });
        return {
          ...base(),
          status: 'needs-decision',
          waitingOn: { actionId: a.id, reason: `${a.type} ${a.id} is in doubt and has no verify: decide with --decide ${a.id}=happened|not-happened` },
        };
      }
      settled.push({ id: a.id, type: a.type, outcome: SETTLED[out.how]?.[out.happened ? 1 : 0] ?? out.how });
    }
    for (const a of store.reader.pendingApprovals(runId)) writer.approval(a.step_idx, a.id, false, 'the run was compensated before approval');

    // 2. Inverses, newest-first by commit order, with the run's children (run.child) at their places in that order.
    const units = childUnits(store, runId);
    const undoChildrenNewerThan = async (seq: number): Promise<CompensationReport | undefined> => {
      for (let next = units[0]; next && next.seq > seq; next = units[0]) {
        units.shift();
        const stopped = await undoChild(next.row);
        if (stopped) return stopped;
      }
      return undefined;
    };
    const undoChild = async (row: RunRow): Promise<CompensationReport | undefined> => {
      if (row.status === 'compensated') {
        children.push({ runId: row.id, agent: row.agent, status: 'compensated', compensated: 0 });
        return undefined;
      }
      if (row.status === 'queued') return undefined;
      if (hooks?.shouldStop?.()) return stopped();
      const childLease = withNewSession(opts.role ?? 'cli', (owner) =>
        store.acquireRun(row.id, owner, { status: 'compensating', newAttempt: true, purpose: `compensate (with its parent ${runId})` }),
      );
      writer.note('child.compensating', { runId: row.id, agent: row.agent });
      const report = await afterAttempt(compensateWithLease(store, childLease, { ...opts, onDriving: undefined }), store, childLease, opts);
      children.push({ runId: row.id, agent: row.agent, status: report.status, compensated: report.compensated.length });
      writer.note('child.compensated', { runId: row.id, status: report.status, compensated: report.compensated.length });
      if (report.status === 'compensated') return undefined;
      if (report.status === 'needs-decision') {
        const reason = `child run ${row.id}: ${report.waitingOn?.reason ?? 'needs a decision'}`;
        writer.runStatus('needs-decision', { data: { childRunId: row.id, actionId: report.waitingOn?.actionId ?? null, reason } });
        return { ...base(), status: 'needs-decision', waitingOn: { actionId: report.waitingOn?.actionId ?? '', reason, runId: row.id } };
      }
      if (report.status === 'interrupted') return { ...base(), status: 'interrupted', ...(report.error ? { error: report.error } : {}) };
      throw new LogbookError(
        ErrorCodes.COMPENSATE_FAILED,
        `The compensation of child run ${row.id} (agent ${row.agent}) ended ${report.status}${report.error ? `: ${report.error.message}` : ''}.`,
        `Fix the cause and run \`logbook compensate ${runId}\` again: finished inverses, and children already compensated, are not repeated.`,
        { childRunId: row.id },
      );
    };
    for (const a of store.reader.committedNewestFirst(runId)) {
      const early = await undoChildrenNewerThan(a.commit_seq ?? 0);
      if (early) return early;
      if (a.effect === 'read-only') continue;
      if (a.compensation === 'committed') {
        alreadyCompensated++;
        continue;
      }
      if (a.compensation === 'irreversible') {
        irreversible.push({ id: a.id, type: a.type });
        continue;
      }
      const def = inverses.has(a.id) ? inverses.get(a.id) : definition(a.type);
      if (!def?.compensate) {
        writer.compensation(a.step_idx, a.id, 'irreversible', null, {
          reason: def ? `${a.type} has no compensate` : `${a.type} was made at run time without an inverse`,
        });
        irreversible.push({ id: a.id, type: a.type });
        continue;
      }
      const redone = a.compensation === 'started' || a.compensation === 'failed';
      if (hooks?.shouldStop?.()) return stopped();
      await pause('compensate:before', a, def, redone);
      // A host that paused before this inverse may have asked to stop; nothing of it is written yet.
      if (hooks?.shouldStop?.()) return stopped();
      writer.compensation(a.step_idx, a.id, 'started');
      faults.hit('compensate:after-start', a.type);
      await pause('compensate:after-start', a, def);
      writer.compensationExecuting(a.step_idx, a.id);
      const ended = writer.effectStarting(`${a.type} (inverse)`, `compensate:${a.id}`);
      let result: unknown;
      try {
        result = await def.compensate(
          fromJournalJson(a.args, () => actionPlace(a, 'args')),
          fromJournalJson(a.result, () => actionPlace(a, 'result')),
          { idempotencyKey: `compensate:${a.id}`, runId, attempt: lease.attempt, ...writer.leaseChecks },
        );
        ended();
      } catch (err) {
        ended();
        writer.compensation(a.step_idx, a.id, 'failed', null, { error: errorRecord(err) });
        throw new LogbookError(
          ErrorCodes.COMPENSATE_FAILED,
          `The inverse of ${a.type} ${a.id} threw: ${describe(err)}.`,
          `Fix the cause and run \`logbook compensate ${runId}\` again: finished inverses are not repeated.`,
          { actionId: a.id },
        );
      }
      faults.hit('compensate:after-execute', a.type);
      await pause('compensate:after-execute', a, def);
      const json = result === undefined ? null : safeJson(result);
      writer.compensation(a.step_idx, a.id, 'committed', json);
      compensated.push({ id: a.id, type: a.type, redone });
      await pause('compensate:committed', a, def);
    }
    const last = await undoChildrenNewerThan(-1);
    if (last) return last;
    writer.runStatus('compensated', {
      data: {
        compensated: compensated.length,
        alreadyCompensated,
        irreversible: irreversible.map((i) => i.id),
        ...(children.length ? { children: children.map((c) => ({ runId: c.runId, status: c.status })) } : {}),
      },
    });
    return { ...base(), status: 'compensated' };
  } catch (err) {
    const record = errorRecord(err);
    if (err instanceof LogbookError && err.code === ErrorCodes.LEASE_LOST) throw err;
    // Lost while an inverse ran (it may have thrown something else on its way out): nothing is written, as above.
    const lost = writer.lostError;
    if (lost) throw lost;
    // A journal that failed (or holds a damaged value) is not a failed inverse: no status is written, the compensation stays resumable.
    const storage = writer.broken ?? (isStorageError(err) ? err : undefined);
    if (storage) {
      opts.log?.(`run ${runId}: the compensation stopped because its journal failed; it is resumable. [${storage.code}] ${storage.message}`);
      return { ...base(), status: 'interrupted', error: { name: storage.name, message: storage.message, code: storage.code } };
    }
    writer.runStatus('compensation-failed', { error: record });
    return { ...base(), status: 'compensation-failed', error: { name: record.name, message: record.message, ...(record.code ? { code: record.code } : {}) } };
  } finally {
    stopHeartbeat();
    try {
      writer.release();
    } catch {
      // Status is durable already.
    } finally {
      endSession(lease.token);
    }
  }
}

/** The report's words for each way an in-doubt action was settled: [did not happen, happened]. */
const SETTLED: Partial<Record<ReconcileHow, readonly [string, string]>> = {
  verify: ['verified: it did not happen', 'verified: it happened'],
  're-execute-with-key': ['', 're-executed with its key, so its inverse applies'],
  'nothing-to-undo': ['read-only: nothing to undo', ''],
  'decided-happened': ['', 'decided: it happened'],
  'decided-not-happened': ['decided: it did not happen', ''],
};

function snapshot(a: ActionRow, def: ActionDefinition | undefined): ActionSnapshot {
  return {
    id: a.id,
    type: a.type,
    version: a.version,
    effect: a.effect,
    args: fromJournalJson(a.args, () => actionPlace(a, 'args')),
    phase: 'compensating',
    status: a.status,
    executions: a.executions,
    stepIdx: a.step_idx,
    hasVerify: typeof def?.verify === 'function',
    hasCompensate: typeof def?.compensate === 'function',
    approval: def?.approval === true,
    result: fromJournalJson(a.result, () => actionPlace(a, 'result')),
    ...(a.status === 'started' && a.error !== null ? { afterError: true, error: journaledError(a.error) } : {}),
  };
}

function safeJson(v: unknown): string | null {
  try {
    return toJournalJson(v, 'compensation result', '');
  } catch {
    return null;
  }
}
