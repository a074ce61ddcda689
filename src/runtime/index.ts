// The runtime's internal barrel, for the CLI, the adapter, tools and tests. The package's public surface is public.ts.

export { defineAction, defineAgent, isAction, isAgent, actionRegistry } from './define';
export type {
  ActionDefinition,
  ActionSpec,
  AgentDefinition,
  AgentSpec,
  Effect,
  EffectContext,
  ErrorClass,
  ProbeResult,
  ProbeEffect,
  ProbeRecord,
} from './define';
export type { RunApi, RunInfo, StepPlace, RunStatus, StepStatus, ActionStatus, Reconciliation, Decision } from './types';
export type { DecisionInput } from './decisions';
export {
  LogbookError,
  ApprovalRejectedError,
  ActionFailedError,
  DefiniteFailure,
  isDefiniteFailure,
  isInDoubtError,
  ErrorCodes,
  type ErrorCode,
} from './errors';
export type { StandardSchema } from './schema';
export { startRun, forkRun, resumeRun, recordApproval, newRunId, type RunOutcome, type EngineOptions } from './engine';
export { compensateRun, type CompensationReport } from './compensate';
export { openStore, DEFAULT_DB, type Store } from './store';
export { Faults, FAULT_POINTS, parseCrashSpec, formatCrashSpec, type CrashSpec, type FaultPoint, type FaultHit } from './faults';
export type { RuntimeHooks, PauseEvent, PauseKind, ActionSnapshot, StepSnapshot, RunSnapshot, SourceLocation } from './hooks';
export type { ReconcileHow, ReconcilePlan } from './policy';
