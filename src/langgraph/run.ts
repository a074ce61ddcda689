// A LangGraph thread driven as a Logbook run: runGraph (each execution of a root node is a step of the run, interrupt()
// an approval gate, LangGraph's time travel a fork) and logbookDo, a Logbook action inside a node, keyed by the node's
// task so that a node run again does not repeat its effect.
//
// The thread's id is the run's id and its checkpoints live in the run's journal (LogbookSaver). The run's steps are:
// the graph's start (`graph`), one step per execution of a root node (`<node>@<superstep>`, its actions under it),
// one per interrupt() answered (`interrupt: <node>@<superstep>`, an action gated by approval: the run waits for a
// person), and the end (`graph: end`, the thread's last checkpoint). Time travel (a past checkpoint of another run's
// thread in the config) is a fork of that run: this run's thread starts as that thread up to the checkpoint. A crash anywhere resumes from the thread's latest
// durable checkpoint: the steps journaled before are given back in their order (ledger.ts), LangGraph runs again the
// nodes whose writes were not saved, each at its own step, and their actions come back from the journal.

import { Command, getConfig, isGraphBubbleUp, isGraphInterrupt } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  callSite,
  defineAction,
  ErrorCodes,
  LogbookError,
  type ActionDefinition,
  type ActionSpec,
  type EffectContext,
  type InferInput,
  type InferOutput,
  type RunApi,
  type SourceLocation,
  type StandardSchema,
} from 'agent-logbook';
import { LogbookSaver } from './saver';
import { driving, type Driving, type NodeStepper } from './context';
import { GATE_PREFIX, Ledger, nodeOf, type EndRecord, type GateRecord, type NodeRecord } from './ledger';
import { nodeSite, taskPlace, wrapNodes } from './nodes';

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
      readonly id: string;
      readonly name: string;
      readonly path?: unknown;
      readonly interrupts?: readonly { readonly id?: string; readonly value?: unknown }[];
    }[];
  }>;
}

export interface RunGraphOptions {
  /** Names the first and last steps (`graph`, `graph: end`); default "graph". */
  readonly name?: string;
  /**
   * More of LangGraph's config for every invocation (recursionLimit, configurable values); the thread is the run's.
   * Time travel: `configurable: { thread_id, checkpoint_id }`, as graph.invoke takes it to fork from a past checkpoint
   * (a config that getStateHistory gave), naming another run's thread: this run's thread starts as that thread up to
   * that checkpoint (the same checkpoints) and runs on from there, with `input` (null: the checkpoint's own next
   * nodes), and the journal records this run as a fork of that run.
   */
  readonly config?: RunnableConfig;
}

/** One interrupt() a node raised and no answer has reached yet, as the run journals it. */
export interface GraphInterrupt {
  readonly id: string;
  readonly node: string;
  /** Where it was raised, the same in every run of the graph: `node@superstep` (the gate's key adds an ordinal). */
  readonly place: string;
  readonly value: unknown;
}

interface InterruptArgs {
  readonly thread: string;
  readonly id: string;
  readonly node: string;
  readonly place: string;
  readonly value: unknown;
}

const interruptArgs: StandardSchema<InterruptArgs> = {
  '~standard': {
    version: 1,
    vendor: 'agent-logbook/langgraph',
    validate: (v) => {
      const o = v as Partial<InterruptArgs> | null;
      const bad = (['thread', 'id', 'node', 'place'] as const).find((k) => typeof o?.[k] !== 'string');
      return bad === undefined && o && 'value' in o
        ? { value: o as InterruptArgs }
        : { issues: [{ message: `expected a string ${bad ?? 'value'}`, path: [bad ?? 'value'] }] };
    },
  },
};

function saverOf(graph: DrivableGraph): LogbookSaver {
  if (graph.checkpointer instanceof LogbookSaver) return graph.checkpointer;
  throw new LogbookError(
    ErrorCodes.USAGE,
    'runGraph: the graph was not compiled with a LogbookSaver, so its thread cannot resume with its run.',
    "Compile it with `graph.compile({ checkpointer: new LogbookSaver() })` (the saver on the run's journal: the same --journal or $LOGBOOK_JOURNAL).",
  );
}

/** The action an interrupt waits at: approved with a note, it answers the interrupt with the note (JSON, or the text). */
const interruptGate: ActionDefinition<typeof interruptArgs, unknown> = defineAction({
  type: 'langgraph.interrupt',
  version: 1,
  // Its only effect is to read the person's answer, which the journal keeps: safe to read again.
  effect: 'idempotent',
  approval: true,
  args: interruptArgs,
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

/** A value as the journal can keep it (an interrupt's question may hold what JSON cannot). */
function plain(v: unknown): unknown {
  if (v === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(v)) as unknown;
  } catch {
    return typeof v === 'bigint' ? v.toString() : Object.prototype.toString.call(v);
  }
}

const NOT_OUTPUT = new Set(['__error__', '__error_source_node__', '__interrupt__', '__resume__']);

interface TaskNow {
  readonly id: string;
  readonly name: string;
  readonly place: string;
  /** Its writes are saved: LangGraph does not run it again. */
  readonly done: boolean;
  readonly interrupts: readonly { readonly id: string; readonly value: unknown }[];
}

interface ThreadNow {
  readonly checkpoint: string | undefined;
  readonly tasks: readonly TaskNow[];
  /** Interrupts of tasks not done: each waits for an answer. */
  readonly waiting: readonly GraphInterrupt[];
  readonly values: unknown;
}

async function threadNow(graph: DrivableGraph, saver: LogbookSaver, d: Driving, config: RunnableConfig): Promise<ThreadNow> {
  const state = await graph.getState(config);
  const checkpoint = state.config.configurable?.checkpoint_id as string | undefined;
  const step = (state.metadata as { step?: unknown } | undefined)?.step;
  const written = checkpoint === undefined ? new Map<string, string[]>() : saver.writtenChannels(d.run.id, checkpoint);
  const tasks = state.tasks.map((t): TaskNow => ({
    id: t.id,
    name: t.name,
    place: taskPlace(t.name, typeof step === 'number' ? step + 1 : step, t.path),
    done: (written.get(t.id) ?? []).some((ch) => !NOT_OUTPUT.has(ch)),
    interrupts: (t.interrupts ?? []).map((i) => ({ id: String(i.id), value: plain(i.value) })),
  }));
  const waiting = tasks.filter((t) => !t.done).flatMap((t) => t.interrupts.map((i) => ({ id: i.id, node: t.name, place: t.place, value: i.value })));
  return { checkpoint, tasks, waiting, values: state.values };
}

/** What runGraph's first step journals: the thread, its own position, and the checkpoint time travel started from. */
interface StartRecord {
  readonly thread: string;
  readonly at: number;
  readonly from?: { readonly run: string; readonly checkpoint: string; readonly step: number };
}

function startRecordOf(v: unknown, runId: string): StartRecord {
  const r = v as Partial<StartRecord> | null;
  if (typeof r?.thread === 'string' && typeof r.at === 'number') return r as StartRecord;
  throw new LogbookError(
    ErrorCodes.NONDETERMINISM,
    `Run ${runId} was started by an earlier agent-logbook/langgraph, whose steps were the graph's invocations: this one runs each node as a step, and cannot go on from them. Nothing new was executed.`,
    'Finish the run with the agent-logbook version that started it, or start a new run.',
    { runId },
  );
}

/** The checkpoint of another thread that opts.config names: LangGraph's time travel, as a fork of that run. */
function timeTravel(config: RunnableConfig | undefined, thread: string): { readonly from: string; readonly checkpoint: string } | undefined {
  const c = config?.configurable ?? {};
  const from: unknown = c.thread_id;
  const checkpoint: unknown = c.checkpoint_id;
  if (checkpoint === undefined && (from === undefined || from === thread)) return undefined;
  if (typeof checkpoint !== 'string' || checkpoint === '' || typeof from !== 'string' || from === '' || from === thread)
    throw new LogbookError(
      ErrorCodes.USAGE,
      `runGraph: config.configurable names ${typeof from === 'string' ? `thread ${JSON.stringify(from)}` : 'no thread'} and ${typeof checkpoint === 'string' ? `checkpoint ${checkpoint}` : 'no checkpoint'}. The run's own thread is the run's id (${thread}); to start from a past checkpoint, name another run's thread and one of its checkpoints.`,
      "Leave thread_id and checkpoint_id out, or give both: `{ configurable: { thread_id: '<run id>', checkpoint_id: '<checkpoint id>' } }` (graph.getStateHistory lists them).",
    );
  return { from, checkpoint };
}

/** The step of run `from` from which its thread was past `checkpoint`: a time-travel fork's origin. */
function forkStep(saver: LogbookSaver, from: string, checkpoint: string): number {
  const steps = saver.journaledSteps(from, 0);
  for (const s of steps) {
    let r: unknown;
    try {
      r = s.result === null ? null : JSON.parse(s.result);
    } catch {
      r = null;
    }
    const cp = (r as Partial<NodeRecord> | null)?.checkpoint ?? (r as Partial<EndRecord> | null)?.end;
    if (typeof cp === 'string' && cp >= checkpoint) return s.idx;
  }
  return steps.length;
}

/** Inside a node step: the node runs; a control LangGraph raises (interrupt()) ends the step, not as a failure. */
function stepperFor(ledger: Ledger): NodeStepper {
  return {
    async nodeStep(facts, body, at) {
      let out: { readonly value: unknown } | { readonly control: unknown } | undefined;
      await ledger.nodeStep(
        facts.place,
        async (): Promise<NodeRecord> => {
          const base = { node: facts.node, superstep: facts.superstep, task: facts.task, checkpoint: facts.checkpoint };
          try {
            out = { value: await body() };
            return { ...base, outcome: 'done' };
          } catch (err) {
            if (!isGraphBubbleUp(err)) throw err;
            out = { control: err };
            return isGraphInterrupt(err)
              ? { ...base, outcome: 'interrupted', interrupts: (err.interrupts ?? []).map((i: { value?: unknown }) => plain(i.value)) }
              : { ...base, outcome: 'handed-on' };
          }
        },
        at,
      );
      if (out === undefined)
        throw new LogbookError(ErrorCodes.NONDETERMINISM, `runGraph: the step of ${facts.place} was replayed instead of run.`, 'Start a new run.');
      if ('control' in out) throw out.control;
      return out.value;
    },
  };
}

/**
 * Drives `graph` on the thread of `run` until it ends, and returns its final state. Call it inside the agent's
 * `run(run, input)`, outside any step: each execution of a root node is a step, each interrupt() waits for a person
 * as an approval gate. The graph's nodes are wrapped for it (once); outside runGraph they run as before.
 */
export async function runGraph(run: RunApi, graph: DrivableGraph, input: unknown, opts: RunGraphOptions = {}): Promise<unknown> {
  const saver = saverOf(graph);
  const inside = run.currentStep();
  if (inside)
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `runGraph was called inside step "${inside.name}": it runs each node as a step of the run, and steps do not nest.`,
      'Call runGraph outside run.step, or run the graph as one step with invokeInStep(run, graph, input).',
    );
  // Everything runGraph does runs with the run as its context: the saver opens the run's journal from it.
  let ledger: Ledger | undefined;
  const steps: NodeStepper = {
    nodeStep: (facts, body, at) => {
      if (!ledger) throw new Error('internal: a node ran before runGraph read its journaled steps');
      return stepperFor(ledger).nodeStep(facts, body, at);
    },
  };
  const d: Driving = { run, saver, steps };
  return driving.run(d, () =>
    drive(run, graph, saver, d, input, opts, (l) => {
      ledger = l;
    }),
  );
}

async function drive(
  run: RunApi,
  graph: DrivableGraph,
  saver: LogbookSaver,
  d: Driving,
  input: unknown,
  opts: RunGraphOptions,
  use: (ledger: Ledger) => void,
): Promise<unknown> {
  if (!saver.runInfo(run.id))
    throw new LogbookError(
      ErrorCodes.USAGE,
      `runGraph: the graph's LogbookSaver keeps its checkpoints in ${saver.target}, which does not hold run ${run.id}.`,
      "Open the LogbookSaver on the run's journal: `new LogbookSaver()` (it follows the run), or the same --journal / $LOGBOOK_JOURNAL.",
    );
  wrapNodes(graph);
  const name = opts.name ?? 'graph';
  const thread = run.id;
  const travel = timeTravel(opts.config, thread);
  const configurable = Object.fromEntries(Object.entries(opts.config?.configurable ?? {}).filter(([k]) => k !== 'thread_id' && k !== 'checkpoint_id'));
  // durability 'sync': a superstep's checkpoint is durable before the next superstep's effects start, so a resume never
  // runs again a node whose writes had been saved.
  const config = { durability: 'sync', ...opts.config, configurable: { ...configurable, thread_id: thread } } as RunnableConfig;
  const at = callSite();
  const start = startRecordOf(
    await run.step(
      name,
      (): StartRecord => {
        const here = run.currentStep()?.index ?? 0;
        if (!travel) return { thread, at: here };
        const step = forkStep(saver, travel.from, travel.checkpoint);
        if (saver.runInfo(travel.from)) saver.recordFork(thread, travel.from, step, { checkpoint: travel.checkpoint, via: 'langgraph' });
        return { thread, at: here, from: { run: travel.from, checkpoint: travel.checkpoint, step } };
      },
      { at },
    ),
    run.id,
  );
  const ledger = new Ledger(run, saver.journaledSteps(run.id, start.at + 1), `${name}: end`);
  use(ledger);
  await startThread(saver, run.id, start, ledger);
  const invoke = (value: unknown, cfg: RunnableConfig = config): Promise<unknown> => graph.invoke(value, cfg);
  classify(ledger, await threadNow(graph, saver, d, config));

  let seen = '';
  let travelled = false;
  for (;;) {
    await ledger.replayReady();
    if (ledger.ended) break;
    const now = await threadNow(graph, saver, d, config);
    const unanswered = now.waiting.filter((w) => ledger.answer(w.id) === undefined);
    // Each pass must move the thread on, or answer an interrupt: a graph that would not is stopped, not spun.
    const mark = [now.checkpoint, now.tasks.map((t) => `${t.id}:${String(t.done)}`), now.waiting.map((w) => w.id), unanswered.length, ledger.waiting];
    if (JSON.stringify(mark) === seen)
      throw new LogbookError(
        ErrorCodes.USAGE,
        `runGraph: the graph stopped at checkpoint ${now.checkpoint ?? '(none)'} before ${now.tasks.map((t) => t.name).join(', ') || 'nothing'} and does not go on when invoked again.`,
        'Compile the graph without interruptBefore/interruptAfter (runGraph waits at interrupt() instead), or drive this thread with graph.invoke yourself.',
      );
    seen = JSON.stringify(mark);
    if (now.checkpoint === undefined || (travel && !travelled && input !== null && input !== undefined && now.checkpoint === travel.checkpoint)) {
      // The first invocation: the input, on an empty thread or (time travel) at the past checkpoint its copy ends at.
      travelled = true;
      await invoke(input);
    } else if (now.waiting.length > 0 && (unanswered.length === 0 || !ledger.waiting)) {
      const answers: Record<string, unknown> = {};
      for (const w of now.waiting) answers[w.id] = ledger.answer(w.id)?.answer ?? (await gate(run, ledger, graph, w));
      const only = now.waiting.length === 1 ? now.waiting[0] : undefined;
      await invoke(new Command({ resume: only ? answers[only.id] : answers }));
    } else if (now.tasks.length > 0 || ledger.waiting) {
      // On from the latest checkpoint and its writes: a run cut mid-graph, a node step LangGraph is to run again, or
      // (time travel) the past checkpoint's tasks, run again on this run's own thread.
      await invoke(null);
    } else break;
    await ledger.settle();
  }
  await ledger.settle();
  if (!ledger.ended) {
    const end = await threadNow(graph, saver, d, config);
    await ledger.loopStep(`${name}: end`, (): EndRecord => ({ end: end.checkpoint ?? null }), at);
  }
  return (await threadNow(graph, saver, d, config)).values;
}

/** A gate step: the run waits for a person's answer to interrupt `w`, then journals it with the interrupt's id. */
async function gate(run: RunApi, ledger: Ledger, graph: DrivableGraph, w: GraphInterrupt): Promise<unknown> {
  const name = `${GATE_PREFIX}${w.place}`;
  const n = ledger.nextGateOrdinal(name);
  // The debugger shows the gate, and its step, at the addNode line of the node that asked.
  const at = nodeSite(graph, w.node);
  const r = await ledger.loopStep(
    name,
    async (): Promise<GateRecord> => {
      const answer = await run.do(interruptGate, { thread: run.id, id: w.id, node: w.node, place: `${w.place}:${n}`, value: w.value }, { at });
      return { interrupt: w.id, answer: plain(answer) };
    },
    at,
  );
  return r.answer;
}

/** How each node step an earlier attempt left unfinished goes on: run again by LangGraph at its position, or closed. */
function classify(ledger: Ledger, now: ThreadNow): void {
  for (const e of ledger.openNodes()) {
    const base = nodeOf(e.name);
    const t = now.tasks.find((x) => x.place === e.name);
    if (!t) {
      ledger.decide(e.idx, { rerun: false, record: { ...base, outcome: 'not-run-again' } });
      continue;
    }
    const at = { ...base, task: t.id, ...(now.checkpoint !== undefined ? { checkpoint: now.checkpoint } : {}) };
    if (t.done) ledger.decide(e.idx, { rerun: false, record: { ...at, outcome: 'done' } });
    else if (t.interrupts.some((i) => ledger.answer(i.id) === undefined))
      ledger.decide(e.idx, { rerun: false, record: { ...at, outcome: 'interrupted', interrupts: t.interrupts.map((i) => i.value) } });
    else ledger.decide(e.idx, { rerun: true });
  }
}

/**
 * A fork's thread, before anything reads it. `logbook fork` (the start step came from the origin): the origin's
 * thread up to the checkpoint its inherited node steps ran from, with the writes of those of them that ended there, so
 * LangGraph runs again exactly the nodes after the fork point. Time travel: the origin's thread up to the checkpoint.
 */
async function startThread(saver: LogbookSaver, runId: string, start: StartRecord, ledger: Ledger): Promise<void> {
  const origin = saver.runInfo(runId)?.forkedFrom;
  if (start.thread !== runId && origin !== undefined) {
    const inherited = ledger.entries.filter((e) => e.attempt === 0 && e.status === 'completed');
    const end = inherited.find((e) => e.kind === 'end');
    const endAt = (end?.parsed as EndRecord | null | undefined)?.end;
    if (typeof endAt === 'string') return saver.copyThread(origin, runId, endAt, 'all');
    const nodes = inherited
      .filter((e) => e.kind === 'node' && typeof (e.parsed as NodeRecord | null)?.checkpoint === 'string')
      .map((e) => e.parsed as NodeRecord);
    const last = nodes[nodes.length - 1];
    if (last?.checkpoint !== undefined) {
      const ended = nodes.filter((n) => n.checkpoint === last.checkpoint && (n.outcome === 'done' || n.outcome === 'interrupted') && n.task !== undefined);
      // A node step checkpointed whose writes the origin's thread lacks (it was cut between the two): the fork would
      // run that node again under its own keys, so an effect before the fork point would be made twice.
      const written = saver.writtenChannels(origin, last.checkpoint);
      const lost = ended.find((n) => !(written.get(n.task as string) ?? []).some((ch) => !NOT_OUTPUT.has(ch) || n.outcome === 'interrupted'));
      if (lost)
        throw new LogbookError(
          ErrorCodes.USAGE,
          `Run ${runId} forks run ${origin} after node ${lost.node}@${lost.superstep}, whose step was checkpointed but whose writes ${origin}'s thread does not hold (it was cut between the two): the fork would run that node again under its own keys and repeat its effects. Nothing was run.`,
          `Resume run ${origin} first (it runs the node again, its effects found in the journal, and saves its writes), then fork it again; or fork at an earlier step.`,
          { runId, origin },
        );
      return saver.copyThread(origin, runId, last.checkpoint, new Set(ended.map((n) => n.task as string)));
    }
  }
  if (start.from) await saver.copyThread(start.from.run, runId, start.from.checkpoint, new Set());
}

// ---- logbookDo -------------------------------------------------------------------------------------------------

const derived = new WeakMap<ActionDefinition, ActionDefinition>();

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
 * Runs a Logbook action inside a LangGraph node that runGraph (or invokeInStep) drives: bracketed in the run's journal
 * and keyed by the node's thread, checkpoint namespace and task, so a node that runs again (resumed after interrupt()
 * or a crash) gets the journaled result instead of repeating the effect. Under runGraph it is an action of the node's
 * step; the debugger shows it at this call's line.
 */
export async function logbookDo<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: InferInput<S>): Promise<R> {
  const at: SourceLocation | undefined = callSite();
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
  return d.run.do(inNode(action), { place: `langgraph:${thread}:${taskPlace(ns, meta.langgraph_step, meta.langgraph_path)}`, args }, { at });
}

/**
 * Invokes `graph` once inside the current step of `run` (a graph as one step of a larger agent), with its nodes'
 * logbookDo bound to the run. Unlike runGraph its nodes are not steps: a step cut by a crash invokes the graph again,
 * and the nodes it re-runs find their actions in the journal.
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
