// Journaled models for the Agents SDK: each response (streamed or not) a fingerprinted model call, answered from the journal on resume.

import { Usage, type Model, type ModelProvider, type ModelRequest, type ModelResponse, type StreamEvent } from '@openai/agents';
import { callSite, type RunApi } from 'agent-logbook';
import { callParams, decode, encode, generateAction, journaledCall, stateOf, streamAction, type AiRunState } from './shared';

type DriftPolicy = 'fail' | 'rerun';

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
