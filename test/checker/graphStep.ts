// The graph step kind: the step's calls made from the nodes of a LangGraph graph (one node per call, in a chain),
// each through agent-logbook/langgraph's logbookDo, as runGraph's nodes make them. A step cut by a crash invokes the
// graph again from its first node: every node re-runs, and its actions must come back from the journal.

import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { invokeInStep, logbookDo } from 'agent-logbook/langgraph';
import { errorWord, type StepContext } from './steps';

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
