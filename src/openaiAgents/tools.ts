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

type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

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

/**
 * A tool of the OpenAI Agents SDK whose every call is a journaled Logbook action: its effect class, key, verify,
 * compensate and approval apply, and a resumed run returns a committed call's result without running it. The SDK's
 * `needsApproval` (true, or a function of the call) becomes a Logbook approval gate: the run stops
 * `awaiting-approval`, and `logbook approve` (CLI, sidebar, debugger) lets the resumed run go on.
 */
export function logbookAgentsTool<S extends StandardSchema, O>(run: RunApi, spec: AgentsToolSpec<S, O>): FunctionTool;
export function logbookAgentsTool<S extends StandardSchema, R>(run: RunApi, spec: AgentsActionToolSpec<S, R>): FunctionTool;
export function logbookAgentsTool(run: RunApi, spec: AgentsToolSpec | AgentsActionToolSpec): FunctionTool {
  const state = stateOf(run);
  const at = callSite();
  if ('action' in spec) {
    const action = spec.action.unrecordedResult ? spec.action : defineAction({ ...spec.action, unrecordedResult: () => ({ ...UNRECORDED_TOOL_RESULT }) });
    const open = defineAction({ ...action, approval: false });
    const gate = defineAction({ ...action, approval: true });
    const name = spec.name ?? action.type.replace(/[^\w-]+/g, '_');
    state.journals(name);
    return agentsTool({
      name,
      description: spec.description ?? action.description ?? action.type,
      parameters: action.args as never,
      errorFunction: errorFunctionFor(state),
      execute: async (input: unknown, runContext?: RunContext, details?: ToolCallDetails) => {
        state.throwIfHalted();
        const g = await gated(spec.needsApproval, runContext, input, callIdOf(details));
        return state.run.do(g ? gate : open, input, { at: at ?? undefined });
      },
    });
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
  state.journals(spec.name);
  return agentsTool({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters as never,
    errorFunction: errorFunctionFor(state),
    execute: async (input: unknown, runContext?: RunContext, details?: ToolCallDetails) => {
      state.throwIfHalted();
      const callId = callIdOf(details);
      const modelCall = state.ownerOf(callId);
      const key = spec.key
        ? spec.key(input, { run: state.run, callId, modelCall })
        : defaultToolKey({ run: state.run, toolName: spec.name, toolCallId: callId, modelCall });
      const def = actions.def(await gated(spec.needsApproval, runContext, input, callId));
      return runToolCall(state, def, input, {
        key,
        execute: async (ctx) => await spec.execute(input, effectContextFor({ runContext, callId }, ctx)),
        at: at ?? undefined,
      });
    },
  });
}
