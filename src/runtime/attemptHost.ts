// What one attempt shows and asks its host: the boundary (fault point, pause, stop check), snapshots and effect contexts.

import { RunSuspended } from './errors';
import type { EffectContext } from './define';
import type { FaultPoint, Faults } from './faults';
import type { ActionPhase, ActionSnapshot, PauseEvent, RunSnapshot, RuntimeHooks, SourceLocation } from './hooks';
import type { ActionRow } from './store/rows';
import type { NewAction, RunWriter } from './store';
import type { RunStatus } from './types';

/**
 * One boundary of an attempt. Its parts always run in this order:
 * 1. `stopFirst`: a stop check before anything of the phase happens (entering a step's or an action's bracket);
 * 2. `fault`: the fault point, hit before the host sees the boundary, so a kill there leaves what a debugger that
 *    stops there shows, and a rehearsal's counts do not depend on whether a host is attached;
 * 3. `event`: the host's pause, built only when a host pauses (a run with none builds no snapshot and awaits nothing);
 * 4. `stopAfter`: a stop check after the pause, only at a boundary before a write: a host that paused there may have
 *    asked to stop, and nothing of the phase is written yet. After a write there is none: what was written stands, and
 *    the next boundary stops.
 */
export interface Boundary {
  readonly stopFirst?: boolean;
  /**
   * `uncounted`: an action whose call of execute just returned. Its count waits for the write that settles it
   * (RunWriter.actionExecuting), so a kill here leaves that call out of the journal: the fault's last words name it.
   */
  readonly fault?: { readonly point: FaultPoint; readonly target: string; readonly uncounted?: string };
  readonly event?: () => Omit<PauseEvent, 'run'>;
  readonly stopAfter?: boolean;
}

export interface AttemptHostDeps {
  readonly writer: RunWriter;
  readonly faults: Faults;
  readonly hooks: RuntimeHooks | undefined;
  readonly agent: string;
  readonly input: unknown;
}

export class AttemptHost {
  /** Set when any branch suspended the run: every later boundary stops before doing anything. */
  suspended: RunSuspended | undefined;
  /** The run's status as the host is told it (a stop for a decision or an approval changes it). */
  status: RunStatus = 'running';
  readonly runId: string;
  readonly attempt: number;
  /** What a pause event carries for a host that writes the records held behind only where it stops. */
  private readonly writePending = (): void => this.d.writer.writePending();

  constructor(private readonly d: AttemptHostDeps) {
    this.runId = d.writer.lease.runId;
    this.attempt = d.writer.lease.attempt;
  }

  /** Whether a host pauses at boundaries: the fast paths, which have none, are off then. */
  get pauses(): boolean {
    return typeof this.d.hooks?.pause === 'function';
  }

  /**
   * The boundary (see Boundary for its order). Returns a promise only when the host pauses: callers await it only
   * then, so a run with no host takes no extra turn of the event loop, and parallel branches interleave as they did.
   */
  boundary(b: Boundary & Required<Pick<Boundary, 'event'>>): Promise<void> | undefined;
  /** Without an event the boundary never waits: a stop check (entering run.do, a gate, a doubt to settle) or a fault point alone. */
  boundary(b: Omit<Boundary, 'event'>): void;
  boundary(b: Boundary): Promise<void> | undefined {
    if (b.stopFirst) this.checkStop();
    if (b.fault) {
      const { point, target, uncounted } = b.fault;
      this.d.faults.hit(point, target, uncounted !== undefined && this.d.writer.holdsPending(uncounted) ? uncounted : undefined);
    }
    if (b.event && this.d.hooks?.pause) {
      const waits = this.pause(b.event());
      // A host that answered at once (it does not stop here) costs no turn of the event loop either.
      if (waits) return b.stopAfter ? waits.then(() => this.checkStop()) : waits;
    }
    if (b.stopAfter) this.checkStop();
    return undefined;
  }

  /** The stop check: a suspension, a failed journal, a lost lease, a cancel, or the host asking the run to stop. */
  private checkStop(): void {
    if (this.suspended) throw this.suspended;
    // A journal that failed stays failed for this attempt, even for a script that caught its error: nothing new starts.
    if (this.d.writer.broken) throw this.d.writer.broken;
    // A lost lease stops the run before any new effect, even one no fenced write precedes (a read-only action).
    this.d.writer.assertHolds();
    // `logbook cancel`: stop here, before anything of this phase starts (an effect in flight settles as it would).
    const cancel = this.d.writer.cancelRequest;
    if (cancel) {
      this.suspended = new RunSuspended('cancelled', cancel.reason ?? 'cancelled');
      throw this.suspended;
    }
    if (this.d.hooks?.shouldStop?.()) {
      this.suspended = new RunSuspended('interrupted', 'The host asked the run to stop; it is resumable.');
      throw this.suspended;
    }
  }

  /** The run as its host was last shown it: one object while its status stays the same (a host only reads it). */
  private shown: RunSnapshot | undefined;

  runSnapshot(): RunSnapshot {
    if (this.shown?.status !== this.status)
      this.shown = { id: this.runId, agent: this.d.agent, attempt: this.attempt, status: this.status, input: this.d.input };
    return this.shown;
  }

  ctx(id: string): EffectContext {
    return { idempotencyKey: id, runId: this.runId, attempt: this.attempt, ...this.d.writer.leaseChecks };
  }

  /** The host's pause: a promise only when the host returned one (it may stop here). */
  private pause(ev: Omit<PauseEvent, 'run'>): Promise<void> | undefined {
    // A host that stops here shows the journal: the records written behind go in first (or where it stops, by its word).
    if (!this.d.hooks?.writesPendingOnStop) this.d.writer.writePending();
    // Each boundary's `event` makes its object for this call alone: it is completed in place rather than copied.
    const full = ev as { -readonly [K in keyof PauseEvent]: PauseEvent[K] };
    full.run = this.runSnapshot();
    full.writePending = this.writePending;
    const waits: unknown = this.d.hooks?.pause?.(full);
    if (waits instanceof Promise) return waits as Promise<void>;
    return typeof (waits as { then?: unknown } | undefined)?.then === 'function' ? Promise.resolve(waits as PromiseLike<void>) : undefined;
  }
}

/** An action as the host sees it at a boundary. */
export function actionSnapshot(
  def: { readonly verify?: unknown; readonly compensate?: unknown; readonly approval?: boolean },
  na: NewAction,
  args: unknown,
  phase: ActionPhase,
  row: ActionRow | undefined,
  location: SourceLocation | undefined,
  extra: Partial<ActionSnapshot> = {},
): ActionSnapshot {
  return {
    id: na.id,
    type: na.type,
    version: na.version,
    effect: na.effect,
    args,
    phase,
    status: row?.status ?? 'new',
    executions: row?.executions ?? 0,
    stepIdx: na.stepIdx,
    hasVerify: typeof def.verify === 'function',
    hasCompensate: typeof def.compensate === 'function',
    approval: def.approval === true,
    ...(row?.reconciliation ? { reconciliation: row.reconciliation } : {}),
    ...(location ? { location } : {}),
    ...extra,
  };
}
