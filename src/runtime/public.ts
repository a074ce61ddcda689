// The package's public surface (`import … from 'agent-logbook'`): declarations for agent scripts and the host API.
// Nothing here may name better-sqlite3 or the store's internals: consumers compile without their types.

import { DEFAULT_DB as journalDefault, openStore as journalOpen, resolveTarget as journalResolve } from './store';

export { defineAction, defineAgent, isAction, isAgent, declareRunTimeActionTypes } from './define';
export type {
  ActionDefinition,
  ActionSpec,
  AgentDefinition,
  AgentSpec,
  ChildOptions,
  DoOptions,
  StepOptions,
  WaitForOptions,
  Effect,
  EffectContext,
  ErrorClass,
  ProbeResult,
  ProbeEffect,
  ProbeRecord,
  InferInput,
  InferOutput,
} from './define';
export type { RunApi, RunInfo, RunStatus, StepStatus, ActionStatus, Reconciliation, Decision } from './types';
export {
  LogbookError,
  ApprovalRejectedError,
  ActionFailedError,
  ChildRunFailedError,
  DefiniteFailure,
  isDefiniteFailure,
  isInDoubtError,
  ErrorCodes,
  type ErrorCode,
} from './errors';
export type { StandardSchema } from './schema';
export type { OnDriving, SourceLocation } from './hooks';
export { callSite } from './location';
export type { RunOutcome, AttemptStats, CompensationReport } from './outcomes';
export type { CancelReport, CancelOptions } from './cancelOptions';
export type { SendReport, SentBefore } from './sendReport';
export {
  openJournal,
  type Journal,
  type JournalOptions,
  type StartOptions,
  type ResumeOptions,
  type RunSummary,
  type Recovered,
  type AnyAgent,
} from './journal';
export type { DecisionInput } from './decisions';
export type { TraceOptions, OtlpProtocol } from './trace/options';
export { flushTraces } from './trace/pending';

/**
 * The journal as agent-logbook/langgraph's saver opens it (its checkpoints live beside the runs), reached through this
 * entry so that integration's bundle carries no second copy of the store: under the CLI and the debugger it is the
 * very runtime that drives the run. Not an API: it changes without notice, and its declaration is not shipped.
 * @internal
 */
export const __journal = Object.freeze({ openStore: journalOpen, resolveTarget: journalResolve, DEFAULT_DB: journalDefault });
