// The host interface: typed boundary events (kind, ids, plan; no prose) at which a debugger or any host may pause the runtime.

import type { Effect } from './define';
import type { ReconcilePlan } from './policy';
import type { ActionStatus, Reconciliation, RunStatus } from './types';
import type { DecisionInput } from './decisions';

export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export type PauseKind =
  | 'run:entry'
  | 'step:before'
  | 'step:after'
  | 'action:before-start'
  | 'action:after-start'
  | 'action:after-execute'
  | 'action:committed'
  | 'action:failed'
  | 'action:skipped'
  | 'action:reconcile'
  | 'action:reconciled'
  | 'action:approval'
  | 'action:decision'
  // run.waitFor found no event: a host may send one now (the debugger stops here); else the run stops waiting.
  | 'event:wait'
  | 'compensate:before'
  | 'compensate:after-start'
  | 'compensate:after-execute'
  | 'compensate:committed'
  | 'child:start'
  | 'child:end'
  | 'run:end'
  // run.sleep, its wake time journaled, about to wait for what is left (again after a host interrupted the wait).
  | 'sleep:waiting';

export interface RunSnapshot {
  readonly id: string;
  readonly agent: string;
  readonly attempt: number;
  readonly status: RunStatus;
  readonly input: unknown;
}

export interface StepSnapshot {
  readonly idx: number;
  readonly name: string;
  readonly replayed: boolean;
  /** True when an earlier attempt started this step: it runs again. */
  readonly redone: boolean;
  readonly result?: unknown;
  readonly location?: SourceLocation;
  /** The step is a run.sleep's (its checkpoint is the wake time): a host shows the sleep, at `sleep:waiting`, instead. */
  readonly sleep?: boolean;
}

/** A run.sleep as the host sees it at `sleep:waiting`. */
export interface SleepSnapshot {
  readonly name: string;
  readonly stepIdx: number;
  readonly durationMs: number;
  /** When it wakes (ms since the epoch), as journaled when it started. */
  readonly wakeAt: number;
  /** What is left to wait now (0 once due). */
  readonly leftMs: number;
  /** Its wake time was journaled by an earlier attempt: this one waits only what is left. */
  readonly replayed: boolean;
}

export type ActionPhase =
  'before-start' | 'started' | 'executed' | 'committed' | 'failed' | 'skipped' | 'in-doubt' | 'awaiting-approval' | 'compensating' | 'compensated';

export interface ActionSnapshot {
  readonly id: string;
  readonly type: string;
  readonly version: number;
  readonly effect: Effect;
  readonly args: unknown;
  readonly phase: ActionPhase;
  readonly status: ActionStatus | 'new';
  readonly executions: number;
  readonly stepIdx: number;
  readonly hasVerify: boolean;
  readonly hasCompensate: boolean;
  readonly approval: boolean;
  readonly reconciliation?: Reconciliation | 'needs-decision' | undefined;
  /** Execute threw an error that does not prove nothing happened: the action stays in doubt (status started). */
  readonly afterError?: boolean;
  readonly result?: unknown;
  /** The journal's record of the error execute threw: name, message, code. */
  readonly error?: { readonly name: string; readonly message: string; readonly code?: string };
  readonly location?: SourceLocation;
}

/** A child run (run.child) as its parent's step sees it, at child:start and child:end. */
export interface ChildSnapshot {
  readonly runId: string;
  readonly agent: string;
  /** `start`: a new run; `attach`: the journal already has it (a resumed parent re-attaches instead of starting another). */
  readonly how: 'start' | 'attach';
  /** The child's status when the parent starts waiting (child:start) or goes on (child:end). */
  readonly status?: RunStatus;
  readonly output?: unknown;
}

/**
 * One boundary, as facts: the host words it (the runtime writes no sentences). `plan` is the policy's reconciliation of
 * an in-doubt action (at action:reconcile, action:decision and an action:failed that left it in doubt); `redoInverse` says
 * a compensate:before repeats an inverse that was in doubt.
 */
export interface PauseEvent {
  readonly kind: PauseKind;
  readonly run: RunSnapshot;
  readonly step?: StepSnapshot;
  readonly action?: ActionSnapshot;
  readonly plan?: ReconcilePlan;
  readonly redoInverse?: boolean;
  readonly sleep?: SleepSnapshot;
  /** At event:wait: the event the run waits for, and when its wait times out (ms since the epoch; null: never). */
  readonly wait?: { readonly name: string; readonly deadline: number | null };
  readonly child?: ChildSnapshot;
  /**
   * In a child run's events: the parent's child:start boundary (its run, and the step that called run.child), itself
   * with the grandparent's, and so on. A debugger stacks the child's frames on these.
   */
  readonly caller?: PauseEvent;
  /**
   * Writes the records the run holds behind (a step's start, a read-only action's record: see the writer), so that the
   * journal read at this boundary has them. Only a host with `writesPendingOnStop` need call it; for the others the
   * runtime already did, before the pause.
   */
  readonly writePending?: () => void;
}

export interface RuntimeHooks {
  /** Capture the user's source location of each run.step / run.do call (costs a stack trace per call). */
  readonly captureLocations?: boolean;
  /**
   * The host reads the journal only where it stops, and calls PauseEvent.writePending there first; the runtime then
   * leaves the records held behind for the run's next transaction instead of writing them before every pause. A
   * debugger with no breakpoint pauses at every boundary and stops at none: this saves it a transaction per step.
   */
  readonly writesPendingOnStop?: boolean;
  /** Called at every boundary; the runtime waits while the returned promise is pending. */
  pause?(ev: PauseEvent): void | Promise<void>;
  /** Asked at boundaries: true makes the run stop there gracefully (lease released, resumable). */
  shouldStop?(): boolean;
  /** An approval gate: resolve with the decision, or undefined to suspend the run (awaiting-approval). */
  approval?(ev: PauseEvent): Promise<{ approved: boolean; note?: string } | undefined>;
  /** An in-doubt action with no verify: resolve with a decision (with the result it had, if known), or undefined to
   *  stop in needs-decision. */
  decision?(ev: PauseEvent): Promise<DecisionInput | undefined>;
  /**
   * While run.sleep waits, a signal the host aborts when it wants the run's attention (a pause, a stop): the sleep then
   * passes its `sleep:waiting` boundary again (where the host may hold it, or stop it) and waits for what is left.
   * Asked each time the sleep starts to wait.
   */
  sleepInterrupt?(): AbortSignal;
  /**
   * The run was cancelled (`logbook cancel`, journal.cancel, the sidebar): it stops at its next boundary. Told once, as
   * soon as the driving session hears of it, so a host holding the run at a stop can let it go there.
   */
  cancelled?(reason: string | null): void;
}

/** A host's word that its session now drives the run (it holds the lease): e.g. to answer an HTTP request with 202. */
export type OnDriving = (run: { readonly runId: string; readonly attempt: number }) => void;

/** Tells the host this session drives the run; the host's callback failing is logged, never the run's failure. */
export function announceDriving(
  opts: { readonly onDriving?: OnDriving; readonly log?: (line: string) => void },
  lease: { readonly runId: string; readonly attempt: number },
): void {
  try {
    opts.onDriving?.({ runId: lease.runId, attempt: lease.attempt });
  } catch (err) {
    const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    log(`onDriving threw (ignored; run ${lease.runId} goes on): ${err instanceof Error ? err.message : String(err)}`);
  }
}
