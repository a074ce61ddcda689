// The reader process's JSON-lines protocol, validated with zod on both sides: requests, results, change notifications.

import * as z from 'zod/mini';
import { ACTION_DISPLAY } from '../runtime/policy';

const int = z.int();
const str = z.string();
const nstr = z.nullable(z.string());

export const RUN_DISPLAY = [
  'queued',
  'running',
  'completed',
  'failed',
  'needs-decision',
  'awaiting-approval',
  'compensating',
  'compensated',
  'compensation-failed',
  'interrupted',
  'cancelled',
  'sleeping',
  'waiting',
] as const;
export type RunDisplay = (typeof RUN_DISPLAY)[number];

/** What a person reads on an action: its journal status folded with liveness, errors and compensation (the policy's). */
export { ACTION_DISPLAY, ACTION_WORDS, RUN_WORDS, executionsText, type ActionDisplay } from '../runtime/policy';

export const STEP_DISPLAY = ['completed', 'replayed', 'in-progress', 'interrupted', 'failed'] as const;
export type StepDisplay = (typeof STEP_DISPLAY)[number];

export const RunDto = z.object({
  id: str,
  agent: str,
  script: str,
  status: z.enum(RUN_DISPLAY),
  attempt: int,
  createdAt: int,
  updatedAt: int,
  leaseLive: z.boolean(),
  /** What the policy allows for this run now: the tree's menus and the commands ask these, not the status. */
  canResume: z.boolean(),
  canCompensate: z.boolean(),
  canDelete: z.boolean(),
  /** `logbook cancel` takes it: a run that has not ended (a live one is asked to stop at its next boundary). */
  canCancel: z.boolean(),
  /** Stopped for a decision by its compensation: a decision goes to `logbook compensate --decide`, not to a resume. */
  compensationStopped: z.boolean(),
  /** When a sleeping run wakes (ms): one released `sleeping`, or a live one waiting in its latest run.sleep. */
  wakeAt: z.nullable(int),
  /** The cancel asked of the run, once one was: who asked, and why (clipped). */
  cancel: z.nullable(z.object({ reason: nstr, by: str })),
  owner: nstr,
  /** The lease holder's pid when it is alive on this machine (Kill Run uses it for runs no debugger drives). */
  ownerPid: z.nullable(int),
  stepCount: int,
  actionCount: int,
  inDoubt: int,
  awaitingApproval: int,
  input: nstr,
  output: nstr,
  error: nstr,
  forkedFrom: nstr,
  /** The step (from 0) of `forkedFrom` the fork branched at: `logbook fork --step`, or LangGraph's time travel. */
  forkedAtStep: z.nullable(int),
  /**
   * A waiting run (run.waitFor): the event it waits for, and when its wait times out (null: never). `runId`: the child
   * run (run.child) that waits for it, when the wait is its child's: the event goes there.
   */
  waitingFor: z.optional(z.nullable(z.object({ event: str, until: z.nullable(int), runId: z.optional(str) }))),
  /** The run that started this one with run.child, and the index of its step that did (null for a run of its own). */
  parentId: nstr,
  parentStep: z.nullable(int),
});
export type RunDto = z.infer<typeof RunDto>;

export const StepDto = z.object({
  runId: str,
  idx: int,
  name: str,
  status: z.enum(STEP_DISPLAY),
  attempt: int,
  startedAt: int,
  endedAt: z.nullable(int),
  actionCount: int,
  error: nstr,
  hasResult: z.boolean(),
  /** A run.sleep's step: when it wakes (ms), as journaled when it started. */
  wakeAt: z.nullable(int),
  /** A run.sleep's step: how long it sleeps (ms). */
  sleepMs: z.nullable(int),
  /** Runs this step started with run.child: shown under it, before its actions. */
  childCount: int,
});
export type StepDto = z.infer<typeof StepDto>;

/** A model call or a tool call chosen by a model (agent-logbook/ai), summarised and clipped; whole via `callRecord`. */
export const AiCallDto = z.object({
  kind: z.enum(['model', 'tool']),
  /** The model id (`provider/model`) or the tool's name. */
  name: str,
  /** One line for a tree row or a timeline bar. */
  line: str,
  lastMessages: z.array(str),
  text: str,
  toolCalls: z.array(str),
  tokens: z.nullable(z.object({ input: int, output: int })),
  finishReason: nstr,
  input: nstr,
  output: nstr,
});
export type AiCallDto = z.infer<typeof AiCallDto>;

export const ActionDto = z.object({
  runId: str,
  id: str,
  seq: int,
  stepIdx: int,
  type: str,
  version: int,
  effect: z.enum(['read-only', 'idempotent', 'non-idempotent']),
  status: z.enum(ACTION_DISPLAY),
  journalStatus: str,
  executions: int,
  reconciliation: nstr,
  decision: nstr,
  approval: nstr,
  approvalNote: nstr,
  compensation: nstr,
  compensationExecutions: int,
  attempt: int,
  startedAt: int,
  endedAt: z.nullable(int),
  args: str,
  result: nstr,
  error: nstr,
  /** Set for model calls and tool calls journaled by agent-logbook/ai. */
  ai: z.optional(AiCallDto),
});
export type ActionDto = z.infer<typeof ActionDto>;

export const TimelineItem = z.object({
  kind: z.enum(['step', 'action']),
  id: str,
  stepIdx: int,
  label: str,
  attempt: int,
  start: int,
  end: z.nullable(int),
  status: str,
  /** More words for the bar's tooltip: a model call's model, tokens and answer; a tool call's input and result. */
  detail: z.optional(str),
  /** Where the bar sits on its attempt's axis, in percent (set once the axis is laid out). */
  x0: z.optional(z.number()),
  x1: z.optional(z.number()),
});
export type TimelineItem = z.infer<typeof TimelineItem>;

export const TimelineMark = z.object({
  at: int,
  attempt: int,
  kind: z.enum(['start', 'resume', 'crash', 'end', 'reconciled', 'decided', 'approval', 'compensation']),
  label: str,
  x: z.optional(z.number()),
});
export type TimelineMark = z.infer<typeof TimelineMark>;

/** The axis of one attempt (see reader/timeScale.ts): x in percent, quiet stretches compressed to gaps. */
export const TimeScale = z.object({
  /** `paused` is the extension's: a gap it saw a debug session hold the run through. */
  segments: z.array(z.object({ start: int, end: int, x0: z.number(), x1: z.number(), gap: z.boolean(), paused: z.optional(z.boolean()) })),
  ticks: z.array(z.object({ x: z.number(), label: str })),
});

export const Timeline = z.object({
  run: RunDto,
  attempts: z.array(z.object({ attempt: int, start: int, end: int, outcome: str, scale: TimeScale })),
  items: z.array(TimelineItem),
  marks: z.array(TimelineMark),
  truncated: z.boolean(),
});
export type Timeline = z.infer<typeof Timeline>;

const Counts = z.record(z.string(), int);
export const ScriptStatus = z.object({
  run: z.nullable(RunDto),
  /** Per step pattern id: step count by display status. */
  steps: z.record(z.string(), Counts),
  /** Per action type: action count by display status. */
  actions: z.record(z.string(), Counts),
});
export type ScriptStatus = z.infer<typeof ScriptStatus>;

/** Each request's params and result; the reader validates params, the client validates results. */
export const METHODS = {
  open: { params: z.object({ db: str }), result: z.object({ exists: z.boolean(), file: str }) },
  runs: {
    /** `topLevel`: only runs no other run started (the tree's root); their children come with `children`. */
    params: z.object({ offset: int.check(z.minimum(0)), limit: int.check(z.minimum(1), z.maximum(1000)), topLevel: z.optional(z.boolean()) }),
    result: z.object({ total: int, runs: z.array(RunDto) }),
  },
  /** The runs a run started with run.child, by the place of the call; only those of one step when `stepIdx` is given. */
  children: { params: z.object({ runId: str, stepIdx: z.optional(int) }), result: z.array(RunDto) },
  run: { params: z.object({ runId: str }), result: z.nullable(RunDto) },
  steps: {
    params: z.object({ runId: str, from: int.check(z.minimum(0)), limit: int.check(z.minimum(1), z.maximum(1000)) }),
    result: z.object({ total: int, steps: z.array(StepDto) }),
  },
  actions: {
    params: z.object({ runId: str, stepIdx: int, afterSeq: int.check(z.minimum(0)), limit: int.check(z.minimum(1), z.maximum(1000)) }),
    result: z.object({ total: int, actions: z.array(ActionDto) }),
  },
  action: { params: z.object({ runId: str, actionId: str }), result: z.nullable(ActionDto) },
  checkpoint: { params: z.object({ runId: str, stepIdx: z.nullable(int) }), result: z.nullable(z.object({ json: str })) },
  /** A model or tool call whole (every prompt message, the answer, the raw JSON), as Markdown; null for other actions. */
  callRecord: { params: z.object({ runId: str, actionId: str }), result: z.nullable(z.object({ title: str, markdown: str })) },
  timeline: { params: z.object({ runId: str }), result: z.nullable(Timeline) },
  scriptStatus: {
    params: z.object({ script: str, stepPatterns: z.array(z.object({ id: str, regex: str })), actionTypes: z.array(str) }),
    result: ScriptStatus,
  },
} as const;

export type Method = keyof typeof METHODS;
export type Params<M extends Method> = z.infer<(typeof METHODS)[M]['params']>;
export type Result<M extends Method> = z.infer<(typeof METHODS)[M]['result']>;

export const Request = z.object({ id: int, method: z.enum(Object.keys(METHODS) as [Method, ...Method[]]), params: z.unknown() });
export type Request = z.infer<typeof Request>;

export const ErrorBody = z.object({ code: str, message: str });

export const Response = z.union([
  z.object({ id: int, ok: z.literal(true), result: z.unknown() }),
  z.object({ id: int, ok: z.literal(false), error: ErrorBody }),
]);

/** Sent unasked when the journal changes: `structure` means runs were added or removed. */
export const ChangedNotice = z.object({ event: z.literal('changed'), runs: z.array(str), structure: z.boolean(), seq: int });
export type ChangedNotice = z.infer<typeof ChangedNotice>;

export const Incoming = z.union([Response, ChangedNotice]);

/** Text values shown in the tree are clipped so one huge result cannot slow the UI; details fetch them in full. */
export const CLIP = 4000;
