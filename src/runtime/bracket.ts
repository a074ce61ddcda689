// The action bracket going forward: `started` durable before the effect, execute, then `committed`, `failed` or in
// doubt; and a read-only action's record, which needs no bracket. Each phase is a boundary (attemptHost.ts).

import { describe, errorRecord, isDefiniteFailure, markInDoubt } from './errors';
import type { ActionDefinition, ErrorClass } from './define';
import { toJournalJson } from './json';
import type { InferOutput, StandardSchema } from './schema';
import { InjectedFault, formatCrashSpec } from './faults';
import type { SourceLocation } from './hooks';
import { afterExecuteError, failedMayHaveHappened, reconcilePlan } from './policy';
import { actionSnapshot, type AttemptHost } from './attemptHost';
import type { ActionRow } from './store/rows';
import type { NewAction, RunWriter } from './store';
import type { Reconciliation } from './types';
import type { AttemptStats } from './outcomes';

export interface BracketDeps {
  readonly host: AttemptHost;
  readonly writer: RunWriter;
  readonly stats: AttemptStats;
  readonly log: (line: string) => void;
}

/** One action call being carried out: its definition, its journal record to be (`na`), args, and what the journal had. */
export interface ActionCall<S extends StandardSchema, R> {
  readonly def: ActionDefinition<S, R>;
  readonly na: NewAction;
  readonly args: InferOutput<S>;
  readonly row: ActionRow | undefined;
  readonly location: SourceLocation | undefined;
}

export class Bracket {
  constructor(private readonly d: BracketDeps) {}

  /** The bracket: `started` (durable, or lazy for a new idempotent action), execute, `committed` with the result. */
  async execute<S extends StandardSchema, R>(c: ActionCall<S, R>, reconciliation: Reconciliation | null): Promise<R> {
    const { def, na, args, row, location } = c;
    const { host: h, writer } = this.d;
    const executions = row?.executions ?? 0;
    let paused = h.boundary({
      stopFirst: true,
      fault: { point: 'action:before-start', target: na.type },
      event: () => ({ kind: 'action:before-start', action: actionSnapshot(def, na, args, 'before-start', row, location) }),
      stopAfter: true,
    });
    if (paused) await paused;
    // A new idempotent action's `started` need not be fsynced: lost in a power cut, the action is simply not found and
    // runs again with its key, which is what reconciling it in doubt would do. Its `committed` stays durable.
    // One declared `started: 'with-result'` goes further: its `started` waits for its result's commit (see defineAction).
    const fresh = row === undefined && reconciliation === null;
    const behind = fresh && def.started === 'with-result' && def.effect === 'idempotent';
    if (behind) writer.actionStartedBehind(na);
    else writer.actionStarted(na, row !== undefined, reconciliation, def.effect !== 'idempotent' || !fresh);
    paused = h.boundary({
      fault: { point: 'action:after-start', target: na.type },
      event: () => ({ kind: 'action:after-start', action: actionSnapshot(def, na, args, 'started', row, location, { status: 'started', executions }) }),
    });
    if (paused) await paused;
    writer.actionExecuting(na.stepIdx, na.id);
    // The last check before the effect, synchronous with the call: past its lease by this process's clock, the run
    // stops here (LB_LEASE_LOST), whatever was awaited since the writes above.
    const ended = writer.effectStarting(na.type, na.id);
    let result: R;
    try {
      result = await def.execute(args, h.ctx(na.id));
      ended();
      // Only a non-idempotent action is hurt by an error after its effect; for the others it is a failure, redone by key.
      if (def.effect === 'non-idempotent') h.boundary({ fault: { point: 'action:after-execute-throw', target: na.type } });
    } catch (err) {
      ended();
      await this.executeThrew(c, executions + 1, err);
      throw err;
    }
    paused = h.boundary({
      fault: { point: 'action:after-execute', target: na.type, uncounted: na.id },
      event: () => ({
        kind: 'action:after-execute',
        action: actionSnapshot(def, na, args, 'executed', row, location, { status: 'started', executions: executions + 1, result }),
      }),
    });
    if (paused) await paused;
    const json = toJournalJson(
      result,
      `The result of ${na.type} ${na.id}`,
      'Return plain JSON from execute; the action stays in doubt and is reconciled on resume.',
    );
    writer.actionCommitted(na.stepIdx, na.id, json, reconciliation);
    this.d.stats.actionsExecuted++;
    if (reconciliation) this.d.stats.reconciled.push({ id: na.id, type: na.type, outcome: reconciliation });
    paused = h.boundary({
      fault: { point: 'action:after-commit', target: na.type },
      event: () => ({
        kind: 'action:committed',
        action: actionSnapshot(def, na, args, 'committed', row, location, {
          status: 'committed',
          executions: executions + 1,
          result,
          ...(reconciliation ? { reconciliation } : {}),
        }),
      }),
    });
    if (paused) await paused;
    return result;
  }

  /** A read-only action: recorded for visibility, no bracket and no fsync. */
  async observe<S extends StandardSchema, R>(c: ActionCall<S, R>): Promise<R> {
    const { def, na, args, location } = c;
    const { host: h, writer } = this.d;
    let paused = h.boundary({
      stopFirst: true,
      fault: { point: 'action:before-start', target: na.type },
      event: () => ({ kind: 'action:before-start', action: actionSnapshot(def, na, args, 'before-start', undefined, location) }),
      stopAfter: true,
    });
    if (paused) await paused;
    const ended = writer.effectStarting(na.type, na.id);
    let result: R;
    try {
      result = await def.execute(args, h.ctx(na.id));
    } catch (err) {
      ended();
      // Nothing was journaled for it: a read-only action that failed simply runs again next time.
      paused = h.boundary({
        event: () => ({
          kind: 'action:failed',
          action: actionSnapshot(def, na, args, 'failed', undefined, location, { status: 'failed', executions: 1, error: errorRecord(err) }),
        }),
      });
      if (paused) await paused;
      throw err;
    }
    ended();
    // Only the fault point: a read-only action shows the host no after-execute stop, its record follows at once.
    h.boundary({ fault: { point: 'action:after-execute', target: na.type } });
    const json = toJournalJson(result, `The result of ${na.type} ${na.id}`, 'Return plain JSON from execute.');
    writer.actionObserved(na, json);
    this.d.stats.actionsObserved++;
    paused = h.boundary({
      fault: { point: 'action:after-commit', target: na.type },
      event: () => ({
        kind: 'action:committed',
        action: actionSnapshot(def, na, args, 'committed', undefined, location, { status: 'committed', executions: 1, result }),
      }),
    });
    if (paused) await paused;
    return result;
  }

  /**
   * Execute threw. That is not proof that nothing happened: unless the error is definite (the definition's `failure`
   * classifier or a DefiniteFailure says the outside system refused it), a non-idempotent action stays in doubt (started,
   * with the error) and is reconciled like a crash in flight. The caller rethrows, so the script sees the error.
   */
  private async executeThrew<S extends StandardSchema, R>(c: ActionCall<S, R>, executions: number, err: unknown): Promise<void> {
    const { def, na, args, row, location } = c;
    const { host: h, writer } = this.d;
    const error = errorRecord(err);
    // A rehearsal learns from the journal that its armed throw point fired, even when the script caught the error.
    if (err instanceof InjectedFault) writer.note('fault.injected', { spec: formatCrashSpec(err.spec) }, na.stepIdx, na.id);
    const classified = this.classify(def, args, err);
    if (afterExecuteError(def.effect, classified) === 'failed') {
      // The journal keeps whether the effect may have happened all the same: compensation settles such an action first.
      writer.actionFailed(na.stepIdx, na.id, failedMayHaveHappened(def.effect, classified) ? { ...error, mayHaveHappened: true } : error);
      const paused = h.boundary({
        event: () => ({ kind: 'action:failed', action: actionSnapshot(def, na, args, 'failed', row, location, { status: 'failed', executions, error }) }),
      });
      if (paused) await paused;
      return;
    }
    writer.actionInDoubt(na.stepIdx, na.id, error);
    markInDoubt(err);
    this.d.stats.leftInDoubt.push({ id: na.id, type: na.type, error: error.message });
    const paused = h.boundary({
      event: () => ({
        kind: 'action:failed',
        action: actionSnapshot(def, na, args, 'in-doubt', row, location, { status: 'started', executions, error, afterError: true }),
        plan: reconcilePlan({ effect: def.effect, hasVerify: typeof def.verify === 'function', decision: null }, 'resume'),
      }),
    });
    if (paused) await paused;
  }

  private classify<S extends StandardSchema, R>(def: ActionDefinition<S, R>, args: InferOutput<S>, err: unknown): ErrorClass | undefined {
    if (isDefiniteFailure(err)) return 'not-happened';
    if (!def.failure) return undefined;
    try {
      const c = def.failure(err, args);
      if (c === 'not-happened' || c === 'in-doubt') return c;
      this.d.log(
        `warning: the failure classifier of ${def.type} returned ${JSON.stringify(c)}, not "not-happened" or "in-doubt"; the action is kept in doubt.`,
      );
    } catch (thrown) {
      this.d.log(`warning: the failure classifier of ${def.type} threw (${describe(thrown)}); the action is kept in doubt.`);
    }
    return 'in-doubt';
  }
}
