// Shared runtime types: run/step/action statuses and the `run` object a script receives.

import type { ActionDefinition } from './define';
import type { InferOutput, StandardSchema } from './schema';

export const RUN_STATUSES = [
  'running',
  'completed',
  'failed',
  'needs-decision',
  'awaiting-approval',
  'compensating',
  'compensated',
  'compensation-failed',
] as const;
export type StoredRunStatus = (typeof RUN_STATUSES)[number];
/** `interrupted` is derived: a run marked running whose lease holder is gone. */
export type RunStatus = StoredRunStatus | 'interrupted';

export const STEP_STATUSES = ['started', 'completed', 'failed'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const ACTION_STATUSES = ['started', 'committed', 'failed', 'awaiting-approval', 'rejected'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

export const RECONCILIATIONS = ['verified', 'verified-absent', 're-executed', 'decided-happened', 'decided-not-happened'] as const;
export type Reconciliation = (typeof RECONCILIATIONS)[number];

export const COMPENSATION_STATUSES = ['started', 'committed', 'failed', 'irreversible'] as const;
export type CompensationStatus = (typeof COMPENSATION_STATUSES)[number];

export type Decision = 'happened' | 'not-happened';

export interface RunInfo {
  readonly id: string;
  readonly agent: string;
  readonly attempt: number;
}

/** The object an agent's `run(run, input)` receives. */
export interface RunApi extends RunInfo {
  /** A named, checkpointed unit: on resume a completed step returns its journaled result without running. */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** One side effect, bracketed in the journal and reconciled on resume. Must be called inside a step. */
  do<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: InferOutput<S>): Promise<R>;
  /** The step the caller is in (its position and name), or undefined outside a step: integrations key actions by it. */
  currentStep(): StepPlace | undefined;
  /** Journals a note in the current step (what a model had streamed, say): shown by the debugger, never replayed. */
  note(kind: string, data: unknown): void;
}

export interface StepPlace {
  /** The step's position in the run, from 0: the same on every attempt. */
  readonly index: number;
  readonly name: string;
}
