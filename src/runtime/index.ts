// The runtime's internal barrel, for the CLI, the adapter, tools and tests: the package's public surface (public.ts)
// and what only Logbook's own processes use on top of it.

export * from './public';
export { actionRegistry } from './define';
export type { ProbeResult, ProbeEffect, ProbeRecord } from './define';
export type { StepPlace } from './types';
export { startRun, forkRun, resumeRun, recordApproval, newRunId, type EngineOptions } from './engine';
export { compensateRun } from './compensate';
export { openStore, DEFAULT_DB, type Store } from './store';
export { Faults, FAULT_POINTS, parseCrashSpec, formatCrashSpec, type CrashSpec, type FaultPoint, type FaultHit } from './faults';
export type { RuntimeHooks, PauseEvent, PauseKind, ActionSnapshot, StepSnapshot, RunSnapshot } from './hooks';
export type { ReconcileHow, ReconcilePlan } from './policy';
