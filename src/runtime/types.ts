// Shared runtime types: run/step/action statuses and the `run` object a script receives.

export const RUN_STATUSES = [
  // Recorded by `logbook run --detach`: waits for a `logbook worker` that has its agent and script version.
  'queued',
  'running',
  'completed',
  'failed',
  'needs-decision',
  'awaiting-approval',
  'compensating',
  'compensated',
  'compensation-failed',
  // Stopped for good by `logbook cancel` (the reason is journaled): never resumed, but it can still be compensated.
  'cancelled',
  // run.sleep under a worker: no lease held; a worker claims it again when `runs.wake_at` has passed.
  'sleeping',
  // run.waitFor with no event yet: no lease held; `runs.waiting_for` names the event, `runs.wake_at` its timeout. A
  // `logbook send` (or a worker, once the event is in the inbox or the timeout passed) continues it.
  'waiting',
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

// RunInfo and RunApi live beside ActionDefinition, which RunApi.do takes: one module, no cycle between the two.
export type { RunApi, RunInfo, StepPlace } from './define';
