// The graph step kind: the step's calls made from the nodes of a LangGraph graph (one node per call, in a chain),
// each through agent-logbook/langgraph's logbookDo, as runGraph's nodes make them. A step cut by a crash invokes the
// graph again from its first node: every node re-runs, and its actions must come back from the journal.

import { AsyncLocalStorage } from 'node:async_hooks';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { ActionDefinition, RunApi } from 'agent-logbook';
import { LogbookSaver, invokeInStep, logbookDo, runGraph } from 'agent-logbook/langgraph';
import { errorWord, type StepContext } from './steps';
import { stepName, type CallJ, type StepJ } from './spec';

/**
 * With `rawFirst`, the negative control: the first node makes its effect itself, as a plain LangGraph node would
 * (not through logbookDo), so a step re-run after a crash in a later node makes it again.
 */
export async function graphStep(c: StepContext, opts: { readonly rawFirst?: boolean } = {}): Promise<unknown> {
  const State = Annotation.Root({ out: Annotation<unknown[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  let g = new StateGraph(State) as unknown as StateGraph<typeof State.spec, unknown, unknown, string>;
  c.calls.forEach((k, i) => {
    g = g.addNode(`c${i}`, async () => {
      const def = c.defs[k.action];
      if (!def) throw new Error(`checker: no action ${k.action}`);
      const args = c.args(k.n);
      const make = async (): Promise<unknown> => {
        if (!opts.rawFirst || i > 0) return logbookDo(def, args);
        const key = def.key(args, c.run);
        const ctx = {
          idempotencyKey: key,
          runId: c.run.id,
          attempt: c.run.attempt,
          signal: new AbortController().signal,
          assertLease: () => undefined,
          leaseValid: () => true,
        };
        return def.execute(args, ctx);
      };
      if (k.mode === 'use') return { out: [await make()] };
      try {
        const r = await make();
        return { out: [k.mode === 'ignore' ? 'ignored' : r] };
      } catch (err) {
        return { out: [k.mode === 'ignore' ? 'ignored' : `caught:${errorWord(err)}`] };
      }
    });
  });
  g = g.addEdge(START, 'c0');
  for (let i = 1; i < c.calls.length; i++) g = g.addEdge(`c${i - 1}` as never, `c${i}` as never);
  g = g.addEdge(`c${c.calls.length - 1}` as never, END);
  const app = g.compile();
  const final = (await invokeInStep(c.run, app, {}, { configurable: { thread_id: c.run.id } })) as { out: unknown[] };
  return final.out;
}

/**
 * The `graph` agent shape (AgentJ.graph): the whole run is one LangGraph graph that runGraph drives, a node per
 * generated step (s0 → s1 → …), each making its calls through logbookDo, so every node execution is a step of the run.
 * `raw-first`, the negative control: the first node makes its first call's effect itself, as a plain node would.
 */
export function graphAgentRun(spec: { readonly steps: readonly StepJ[]; readonly graph?: 'nodes' | 'nodes-raw-first' }, defs: readonly ActionDefinition[]) {
  const State = Annotation.Root({ out: Annotation<unknown[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  // One graph per agent, its nodes bound to the run and args of the invocation that runs them.
  const current = new AsyncLocalStorage<{ run: RunApi; args: (n: number) => { n: number; amount: number; tag: string } }>();
  let g = new StateGraph(State) as unknown as StateGraph<typeof State.spec, unknown, unknown, string>;
  spec.steps.forEach((s, j) => {
    g = g.addNode(stepName(j), async () => {
      const c = current.getStore();
      if (!c) throw new Error('checker: a graph node ran outside its run');
      const one = async (k: CallJ, i: number): Promise<unknown> => {
        const def = defs[k.action];
        if (!def) throw new Error(`checker: no action ${k.action}`);
        const args = c.args(k.n);
        const make = (): Promise<unknown> =>
          spec.graph === 'nodes-raw-first' && j === 0 && i === 0 ? Promise.resolve(def.execute(args, rawContext(def, args, c.run))) : logbookDo(def, args);
        if (k.mode === 'use') return make();
        try {
          const r = await make();
          return k.mode === 'ignore' ? 'ignored' : r;
        } catch (err) {
          return k.mode === 'ignore' ? 'ignored' : `caught:${errorWord(err)}`;
        }
      };
      const out =
        s.kind === 'all'
          ? await Promise.all(s.calls.map(one))
          : await s.calls.reduce<Promise<unknown[]>>(async (acc, k, i) => [...(await acc), await one(k, i)], Promise.resolve([]));
      return { out: [out] };
    });
  });
  g = g.addEdge(START, stepName(0));
  for (let j = 1; j < spec.steps.length; j++) g = g.addEdge(stepName(j - 1), stepName(j));
  g = g.addEdge(stepName(spec.steps.length - 1), END);
  const app = g.compile({ checkpointer: SAVER });
  return async (
    run: RunApi,
    args: (n: number) => { n: number; amount: number; tag: string },
    from?: { readonly thread: string; readonly checkpoint: string },
  ): Promise<unknown[]> =>
    current.run({ run, args }, async () => {
      // Time travel: LangGraph's config for a past checkpoint of another run's thread, as graph.invoke takes it.
      const final = from
        ? await runGraph(run, app, null, { config: { configurable: { thread_id: from.thread, checkpoint_id: from.checkpoint } } })
        : await runGraph(run, app, {});
      return (final as { out: unknown[] }).out;
    });
}

/** One saver for every graph agent of the process: it opens each run's journal as runGraph drives the run. */
const SAVER = new LogbookSaver();

function rawContext(def: ActionDefinition, args: unknown, run: RunApi) {
  return {
    idempotencyKey: def.key(args, run),
    runId: run.id,
    attempt: run.attempt,
    signal: new AbortController().signal,
    assertLease: () => undefined,
    leaseValid: () => true,
  };
}
