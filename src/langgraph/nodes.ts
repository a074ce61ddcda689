// A graph's root nodes as steps of the run: each node's runnable is wrapped so that, under runGraph, one execution of
// the node runs inside one step of the run (its actions journaled under it), and the addNode lines that name them.
//
// The wrapper replaces a compiled graph's PregelNode.bound (the node's own runnable; LangGraph appends the channel
// writers after it, per task). It is transparent outside runGraph (invokeInStep, a plain invoke) and for nested
// namespaces (a subgraph's nodes run inside the step of the parent node that called it).

import { Runnable, type RunnableConfig } from '@langchain/core/runnables';
import { StateGraph } from '@langchain/langgraph';
import { callSite, ErrorCodes, LogbookError, type SourceLocation } from 'agent-logbook';
import { driving, type TaskFacts } from './context';

/** A task's place that every run of the same graph gives the same name: namespace without task ids, superstep, push index. */
export function taskPlace(ns: string, step: unknown, path: unknown): string {
  const names = ns
    .split('|')
    .map((part) => part.split(':')[0])
    .join('|');
  const push = Array.isArray(path) && path[0] === '__pregel_push' ? `#${path.slice(1).map(String).join('.')}` : '';
  return `${names}@${String(step)}${push}`;
}

// ---- addNode lines -------------------------------------------------------------------------------------------

const SITES = new WeakMap<object, Map<string, SourceLocation>>();
const PATCHED = Symbol.for('agent-logbook.langgraph.addNode-sites');

/**
 * Notes the user's line of every addNode call (callSite(): only in a process whose driver shows lines, the debugger's
 * runner; elsewhere it costs nothing), so a node's step is shown at, and a line breakpoint on, its addNode line.
 */
function noteAddNodeSites(): void {
  const proto = StateGraph.prototype as unknown as Record<string | symbol, unknown>;
  const original = proto.addNode;
  if (proto[PATCHED] === true || typeof original !== 'function') return;
  proto[PATCHED] = true;
  proto.addNode = function addNode(this: object, ...args: unknown[]): unknown {
    const at = callSite();
    if (at) {
      const first: unknown = args[0];
      const names: unknown[] =
        typeof first === 'string'
          ? [first]
          : Array.isArray(first)
            ? first.map((e: unknown) => (Array.isArray(e) ? (e[0] as unknown) : undefined))
            : Object.keys(first ?? {});
      const sites = SITES.get(this) ?? new Map<string, SourceLocation>();
      SITES.set(this, sites);
      for (const n of names) if (typeof n === 'string' && !sites.has(n)) sites.set(n, at);
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
}
noteAddNodeSites();

// ---- the wrapper ---------------------------------------------------------------------------------------------

export function taskFacts(node: string, config: RunnableConfig | undefined): TaskFacts | undefined {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  const meta = (config?.metadata ?? {}) as { langgraph_step?: unknown; langgraph_path?: unknown };
  const ns = c.checkpoint_ns;
  const task = c.__pregel_task_id;
  const map = c.checkpoint_map as Record<string, unknown> | undefined;
  const checkpoint = map?.[''];
  if (typeof ns !== 'string' || ns.includes('|') || typeof task !== 'string' || typeof checkpoint !== 'string' || typeof meta.langgraph_step !== 'number')
    return undefined;
  return { node, superstep: meta.langgraph_step, task, checkpoint, place: taskPlace(ns, meta.langgraph_step, meta.langgraph_path) };
}

const NODE_STEP = Symbol.for('agent-logbook.langgraph.node-step');

/** A node's runnable, run as a step of the run under runGraph. */
class NodeStep extends Runnable<unknown, unknown> {
  lc_namespace = ['agent-logbook', 'langgraph'];
  readonly [NODE_STEP] = true;

  constructor(
    private readonly node: string,
    readonly inner: Runnable,
    private readonly site: SourceLocation | undefined,
  ) {
    super();
    this.name = inner.getName();
  }

  async invoke(input: unknown, config?: RunnableConfig): Promise<unknown> {
    const steps = driving.getStore()?.steps;
    const facts = steps && taskFacts(this.node, config);
    if (!steps || !facts) return this.inner.invoke(input, config);
    return steps.nodeStep(facts, () => this.inner.invoke(input, config), this.site);
  }
}

interface PregelNodeLike {
  bound?: unknown;
}

/** Wraps the root nodes of a compiled graph, once; later calls find them wrapped. */
export function wrapNodes(graph: unknown): void {
  const g = graph as { nodes?: Record<string, PregelNodeLike>; builder?: object };
  if (typeof g.nodes !== 'object' || g.nodes === null)
    throw new LogbookError(
      ErrorCodes.USAGE,
      'runGraph: the graph has no nodes to run as steps (it is not a compiled LangGraph graph).',
      'Pass the graph that `new StateGraph(...)....compile({ checkpointer: new LogbookSaver() })` returns.',
    );
  const sites = g.builder ? SITES.get(g.builder) : undefined;
  for (const [name, node] of Object.entries(g.nodes)) {
    const bound = node.bound as (Runnable & Record<symbol, unknown>) | undefined;
    // LangGraph's own nodes (__start__, its input) run nothing of the user's; a node wrapped before is left as it is.
    if (name.startsWith('__') || typeof bound?.invoke !== 'function' || bound[NODE_STEP] === true) continue;
    node.bound = new NodeStep(name, bound, sites?.get(name));
  }
}

/** The user's line of node `name`'s addNode call, when it was noted (in the debugger's runner). */
export function nodeSite(graph: unknown, name: string): SourceLocation | undefined {
  const builder = (graph as { builder?: object }).builder;
  return builder ? SITES.get(builder)?.get(name) : undefined;
}
