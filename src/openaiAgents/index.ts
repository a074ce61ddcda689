// agent-logbook/openai-agents: the OpenAI Agents SDK on the Logbook journal: journaled model responses and tools.

import {
  Usage,
  tool as agentsTool,
  type FunctionTool,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type RunContext,
  type StreamEvent,
} from '@openai/agents';
import {
  ErrorCodes,
  LogbookError,
  callSite,
  declareRunTimeActionTypes,
  defineAction,
  type ActionDefinition,
  type Effect,
  type EffectContext,
  type InferOutput,
  type RunApi,
  type StandardSchema,
} from 'agent-logbook';
import { UNRECORDED_TOOL_RESULT, __integration } from 'agent-logbook/ai';

// One copy of agent-logbook/ai's machinery at run time (dist/ai.js): both integrations share a run's call places.
const {
  stateOf,
  isControlError,
  generateAction,
  streamAction,
  journaledCall,
  encode,
  decode,
  callParams,
  GatedAction,
  defaultToolKey,
  runToolCall,
  effectContextFor,
} = __integration;
type AiRunState = ReturnType<typeof stateOf>;
type DriftPolicy = 'fail' | 'rerun';

type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

export interface AgentsModelOptions {
  /** Default 'fail': a call whose request changed since it was journaled stops the run with a diff. 'rerun': it and
   *  later ones are made again. */
  readonly onDrift?: DriftPolicy;
}

/** What of a request is fingerprinted and journaled: all of it but the abort signal and the tracing switch. */
function requestArgs(name: string, request: ModelRequest): { model: string; params: Record<string, unknown> } {
  const { signal: _signal, tracing: _tracing, ...rest } = request;
  return { model: `openai-agents/${name}`, params: callParams(rest) };
}

/** The tool calls a response chose, so that a tool's default key names the model call that chose it. */
function ownCalls(state: AiRunState, call: string, output: ReadonlyArray<{ type?: string; callId?: string }>): void {
  state.ownTools(
    call,
    output.flatMap((o) => (o.type === 'function_call' && typeof o.callId === 'string' ? [{ type: 'tool-call', toolCallId: o.callId }] : [])),
  );
}

/** A response read back from the journal: its usage is the SDK's class again, which the runner adds up. */
function responseOf(value: unknown): ModelResponse {
  const r = decode(value) as ModelResponse & { usage?: ConstructorParameters<typeof Usage>[0] };
  return { ...r, usage: new Usage(r.usage) };
}

/** A queue the journaled stream writes into and the caller's iterator reads from. */
class Channel<T> {
  private readonly items: T[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private error: { err: unknown } | undefined;

  push(item: T): void {
    this.items.push(item);
    this.wake();
  }
  end(err?: { err: unknown }): void {
    this.ended = true;
    this.error = err;
    this.wake();
  }
  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
  async *drain(): AsyncGenerator<T> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) {
        if (this.error) throw this.error.err;
        return;
      }
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }
}

/** A model of the Agents SDK whose every response is a journaled, fingerprinted action, answered from the journal on resume. */
class JournaledModel implements Model {
  constructor(
    private readonly state: AiRunState,
    private readonly inner: Model,
    private readonly name: string,
    private readonly options: AgentsModelOptions,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const at = callSite();
    const { state } = this;
    state.throwIfHalted();
    const args = requestArgs(this.name, request);
    const place = state.place(JSON.stringify(args), 'Runner.run');
    let journaled: { value: unknown; call: string };
    try {
      journaled = await journaledCall(
        state,
        generateAction,
        place,
        args,
        this.options.onDrift ?? 'fail',
        async () => encode(await this.inner.getResponse(request)),
        at,
      );
    } catch (err) {
      state.failed(place);
      throw err;
    }
    const response = responseOf(journaled.value);
    ownCalls(state, journaled.call, response.output as Array<{ type?: string; callId?: string }>);
    return response;
  }

  /** Events pass live; `response_done`, which tells the runner the call is over, waits until the call is durable. */
  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const at = callSite();
    const { state } = this;
    state.throwIfHalted();
    const args = requestArgs(this.name, request);
    const place = state.place(JSON.stringify(args), 'Runner.run');
    const live = new Channel<StreamEvent>();
    let wentLive = false;
    const held: StreamEvent[] = [];
    const journaled = journaledCall(
      state,
      streamAction,
      place,
      args,
      this.options.onDrift ?? 'fail',
      async () => {
        wentLive = true;
        const events: unknown[] = [];
        for await (const e of this.inner.getStreamedResponse(request)) {
          events.push(encode(e));
          if (e.type === 'response_done') held.push(e);
          else live.push(e);
        }
        return { parts: events };
      },
      at,
    ).then(
      ({ value, call }) => {
        const events = (decode(value) as { parts: StreamEvent[] }).parts;
        for (const e of wentLive ? held : events) {
          if (e.type === 'response_done') ownCalls(state, call, (e.response.output ?? []) as Array<{ type?: string; callId?: string }>);
          live.push(e);
        }
        live.end();
      },
      (err: unknown) => {
        state.failed(place);
        live.end({ err });
      },
    );
    yield* live.drain();
    await journaled;
  }
}

function isModel(m: unknown): m is Model {
  return typeof m === 'object' && m !== null && typeof (m as Model).getResponse === 'function';
}

/**
 * A model provider whose models journal each response (streamed or not): `new Runner({ modelProvider:
 * logbookModelProvider(run, provider) })`. A resumed run answers every model call that committed from the journal,
 * and never sends it again; a call whose request changed since is drift (a diff and a stop, or `onDrift: 'rerun'`).
 * Agents must name their model by a string (or none) for the runner to ask the provider; a Model object set on an
 * agent is wrapped with logbookAgentsModel instead.
 */
export function logbookModelProvider(run: RunApi, inner: ModelProvider | Model, options: AgentsModelOptions = {}): ModelProvider {
  const state = stateOf(run);
  return {
    getModel: async (name?: string) => {
      const model = isModel(inner) ? inner : await inner.getModel(name);
      return new JournaledModel(state, model, name ?? 'default', options);
    },
  };
}

/** One model of the Agents SDK, journaled as logbookModelProvider's are: for an agent whose `model` is a Model object. */
export function logbookAgentsModel(run: RunApi, model: Model, name = 'model', options: AgentsModelOptions = {}): Model {
  return new JournaledModel(stateOf(run), model, name, options);
}

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

// Inline tools are made per run, inside it: crash points naming them are checked then.
declareRunTimeActionTypes('tool.');
