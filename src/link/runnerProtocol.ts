// The adapter ⇄ runner messages: one zod schema per direction, validated on receipt by both processes.

import * as z from 'zod/mini';

/** A value crossing the process boundary: JSON, with non-JSON leaves encoded by wire.ts markers. */
export const Wire = z.unknown();

export const Loc = z.object({ file: z.string(), line: z.int(), column: z.int() });
export type Loc = z.infer<typeof Loc>;

export const EXCEPTION_FILTERS = ['actionFailed', 'inDoubt', 'nonIdempotent', 'approval', 'compensation', 'sleep', 'eventWait'] as const;
export const ExceptionFilter = z.enum(EXCEPTION_FILTERS);
export type ExceptionFilter = z.infer<typeof ExceptionFilter>;

export const LineBreakpoint = z.object({
  id: z.int(),
  file: z.string(),
  line: z.int(),
  condition: z.optional(z.string()),
  hitCondition: z.optional(z.string()),
});
export type LineBreakpoint = z.infer<typeof LineBreakpoint>;

export const FunctionBreakpoint = z.object({
  id: z.int(),
  name: z.string(),
  condition: z.optional(z.string()),
  hitCondition: z.optional(z.string()),
});
export type FunctionBreakpoint = z.infer<typeof FunctionBreakpoint>;

export const Breakpoints = z.object({
  lines: z.array(LineBreakpoint),
  functions: z.array(FunctionBreakpoint),
  filters: z.array(ExceptionFilter),
});
export type Breakpoints = z.infer<typeof Breakpoints>;

export const StepMode = z.enum(['continue', 'next', 'stepIn', 'stepOut']);
export type StepMode = z.infer<typeof StepMode>;

/** What the runner does: start a run, resume one, compensate one, or only read the journal after a crash. */
export const Job = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('launch'), input: Wire, runId: z.optional(z.string()) }),
  z.object({ kind: z.literal('resume'), runId: z.string() }),
  z.object({ kind: z.literal('compensate'), runId: z.string() }),
  z.object({ kind: z.literal('postmortem'), runId: z.optional(z.string()) }),
]);
export type Job = z.infer<typeof Job>;

export const RunnerConfig = z.object({
  program: z.string(),
  journal: z.string(),
  job: Job,
  stopOnEntry: z.boolean(),
  stopOnReplay: z.boolean(),
  crashAt: z.array(z.string()),
  decide: z.record(z.string(), z.enum(['happened', 'not-happened'])),
});
export type RunnerConfig = z.infer<typeof RunnerConfig>;

const Request = z.discriminatedUnion('op', [
  z.object({ op: z.literal('evaluate'), expression: z.string(), context: z.optional(z.string()) }),
  z.object({ op: z.literal('journal'), start: z.int().check(z.minimum(0)), count: z.int().check(z.minimum(0)) }),
  z.object({ op: z.literal('steps'), start: z.int().check(z.minimum(0)), count: z.int().check(z.minimum(0)) }),
  z.object({
    op: z.literal('decide'),
    decision: z.enum(['happened', 'not-happened']),
    actionId: z.optional(z.string()),
    result: z.optional(z.unknown()),
    then: z.union([StepMode, z.literal('stay')]),
  }),
  z.object({ op: z.literal('approval'), approved: z.boolean(), note: z.optional(z.string()), then: z.union([StepMode, z.literal('stay')]) }),
  z.object({ op: z.literal('compensate') }),
  z.object({ op: z.literal('cancel'), reason: z.optional(z.string()), compensate: z.optional(z.boolean()) }),
  z.object({ op: z.literal('fork'), stepIdx: z.int().check(z.minimum(0)) }),
  // Sends an event to the run (kept in its inbox): a run.waitFor the debugger stopped at takes it when the run goes on.
  z.object({
    op: z.literal('sendEvent'),
    name: z.string(),
    data: z.optional(z.unknown()),
    id: z.optional(z.string()),
    then: z.union([StepMode, z.literal('stay')]),
  }),
]);
export type RunnerRequest = z.infer<typeof Request>;

export const ToRunner = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), config: RunnerConfig, breakpoints: Breakpoints }),
  z.object({ type: z.literal('breakpoints'), breakpoints: Breakpoints }),
  z.object({ type: z.literal('resume'), mode: StepMode }),
  z.object({ type: z.literal('pause') }),
  z.object({ type: z.literal('stop') }),
  z.object({ type: z.literal('request'), id: z.int(), request: Request }),
]);
export type ToRunner = z.infer<typeof ToRunner>;

export const StepView = z.object({
  idx: z.int(),
  name: z.string(),
  replayed: z.boolean(),
  redone: z.boolean(),
  result: z.optional(Wire),
  location: z.optional(Loc),
  /** The step is a run.sleep's: the stop shows the sleep instead. */
  sleep: z.optional(z.boolean()),
});
export type StepView = z.infer<typeof StepView>;

/** A run.sleep at its `sleep:waiting` stop: what it waits for, and what is left. */
export const SleepView = z.object({
  name: z.string(),
  stepIdx: z.int(),
  durationMs: z.number(),
  /** ISO 8601, as journaled when the sleep started. */
  wakeAt: z.string(),
  leftMs: z.number(),
  replayed: z.boolean(),
});
export type SleepView = z.infer<typeof SleepView>;

export const ActionView = z.object({
  id: z.string(),
  type: z.string(),
  version: z.int(),
  effect: z.string(),
  args: Wire,
  phase: z.string(),
  status: z.string(),
  executions: z.int(),
  stepIdx: z.int(),
  hasVerify: z.boolean(),
  hasCompensate: z.boolean(),
  approval: z.boolean(),
  reconciliation: z.optional(z.string()),
  result: z.optional(Wire),
  error: z.optional(Wire),
  location: z.optional(Loc),
});
export type ActionView = z.infer<typeof ActionView>;

export const RunView = z.object({
  id: z.string(),
  agent: z.string(),
  attempt: z.int(),
  status: z.string(),
  input: Wire,
  forkedFrom: z.optional(z.object({ runId: z.string(), stepIdx: z.int() })),
});
export type RunView = z.infer<typeof RunView>;

/** Everything the adapter shows at a stop: frames, scopes and the values behind them. */
export const StopContext = z.object({
  kind: z.string(),
  detail: z.string(),
  run: RunView,
  step: z.optional(StepView),
  action: z.optional(ActionView),
  sleep: z.optional(SleepView),
  compensating: z.boolean(),
  program: z.string(),
  runLocation: z.optional(Loc),
  checkpoint: z.object({
    stepsJournaled: z.int(),
    lastCheckpoint: z.optional(z.object({ idx: z.int(), name: z.string(), result: z.optional(Wire) })),
    inDoubt: z.array(z.object({ id: z.string(), type: z.string(), stepIdx: z.int() })),
    awaitingApproval: z.array(z.object({ id: z.string(), type: z.string(), stepIdx: z.int() })),
  }),
  journalEntries: z.int(),
  /**
   * When the stop is in a child run (run.child): the runs that called it, innermost first, each with the step of its
   * that called run.child. The debugger stacks the child's frames on theirs, in the same session.
   */
  callers: z.optional(z.array(z.object({ run: RunView, step: z.optional(StepView) }))),
});
export type StopContext = z.infer<typeof StopContext>;

export const Outcome = z.object({
  runId: z.string(),
  status: z.string(),
  attempt: z.int(),
  output: z.optional(Wire),
  error: z.optional(z.object({ code: z.optional(z.string()), name: z.string(), message: z.string() })),
  waitingOn: z.optional(z.object({ actionId: z.string(), reason: z.string() })),
  summary: z.string(),
});
export type Outcome = z.infer<typeof Outcome>;

export const Postmortem = z.object({
  runId: z.optional(z.string()),
  status: z.optional(z.string()),
  lastStep: z.optional(z.object({ idx: z.int(), name: z.string(), status: z.string() })),
  inDoubt: z.array(z.object({ id: z.string(), type: z.string(), stepIdx: z.int(), executions: z.int() })),
  compensationInDoubt: z.array(z.object({ id: z.string(), type: z.string() })),
});
export type Postmortem = z.infer<typeof Postmortem>;

export const FromRunner = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.int(), node: z.string(), abi: z.string(), execPath: z.string() }),
  z.object({
    type: z.literal('started'),
    runId: z.string(),
    agent: z.string(),
    attempt: z.int(),
    job: z.enum(['launch', 'resume', 'compensate', 'fork']),
    forkedFrom: z.optional(z.object({ runId: z.string(), stepIdx: z.int() })),
  }),
  z.object({
    type: z.literal('stopped'),
    reason: z.string(),
    description: z.string(),
    text: z.optional(z.string()),
    exceptionId: z.optional(z.string()),
    hitBreakpointIds: z.array(z.int()),
    context: StopContext,
  }),
  z.object({ type: z.literal('output'), category: z.enum(['console', 'important', 'stdout', 'stderr']), text: z.string() }),
  z.object({ type: z.literal('response'), id: z.int(), ok: z.boolean(), body: z.optional(Wire), message: z.optional(z.string()) }),
  z.object({ type: z.literal('finished'), outcome: Outcome }),
  z.object({ type: z.literal('failed'), code: z.optional(z.string()), message: z.string() }),
  z.object({ type: z.literal('postmortem'), report: Postmortem }),
  // The secrets of the runner's environment the adapter may not know (a script that loads its own .env): masked by value.
  z.object({ type: z.literal('secrets'), values: z.array(z.string()) }),
]);
export type FromRunner = z.infer<typeof FromRunner>;
