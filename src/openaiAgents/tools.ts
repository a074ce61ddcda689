// logbookAgentsTool: a tool of the Agents SDK whose every call is a journaled Logbook action (effect, key, verify, approval).

import { tool as agentsTool, type FunctionTool, type RunContext } from '@openai/agents';
import {
  ErrorCodes,
  LogbookError,
  callSite,
  defineAction,
  type ActionDefinition,
  type Effect,
  type EffectContext,
  type InferOutput,
  type RunApi,
  type StandardSchema,
} from 'agent-logbook';
import { UNRECORDED_TOOL_RESULT } from 'agent-logbook/ai';
import { GatedAction, defaultToolKey, effectContextFor, isControlError, runToolCall, stateOf, type AiRunState } from './shared';
import { drivenSegment, journaledTools, type ToolKeyOf } from './driving';

type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];
/** The SDK's needsApproval function, for any parameters. */
type SdkApproval = (runContext: RunContext, input: unknown, callId?: string) => Promise<boolean>;

/** The SDK's approval policy for a tool: always, never, or a function of the call (sync or async). */
export type AgentsApproval<I> = boolean | ((runContext: RunContext, input: I, callId?: string) => boolean | Promise<boolean>);

/** What an agents tool's execute gets: the effect context verify gets, and the SDK's run context and call. */
export interface AgentsToolContext extends EffectContext {
  readonly runContext: RunContext | undefined;
  readonly callId: string;
}

/** A tool of the Agents SDK made from a Logbook action: an existing defineAction (its own type, key, verify, inverse). */
export interface AgentsActionToolSpec<S extends StandardSchema = StandardSchema, R = unknown, I = InferOutput<S>> {
  readonly action: ActionDefinition<S, R>;
  /** The tool's name; default the action type with its dots made underscores. */
  readonly name?: string;
  readonly description?: string;
  /** The SDK's needsApproval, kept in its shape, made a Logbook approval gate (`awaiting-approval`, `logbook approve`). */
  readonly needsApproval?: AgentsApproval<I>;
}

/** A tool of the Agents SDK declared inline, journaled as a `tool.<name>` action with this effect class. */
export interface AgentsToolSpec<S extends StandardSchema = StandardSchema, O = unknown, I = InferOutput<S>> {
  readonly name: string;
  readonly description: string;
  /** A zod object schema: the tool's parameters, whose type the other fields' inputs take. */
  readonly parameters: S;
  readonly effect: Effect;
  readonly execute: (input: I, ctx: AgentsToolContext) => O | Promise<O>;
  /** Default `tool:<run id>:<model call>:<call id>`; a business key survives a model call made again with new ids. */
  readonly key?: (input: I, ctx: { readonly run: RunApi; readonly callId: string; readonly modelCall: string | undefined }) => string;
  readonly verify?: (input: I, ctx: EffectContext) => O | undefined | Promise<O | undefined>;
  readonly compensate?: (input: I, result: O, ctx: EffectContext) => unknown;
  readonly needsApproval?: AgentsApproval<I>;
  readonly version?: number;
}

/** Tool errors the model may act on are shown to it; a suspension, a doubt or a journal error stops the run. */
function errorFunctionFor(state: AiRunState) {
  return (_ctx: RunContext, err: unknown): string => {
    if (isControlError(err)) {
      state.halt ??= err;
      throw err;
    }
    return `The tool failed: ${err instanceof Error ? err.message : String(err)}`;
  };
}

async function gated<I>(approval: AgentsApproval<I> | undefined, runContext: RunContext | undefined, input: I, callId: string): Promise<boolean> {
  if (typeof approval === 'function') return (await approval(runContext as RunContext, input, callId)) === true;
  return approval === true;
}

function callIdOf(details: ToolCallDetails | undefined): string {
  const id = details?.toolCall?.callId;
  if (typeof id !== 'string' || !id) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      'An agents tool ran without its tool call (the SDK gave no call id), so its journal key cannot be made.',
      'Let the Runner call the tools logbookAgentsTool made; do not invoke them by hand.',
    );
  }
  return id;
}

/** The tool's input checked by its schema, as the SDK gives it to execute: for keying a call from its raw arguments. */
async function parsed(schema: StandardSchema, input: unknown): Promise<unknown> {
  const r = await schema['~standard'].validate(input);
  if (r.issues)
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      `The tool call's arguments do not fit its parameters: ${r.issues.map((i) => i.message).join('; ')}.`,
      'See the model call that chose it.',
    );
  return r.value;
}

/**
 * The SDK's approval policy as the tool gives it to the SDK: asked only while logbookRunAgent drives the run, whose
 * interruptions are journaled as the SDK's paused run state and a Logbook gate. Under a plain runner.run the SDK is
 * told no, and execute asks the policy and gates the action itself (the run stops `awaiting-approval`; a resume replays).
 */
function approvalForSdk<I>(run: RunApi, approval: AgentsApproval<I> | undefined): SdkApproval | undefined {
  if (approval === undefined || approval === false) return undefined;
  return async (runContext, input, callId) => (drivenSegment(run) ? gated(approval, runContext, input as I, callId ?? '') : false);
}

/** Notes, for the paused state's check, how the journal left a call this segment made. */
async function noted<T>(run: RunApi, tool: string, callId: string, key: string, p: Promise<T>): Promise<T> {
  const segment = drivenSegment(run);
  try {
    const out = await p;
    segment?.calls.set(callId, { tool, key, status: 'committed' });
    return out;
  } catch (err) {
    if (!isControlError(err)) segment?.calls.set(callId, { tool, key, status: 'failed' });
    throw err;
  }
}

/**
 * A tool of the OpenAI Agents SDK whose every call is a journaled Logbook action: its effect class, key, verify,
 * compensate and approval apply, and a resumed run returns a committed call's result without running it. The SDK's
 * `needsApproval` (true, or a function of the call) makes the run wait for `logbook approve` (CLI, sidebar, debugger):
 * under logbookRunAgent as the SDK's own interruption, kept as its paused run state; under a plain runner.run as a
 * Logbook gate on the action, which a resume reaches again by replaying the model calls from the journal.
 */
export function logbookAgentsTool<S extends StandardSchema, O>(run: RunApi, spec: AgentsToolSpec<S, O>): FunctionTool;
export function logbookAgentsTool<S extends StandardSchema, R>(run: RunApi, spec: AgentsActionToolSpec<S, R>): FunctionTool;
export function logbookAgentsTool(run: RunApi, spec: AgentsToolSpec | AgentsActionToolSpec): FunctionTool {
  const state = stateOf(run);
  const at = callSite();
  /** A Logbook gate inside execute only where the SDK was not asked (a plain runner.run). */
  const gateHere = async (runContext: RunContext | undefined, input: unknown, callId: string): Promise<boolean> =>
    !drivenSegment(run) && (await gated(spec.needsApproval, runContext, input, callId));
  if ('action' in spec) {
    const action = spec.action.unrecordedResult ? spec.action : defineAction({ ...spec.action, unrecordedResult: () => ({ ...UNRECORDED_TOOL_RESULT }) });
    const open = defineAction({ ...action, approval: false });
    const gate = defineAction({ ...action, approval: true });
    const name = spec.name ?? action.type.replace(/[^\w-]+/g, '_');
    const keyOf: ToolKeyOf = async (input) => action.key(await parsed(action.args, input), run);
    state.journals(name);
    const made = agentsTool({
      name,
      description: spec.description ?? action.description ?? action.type,
      parameters: action.args as never,
      errorFunction: errorFunctionFor(state),
      ...optional('needsApproval', approvalForSdk(run, spec.needsApproval)),
      execute: async (input: unknown, runContext?: RunContext, details?: ToolCallDetails) => {
        state.throwIfHalted();
        const callId = callIdOf(details);
        const g = await gateHere(runContext, input, callId);
        const done = state.run.do(g ? gate : open, input, { at: at ?? undefined });
        return drivenSegment(run) ? noted(run, name, callId, await keyOf(input, callId), done) : done;
      },
    });
    journaledTools.set(made, keyOf);
    return made;
  }
  const actions = new GatedAction(
    {
      type: `tool.${spec.name}`,
      version: spec.version ?? 1,
      effect: spec.effect,
      ...(spec.verify ? { verify: spec.verify } : {}),
      ...(spec.compensate ? { compensate: spec.compensate } : {}),
      description: spec.description,
    },
    undefined,
  );
  const keyFor = (input: unknown, callId: string): string => {
    const modelCall = state.ownerOf(callId);
    return spec.key
      ? spec.key(input, { run: state.run, callId, modelCall })
      : defaultToolKey({ run: state.run, toolName: spec.name, toolCallId: callId, modelCall });
  };
  state.journals(spec.name);
  const made = agentsTool({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters as never,
    errorFunction: errorFunctionFor(state),
    ...optional('needsApproval', approvalForSdk(run, spec.needsApproval)),
    execute: async (input: unknown, runContext?: RunContext, details?: ToolCallDetails) => {
      state.throwIfHalted();
      const callId = callIdOf(details);
      const key = keyFor(input, callId);
      const def = actions.def(await gateHere(runContext, input, callId));
      return noted(
        run,
        spec.name,
        callId,
        key,
        runToolCall(state, def, input, {
          key,
          execute: async (ctx) => await spec.execute(input, effectContextFor({ runContext, callId }, ctx)),
          at: at ?? undefined,
        }),
      );
    },
  });
  journaledTools.set(made, async (input, callId) => keyFor(await parsed(spec.parameters, input), callId));
  return made;
}

function optional<K extends string, V>(k: K, v: V | undefined): Partial<Record<K, V>> {
  return v === undefined ? {} : ({ [k]: v } as Record<K, V>);
}
