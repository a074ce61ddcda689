// logbookTools: each tool the model chooses runs as a journaled action with an effect class, a key and approval.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { InferToolInput, InferToolOutput, Tool, ToolExecutionOptions, ToolSet } from 'ai';
import * as z from 'zod/mini';
import {
  ErrorCodes,
  LogbookError,
  callSite,
  defineAction,
  isAction,
  type ActionDefinition,
  type Effect,
  type EffectContext,
  type InferOutput,
  type RunApi,
  type StandardSchema,
  type SourceLocation,
} from 'agent-logbook';
import { decode, encode } from './codec';
import { entrySite } from './site';
import { isControlError, stateOf, type AiRunState } from './attemptState';

/** What a key function knows besides the tool's input. */
export interface ToolCallContext {
  readonly run: RunApi;
  readonly toolName: string;
  readonly toolCallId: string;
  /** The journaled model call that chose this tool call (`model:2.1`), when a logbookModel made it. */
  readonly modelCall: string | undefined;
}

/** Approval before the tool runs: always, never, or as a function of its input (refunds over 100, say). */
export type Approval<I> = boolean | ((input: I) => boolean);

/**
 * What the execute of a `{ tool, effect }` entry is given besides its input: the effect context verify gets (the
 * idempotency key, the lease's abort signal), the tool call's context, and the AI SDK's own execution options.
 */
export interface ToolEffectContext extends EffectContext, ToolCallContext, Omit<ToolExecutionOptions, 'toolCallId'> {}

/* eslint-disable @typescript-eslint/no-explicit-any -- a tool set mixes tools of every input and output type, as the SDK's ToolSet does */
/** An AI SDK tool made durable: its execute becomes an action with this effect class. */
export interface ToolSpec<I = any, O = any> {
  readonly tool: Tool<I, O>;
  readonly effect: Effect;
  /**
   * The effect, when it needs the idempotency key or the lease's signal (`ctx.idempotencyKey`, `ctx.signal`): runs
   * instead of the tool's own execute, which may then be left out. Without it, the tool's execute runs, and
   * `toolContext(options)` gives it the same context.
   */
  readonly execute?: (input: I, ctx: ToolEffectContext) => O | PromiseLike<O>;
  /** The idempotency key. Default `tool:<run id>:<model call>:<tool call id>`; give a business key (`refund:${input.orderId}`)
   *  so that a model call made again after a crash, with new tool call ids, cannot repeat the effect. */
  readonly key?: (input: I, ctx: ToolCallContext) => string;
  readonly verify?: (input: I, ctx: EffectContext) => O | undefined | Promise<O | undefined>;
  /** The inverse. Compensation finds it by the action type only in a process that built these tools (see README). */
  readonly compensate?: (input: I, result: O, ctx: EffectContext) => unknown;
  /** A Logbook approval gate (`awaiting-approval`, `logbook approve`). The tool's own needsApproval (the AI SDK's
   *  in-conversation approval) is kept as it is. */
  readonly approval?: Approval<I>;
  /** The action type in the journal; default `tool.<name>`. */
  readonly type?: string;
  readonly version?: number;
}

/** An action made with defineAction, offered to the model as a tool: its args schema is the tool's input schema. */
export interface ActionToolSpec<I = any, O = any> {
  readonly action: ActionDefinition<any, O>;
  readonly description?: string;
  readonly title?: string;
  readonly approval?: Approval<I>;
  /** The AI SDK's own approval (a tool-approval-request in the conversation), when wanted instead of a gate. */
  readonly needsApproval?: Tool<I, O>['needsApproval'];
}

export type ToolEntry = ToolSpec | ActionToolSpec | ActionDefinition<any, any>;

type InputOf<T> = T extends Tool<any, any> ? InferToolInput<T> : never;
type OutputOf<T> = T extends Tool<any, any> ? InferToolOutput<T> : never;
type ArgsOf<A> = A extends ActionDefinition<infer S extends StandardSchema, any> ? InferOutput<S> : never;
type ResultOf<A> = A extends ActionDefinition<any, infer R> ? R : never;

/**
 * The entry logbookTools checks a given entry against, for the tool or action `T` that entry names: a `{ tool }`
 * entry's key, verify, execute, compensate and approval take the tool's input and output types; an `{ action }` entry's
 * approval takes the action's args. `T` is inferred from the entry's `tool` or `action` alone, so that `(a, ctx) => …`
 * in the entry is typed under strict rather than an implicit any.
 */
export type ToolEntryFor<T> =
  | ([T] extends [Tool<any, any>] ? ToolSpec<InputOf<T>, OutputOf<T>> & { readonly tool: T } : never)
  | ([T] extends [ActionDefinition<any, any>] ? Omit<ActionToolSpec<ArgsOf<T>, ResultOf<T>>, 'action'> & { readonly action: T } : never)
  // A bare action names nothing to infer from: T is left unknown.
  | (unknown extends T ? ActionDefinition<any, any> : never)
  // Entries already typed as ToolEntry (a Record<string, ToolEntry> built elsewhere) are taken as they are.
  | (unknown extends InputOf<T> ? ToolEntry : never);
/* eslint-enable @typescript-eslint/no-explicit-any */

/** What one execution needs at run time: the key the def's key function returns and the effect itself. */
interface Job {
  readonly key: string;
  readonly execute: (ctx: EffectContext) => Promise<unknown>;
  /** The user's line that declared the tool: where the debugger shows its calls. */
  readonly at: SourceLocation | undefined;
}
const jobs = new AsyncLocalStorage<Job>();

function currentJob(type: string): Job {
  const j = jobs.getStore();
  if (!j) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      `The tool action ${type} ran outside its tool (it was called with run.do directly).`,
      'Call it through the tools logbookTools returned.',
    );
  }
  return j;
}

/**
 * What the model gets from a tool call that a person decided happened (`--decide <key>=happened`) without giving its
 * result: the truth, in words it can pass on, rather than a null it would read as a failure.
 */
export const UNRECORDED_TOOL_RESULT = Object.freeze({
  happened: true,
  result: 'not recorded',
  note: 'A person confirmed this call happened; its result was not recorded.',
});

const unrecordedToolResult = (): unknown => ({ ...UNRECORDED_TOOL_RESULT });

const anyArgs = z.unknown();
const EFFECTS: readonly Effect[] = ['read-only', 'idempotent', 'non-idempotent'];

/** The journaled definition of a tool (type, effect, verify, compensate), built once per tool and approval. */
export interface ToolActionSpec {
  readonly type: string;
  readonly version: number;
  readonly effect: Effect;
  readonly verify?: (input: unknown, ctx: EffectContext) => unknown;
  readonly compensate?: (input: unknown, result: unknown, ctx: EffectContext) => unknown;
  readonly description?: string;
}

export function toolAction(spec: ToolActionSpec, approval: boolean): ActionDefinition<typeof anyArgs, unknown> {
  const { verify, compensate } = spec;
  return defineAction({
    type: spec.type,
    version: spec.version,
    effect: spec.effect,
    args: anyArgs,
    key: () => currentJob(spec.type).key,
    execute: async (_args, ctx) => encode(await currentJob(spec.type).execute(ctx)),
    ...(verify ? { verify: async (args: unknown, ctx: EffectContext) => encode(await verify(decode(args), ctx)) } : {}),
    ...(compensate ? { compensate: (args: unknown, result: unknown, ctx: EffectContext) => compensate(decode(args), decode(result), ctx) } : {}),
    unrecordedResult: unrecordedToolResult,
    approval,
    ...(spec.description ? { description: spec.description } : {}),
  });
}

/** Runs one tool call as its action: errors that must stop the run are remembered, so the SDK cannot swallow them. */
export async function runToolCall(state: AiRunState, def: ActionDefinition<typeof anyArgs, unknown>, input: unknown, job: Job): Promise<unknown> {
  state.throwIfHalted();
  try {
    return decode(await jobs.run(job, () => state.run.do(def, encode(input), { at: job.at })));
  } catch (err) {
    if (isControlError(err)) state.halt ??= err;
    throw err;
  }
}

/** The run id is in it because the key reaches outside systems (MCP `_meta`, `idempotencyKey`): two runs, or a run and
 *  its fork, whose models chose the same tool call id must not look like one effect to them. */
export function defaultToolKey(ctx: ToolCallContext): string {
  return `tool:${ctx.run.id}:${ctx.modelCall ?? ctx.toolName}:${ctx.toolCallId}`;
}

/** An execute's value; a tool that yields (preliminary results) gives its last one. */
async function settle(value: unknown): Promise<unknown> {
  if (value !== null && typeof value === 'object' && Symbol.asyncIterator in value) {
    let last: unknown;
    for await (const v of value as AsyncIterable<unknown>) last = v;
    return last;
  }
  return value;
}

/** The pair of definitions of one tool type: without and with a gate, picked per call when approval is a function. */
export class GatedAction {
  private readonly defs: Partial<Record<'open' | 'gated', ActionDefinition<typeof anyArgs, unknown>>> = {};
  constructor(
    private readonly spec: ToolActionSpec,
    private readonly approval: Approval<never> | undefined,
  ) {}

  for(input: unknown): ActionDefinition<typeof anyArgs, unknown> {
    const gated = typeof this.approval === 'function' ? (this.approval as (input: unknown) => boolean)(input) === true : this.approval === true;
    return this.def(gated);
  }

  /** The definition with or without its gate, for callers that decided (an async approval policy, say). */
  def(gated: boolean): ActionDefinition<typeof anyArgs, unknown> {
    const which = gated ? 'gated' : 'open';
    return (this.defs[which] ??= toolAction(this.spec, gated));
  }
}

/** The contexts this module built, so that toolContext can tell them from the SDK's bare options. */
const builtContexts = new WeakSet<object>();

/**
 * The context of one tool execution: what the SDK and the tool call give (`extra`) and the action's effect context.
 * One home for both integrations (agent-logbook/openai-agents builds its tools' context here too).
 */
export function effectContextFor<E extends object>(extra: E, ctx: EffectContext): E & EffectContext {
  const full: E & EffectContext = {
    ...extra,
    idempotencyKey: ctx.idempotencyKey,
    runId: ctx.runId,
    attempt: ctx.attempt,
    signal: ctx.signal,
    // Bound here: the context may be a class instance whose methods a spread would drop.
    assertLease: () => ctx.assertLease(),
    leaseValid: () => ctx.leaseValid(),
  };
  builtContexts.add(full);
  return full;
}

/**
 * The Logbook context of a tool's own execute, from the options the SDK's signature types it with: the idempotency
 * key, the lease's abort signal and the rest of what verify gets. Only for tools wrapped by logbookTools.
 *
 *   execute: async (input, options) => stripe.refunds.create(input, { idempotencyKey: toolContext(options).idempotencyKey })
 */
export function toolContext(options: ToolExecutionOptions): ToolEffectContext {
  if (typeof options !== 'object' || options === null || !builtContexts.has(options)) {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      'toolContext was given options that did not come from a tool Logbook journals (it ran outside logbookTools).',
      'Wrap the tool in logbookTools(run, { name: { tool, effect } }) and pass the tools it returns to the model call.',
    );
  }
  return options as ToolEffectContext;
}

function wrapTool(state: AiRunState, name: string, spec: ToolSpec, at: SourceLocation | undefined): Tool {
  const own = spec.tool.execute as ((input: unknown, options: ToolExecutionOptions) => unknown) | undefined;
  const execute = spec.execute ?? own;
  if (typeof execute !== 'function') {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      `logbookTools: the tool ${name} has no execute function, so there is nothing to journal.`,
      'Give the entry an execute, or leave tools without execute (client-side tools) out of logbookTools and pass them to the SDK as they are.',
    );
  }
  if (!EFFECTS.includes(spec.effect)) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      `logbookTools: the tool ${name} has effect ${JSON.stringify(spec.effect)}.`,
      `Use one of ${EFFECTS.map((e) => `'${e}'`).join(', ')}: what happens if it runs twice?`,
    );
  }
  const actions = new GatedAction(
    {
      type: spec.type ?? `tool.${name}`,
      version: spec.version ?? 1,
      effect: spec.effect,
      ...(spec.verify ? { verify: spec.verify } : {}),
      ...(spec.compensate ? { compensate: spec.compensate } : {}),
      // AI SDK 7 lets a description be a function of the tool context: the journal keeps only a fixed one.
      ...(typeof spec.tool.description === 'string' && spec.tool.description ? { description: spec.tool.description } : {}),
    },
    spec.approval,
  );
  state.journals(name);
  // The entry's execute is called as a function of (input, ctx); the tool's own keeps its tool as `this`.
  const entry = spec.execute as ((input: unknown, ctx: ToolEffectContext) => unknown) | undefined;
  const run = entry
    ? (input: unknown, ctx: ToolEffectContext): unknown => entry(input, ctx)
    : (input: unknown, ctx: ToolEffectContext): unknown => own?.call(spec.tool, input, ctx);
  return {
    ...spec.tool,
    execute: (input: unknown, options: ToolExecutionOptions) => {
      const ctx: ToolCallContext = { run: state.run, toolName: name, toolCallId: options.toolCallId, modelCall: state.ownerOf(options.toolCallId) };
      const key = spec.key ? spec.key(input, ctx) : defaultToolKey(ctx);
      return runToolCall(state, actions.for(input), input, {
        key,
        execute: async (effect) => settle(await run(input, effectContextFor<Omit<ToolEffectContext, keyof EffectContext>>({ ...options, ...ctx }, effect))),
        at,
      });
    },
  };
}

function wrapAction(state: AiRunState, name: string, spec: ActionToolSpec, at: SourceLocation | undefined): Tool {
  // The action's own unrecordedResult wins; without one, the model is told the truth rather than given undefined.
  const action = spec.action.unrecordedResult ? spec.action : defineAction({ ...spec.action, unrecordedResult: unrecordedToolResult });
  const gated = spec.approval === undefined ? undefined : defineAction({ ...action, approval: true });
  const open = spec.approval === undefined ? action : defineAction({ ...action, approval: false });
  const description = spec.description ?? action.description;
  state.journals(name);
  return {
    ...(description ? { description } : {}),
    ...(spec.title ? { title: spec.title } : {}),
    ...(spec.needsApproval !== undefined ? { needsApproval: spec.needsApproval } : {}),
    inputSchema: action.args as Tool['inputSchema'],
    execute: async (input: unknown) => {
      state.throwIfHalted();
      const approve = typeof spec.approval === 'function' ? spec.approval(input) === true : spec.approval === true;
      try {
        return (await state.run.do(approve && gated ? gated : open, input, { at })) as unknown;
      } catch (err) {
        if (isControlError(err)) state.halt ??= err;
        throw err;
      }
    },
  };
}

/**
 * Makes tools durable for a run: each execution the model chooses is a journaled action (read-only, idempotent or
 * non-idempotent, with verify, compensate and approval), replayed from the journal on resume.
 *
 *   const tools = logbookTools(run, {
 *     lookupOrder: { tool: lookupOrder, effect: 'read-only' },
 *     refund: { action: refund, approval: (a) => a.amount > 100 },   // an existing defineAction, business-keyed
 *   });
 */
export function logbookTools<E extends Record<string, unknown>>(run: RunApi, entries: { readonly [K in keyof E]: ToolEntryFor<E[K]> }): ToolSet {
  const state = stateOf(run);
  // The tools are declared here, in the user's code: each tool's calls are shown at its entry of this call.
  const site = callSite();
  const out: ToolSet = {};
  for (const [name, entry] of Object.entries(entries as Record<string, ToolEntry>)) {
    const at = entrySite(site, name);
    if (isAction(entry)) out[name] = wrapAction(state, name, { action: entry }, at);
    else if (typeof entry === 'object' && entry !== null && 'action' in entry && isAction(entry.action)) out[name] = wrapAction(state, name, entry, at);
    else if (typeof entry === 'object' && entry !== null && 'tool' in entry) out[name] = wrapTool(state, name, entry, at);
    else {
      throw new LogbookError(
        ErrorCodes.INVALID_DEFINITION,
        `logbookTools: the entry ${JSON.stringify(name)} is neither { tool, effect } nor { action } nor an action made with defineAction.`,
        `Write ${name}: { tool: ${name}Tool, effect: 'read-only' | 'idempotent' | 'non-idempotent' }, or ${name}: { action: ${name}Action }.`,
      );
    }
  }
  return out;
}
