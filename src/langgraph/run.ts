// A LangGraph thread driven as a Logbook run: runGraph (invocations as steps, interrupt() as an approval gate) and
// logbookDo, a Logbook action inside a node, keyed by the node's task so a re-run node does not repeat its effect.
//
// The thread's id is the run's id and its checkpoints live in the run's journal (LogbookSaver). Each invocation of the
// graph is one step; when it stops at interrupt(), each interrupt becomes an action gated by approval (the run waits
// for a person: `logbook approve <run> <action> --note '<answer as JSON>'`), and the next step resumes the graph with
// the answers. A crash anywhere resumes the same way: the step that was cut re-enters the graph from its latest durable
// checkpoint (never with the input again), and the nodes it re-runs find their committed actions in the journal.

import * as z from 'zod/mini';
import { Command, getConfig } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  defineAction,
  ErrorCodes,
  LogbookError,
  type ActionDefinition,
  type ActionSpec,
  type EffectContext,
  type InferInput,
  type InferOutput,
  type RunApi,
  type StandardSchema,
} from 'agent-logbook';
import { LogbookSaver } from './saver';
import { driving } from './context';

/** What runGraph needs of a compiled graph (a CompiledStateGraph is one). */
export interface DrivableGraph {
  readonly checkpointer?: unknown;
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  getState(config: RunnableConfig): Promise<{
    readonly values: unknown;
    readonly metadata?: unknown;
    readonly next: readonly string[];
    readonly config: RunnableConfig;
    readonly tasks: readonly {
      readonly name: string;
      readonly path?: unknown;
      readonly interrupts?: readonly { readonly id?: string; readonly value?: unknown }[];
    }[];
  }>;
}

export interface RunGraphOptions {
  /** Names the steps (`graph <name>`); default "graph". */
  readonly name?: string;
  /** More of LangGraph's config for every invocation (recursionLimit, configurable values); thread_id is the run's id. */
  readonly config?: RunnableConfig;
}

/** One interrupt() a node raised, as the run journals it. */
export interface GraphInterrupt {
  readonly id: string;
  readonly node: string;
  /** Where it was raised, the same in every run of the graph (its action's key): node path, superstep, index. */
  readonly place: string;
  readonly value: unknown;
}

const InterruptArgs = z.object({ thread: z.string(), id: z.string(), node: z.string(), place: z.string(), value: z.unknown() });

function saverOf(graph: DrivableGraph): LogbookSaver {
  if (graph.checkpointer instanceof LogbookSaver) return graph.checkpointer;
  throw new LogbookError(
    ErrorCodes.USAGE,
    'runGraph: the graph was not compiled with a LogbookSaver, so its thread cannot resume with its run.',
    "Compile it with `graph.compile({ checkpointer: new LogbookSaver() })` (the saver on the run's journal: the same --journal or $LOGBOOK_JOURNAL).",
  );
}

/** The action an interrupt waits at: approved with a note, it answers the interrupt with the note (JSON, or the text). */
const interruptGate: ActionDefinition<typeof InterruptArgs, unknown> = defineAction({
  type: 'langgraph.interrupt',
  version: 1,
  // Its only effect is to read the person's answer, which the journal keeps: safe to read again.
  effect: 'idempotent',
  approval: true,
  args: InterruptArgs,
  key: (a) => `langgraph:${a.thread}:interrupt:${a.place}`,
  description: 'A LangGraph interrupt(): approve with --note to answer it (JSON, or text).',
  execute: (_a, ctx) => {
    const saver = driving.getStore()?.saver;
    const note = saver?.approvalNote(ctx.runId, ctx.idempotencyKey);
    if (note === undefined)
      throw new LogbookError(
        ErrorCodes.USAGE,
        `The LangGraph interrupt ${ctx.idempotencyKey} is not in ${saver?.target ?? 'the journal'}, the journal of the graph's LogbookSaver.`,
        "Open the LogbookSaver on the run's journal (the same --journal, or $LOGBOOK_JOURNAL), then resume the run.",
      );
    if (note === null) return true;
    try {
      return JSON.parse(note) as unknown;
    } catch {
      return note;
    }
  },
});

/** A task's place that every run of the same graph gives the same name: namespace without task ids, superstep, push index. */
function taskPlace(ns: string, step: unknown, path: unknown): string {
  const names = ns
    .split('|')
    .map((part) => part.split(':')[0])
    .join('|');
  const push = Array.isArray(path) && path[0] === '__pregel_push' ? `#${path.slice(1).map(String).join('.')}` : '';
  return `${names}@${String(step)}${push}`;
}

function pendingInterrupts(state: Awaited<ReturnType<DrivableGraph['getState']>>): GraphInterrupt[] {
  const step = (state.metadata as { step?: unknown } | undefined)?.step;
  return state.tasks.flatMap((t) =>
    (t.interrupts ?? []).map((i, k) => ({
      id: String(i.id),
      node: t.name,
      place: `${taskPlace(t.name, typeof step === 'number' ? step + 1 : step, t.path)}:${k}`,
      value: i.value === undefined ? null : (JSON.parse(JSON.stringify(i.value)) as unknown),
    })),
  );
}

/**
 * Drives `graph` on the thread of `run` until it ends, and returns its final state. Call it inside the agent's
 * `run(run, input)`. Each invocation is a step; each interrupt() waits for a person as an approval gate.
 */
export async function runGraph(run: RunApi, graph: DrivableGraph, input: unknown, opts: RunGraphOptions = {}): Promise<unknown> {
  const saver = saverOf(graph);
  const name = opts.name ?? 'graph';
  const thread = run.id;
  // durability 'sync': a superstep's checkpoint is durable before the next superstep's effects start, so a resume never
  // runs again a node whose writes had been saved.
  const config = { durability: 'sync', ...opts.config, configurable: { ...opts.config?.configurable, thread_id: thread } } as RunnableConfig;
  let answers: Record<string, unknown> | undefined;
  // The thread's checkpoint at the end of the last step: a fork of this run (`logbook fork`) replays the steps before
  // its fork point, and its thread starts as a copy of the origin's thread up to that checkpoint.
  let reached: string | undefined;
  for (let round = 0; ; round++) {
    const stepName = round === 0 ? name : `${name}: resume ${round}`;
    const given = answers;
    const from = reached;
    const stopped: GraphStop = await run.step(stepName, () =>
      driving.run({ run, saver }, async () => {
        const origin = saver.forkOrigin(run.id);
        if (origin !== undefined && from !== undefined) await saver.copyThread(origin, thread, from);
        const before = await graph.getState(config);
        const started = before.config.configurable?.checkpoint_id !== undefined;
        const waiting = pendingInterrupts(before);
        if (!started) await graph.invoke(input, config);
        else if (waiting.length > 0) {
          const resume = given && waiting.some((w) => w.id in given) ? (waiting.length === 1 && waiting[0] ? given[waiting[0].id] : given) : undefined;
          if (resume !== undefined) await graph.invoke(new Command({ resume }), config);
          // else: cut after the graph stopped at interrupt() and before the step was journaled; nothing to run.
        } else {
          // Cut mid-graph (or after it ended, before the step was journaled): continue from the latest checkpoint and
          // its pending writes; a thread that had ended runs nothing.
          await graph.invoke(null, config);
        }
        const after = await graph.getState(config);
        const checkpoint: unknown = after.config.configurable?.checkpoint_id;
        return { interrupts: pendingInterrupts(after), ...(typeof checkpoint === 'string' ? { checkpoint } : {}) };
      }),
    );
    reached = stopped.checkpoint;
    const interrupts = stopped.interrupts;
    if (interrupts.length === 0) break;
    const got: Record<string, unknown> = {};
    for (const i of interrupts) {
      got[i.id] = await run.step(`interrupt: ${i.node}`, () =>
        driving.run({ run, saver }, () => run.do(interruptGate, { thread, id: i.id, node: i.node, place: i.place, value: i.value })),
      );
    }
    answers = got;
  }
  return driving.run({ run, saver }, async () => (await graph.getState(config)).values);
}

const derived = new WeakMap<ActionDefinition, ActionDefinition>();

/** What an invocation step journals: the interrupts it stopped at, and the thread's checkpoint then. */
interface GraphStop {
  readonly interrupts: GraphInterrupt[];
  readonly checkpoint?: string;
}

interface Placed {
  readonly place: string;
  readonly args: unknown;
}

/** The action as run inside a node: its args carry the node's place (thread, namespace, task), and so does its key. */
function inNode<S extends StandardSchema, R>(action: ActionDefinition<S, R>): ActionDefinition<StandardSchema<Placed>, R> {
  const seen = derived.get(action as unknown as ActionDefinition);
  if (seen) return seen as unknown as ActionDefinition<StandardSchema<Placed>, R>;
  const inner = action.args['~standard'];
  const args: StandardSchema<Placed> = {
    '~standard': {
      version: 1,
      vendor: 'agent-logbook/langgraph',
      validate: (v) => {
        const o = v as Partial<Placed> | null;
        if (typeof o !== 'object' || o === null || typeof o.place !== 'string') return { issues: [{ message: 'expected { place, args }' }] };
        const place = o.place;
        const done = (r: Awaited<ReturnType<typeof inner.validate>>) =>
          r.issues ? { issues: r.issues.map((i) => ({ ...i, path: ['args', ...(i.path ?? [])] })) } : { value: { place, args: r.value } };
        const r = inner.validate(o.args);
        return r instanceof Promise ? r.then(done) : done(r);
      },
    },
  };
  type U = InferOutput<S>;
  const user = (a: Placed): U => a.args as U;
  const spec: ActionSpec<StandardSchema<Placed>, R> = {
    type: action.type,
    version: action.version,
    effect: action.effect,
    args,
    key: (a, r) => `${a.place}/${action.key(user(a), r)}`,
    execute: (a, ctx) => action.execute(user(a), ctx),
    ...(action.verify ? { verify: (a: Placed, ctx: EffectContext) => action.verify?.(user(a), ctx) } : {}),
    ...(action.failure ? { failure: (err: unknown, a: Placed) => action.failure!(err, user(a)) } : {}),
    ...(action.compensate ? { compensate: (a: Placed, result: R, ctx: EffectContext) => action.compensate?.(user(a), result, ctx) } : {}),
    ...(action.unrecordedResult ? { unrecordedResult: (a: Placed) => action.unrecordedResult!(user(a)) } : {}),
    ...(action.verifyTimeoutMs !== undefined ? { verifyTimeoutMs: action.verifyTimeoutMs } : {}),
    ...(action.started !== undefined ? { started: action.started } : {}),
    ...(action.approval !== undefined ? { approval: action.approval } : {}),
    ...(action.description !== undefined ? { description: action.description } : {}),
  };
  const def = defineAction(spec);
  derived.set(action as unknown as ActionDefinition, def as unknown as ActionDefinition);
  return def;
}

/**
 * Runs a Logbook action inside a LangGraph node that runGraph drives: bracketed in the run's journal and keyed by the
 * node's thread, checkpoint namespace and task, so a node that runs again (resumed after interrupt() or a crash)
 * gets the journaled result instead of repeating the effect.
 */
export async function logbookDo<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: InferInput<S>): Promise<R> {
  const d = driving.getStore();
  let config: RunnableConfig | undefined;
  try {
    config = getConfig();
  } catch {
    config = undefined;
  }
  const thread: unknown = config?.configurable?.thread_id;
  const ns: unknown = config?.configurable?.checkpoint_ns;
  const meta = (config?.metadata ?? {}) as { langgraph_step?: unknown; langgraph_path?: unknown };
  if (!d || typeof thread !== 'string' || typeof ns !== 'string' || ns === '')
    throw new LogbookError(
      ErrorCodes.USAGE,
      `logbookDo(${action.type}) was called outside a LangGraph node that runGraph drives.`,
      'Call it inside a node of a graph passed to runGraph(run, graph, input); elsewhere use run.do.',
    );
  // Task ids hash the checkpoint id (a time-based uuid): the place names the task by what makes it, so a rehearsal's
  // runs, and every re-run of the task in this run, derive the same key.
  return d.run.do(inNode(action), { place: `langgraph:${thread}:${taskPlace(ns, meta.langgraph_step, meta.langgraph_path)}`, args });
}

/**
 * Invokes `graph` once inside the current step of `run` (a graph as one step of a larger agent), with its nodes'
 * logbookDo bound to the run. Unlike runGraph it journals no step of its own: a step cut by a crash invokes the graph
 * again, and the nodes it re-runs find their actions in the journal.
 */
export async function invokeInStep(
  run: RunApi,
  graph: Pick<DrivableGraph, 'invoke' | 'checkpointer'>,
  input: unknown,
  config?: RunnableConfig,
): Promise<unknown> {
  const saver = graph.checkpointer instanceof LogbookSaver ? graph.checkpointer : { target: 'no LogbookSaver', approvalNote: () => undefined };
  return driving.run({ run, saver }, () => graph.invoke(input, config));
}
