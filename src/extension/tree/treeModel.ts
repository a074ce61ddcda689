// The tree's model: fetches pages from the reader, keeps one cached node per key, and says which nodes changed.

import { executionsText, type ActionDto, type ChangedNotice, type Method, type Params, type Result, type RunDto } from '../../reader/readerProtocol';
import {
  actionKey,
  runKey,
  stepKey,
  type ActionNode,
  type DetailNode,
  type MessageNode,
  type MoreNode,
  type Node,
  type PauseInfo,
  type RunNode,
  type StepNode,
} from './nodes';

export interface ReaderSource {
  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
}

export const PAGE = { runs: 100, steps: 100, actions: 100 } as const;

/** `undefined` in the list means the root changed. */
export type ChangeListener = (nodes: Array<Node | undefined>) => void;

export class TreeModel {
  private readonly cache = new Map<string, Node>();
  private runsShown: number = PAGE.runs;
  private listeners = new Set<ChangeListener>();
  private readonly pausedRuns = new Map<string, PauseInfo>();
  /** Called after each load of the root, when totalRuns and problem are fresh. */
  onRootsLoaded: () => void = () => undefined;
  /** Shown instead of runs when the reader cannot serve (bad runtimeExecutable, unreadable journal). */
  problem: string | undefined;
  totalRuns = 0;

  constructor(private readonly source: ReaderSource) {}

  onChange(fn: ChangeListener): { dispose(): void } {
    this.listeners.add(fn);
    return { dispose: () => this.listeners.delete(fn) };
  }

  private emit(nodes: Array<Node | undefined>): void {
    for (const l of this.listeners) l(nodes);
  }

  private node<T extends Node>(key: string, make: () => T, update: (n: T) => void): T {
    const hit = this.cache.get(key) as T | undefined;
    if (hit) {
      update(hit);
      return hit;
    }
    const n = make();
    this.cache.set(key, n);
    return n;
  }

  get(key: string): Node | undefined {
    return this.cache.get(key);
  }

  /** A run's node: at the root, or under the step of its parent that started it (run.child). */
  runNode(run: RunDto, parent?: StepNode): RunNode {
    const n = this.node<RunNode>(
      runKey(run.id),
      () => ({ kind: 'run', key: runKey(run.id), parent, run, stepsShown: PAGE.steps }),
      (x) => (x.run = run),
    );
    n.paused = this.pausedRuns.get(run.id);
    return n;
  }

  /** Overlays (or clears) a debug session's pause on a run's node: the journal still says running meanwhile. */
  setPaused(runId: string, info: PauseInfo | undefined): void {
    if (info) this.pausedRuns.set(runId, info);
    else if (!this.pausedRuns.delete(runId)) return;
    const node = this.cache.get(runKey(runId));
    if (node?.kind !== 'run') return;
    node.paused = info;
    this.emit([node]);
  }

  pausedOf(runId: string): PauseInfo | undefined {
    return this.pausedRuns.get(runId);
  }

  async roots(): Promise<Node[]> {
    const runs: RunDto[] = [];
    let total = 0;
    try {
      while (runs.length < this.runsShown) {
        // Child runs (run.child) are not roots: each sits under the step of its parent that started it.
        const page = await this.source.request('runs', { offset: runs.length, limit: Math.min(1000, this.runsShown - runs.length), topLevel: true });
        total = page.total;
        runs.push(...page.runs);
        if (page.runs.length === 0 || runs.length >= total) break;
      }
      this.problem = undefined;
    } catch (err) {
      this.problem = err instanceof Error ? err.message : String(err);
      this.onRootsLoaded();
      const msg: MessageNode = {
        kind: 'message',
        key: 'message:problem',
        parent: undefined,
        text: this.problem.split('\n')[0] ?? this.problem,
        tooltip: this.problem,
      };
      return [msg];
    }
    this.totalRuns = total;
    this.onRootsLoaded();
    const out: Node[] = runs.map((r) => this.runNode(r));
    if (total > runs.length) out.push(this.more('more:root', undefined, total - runs.length));
    return out;
  }

  private more(key: string, owner: RunNode | StepNode | undefined, remaining: number): MoreNode {
    return this.node<MoreNode>(
      key,
      () => ({ kind: 'more', key, parent: owner, owner, remaining }),
      (n) => (n.remaining = remaining),
    );
  }

  async children(node: Node | undefined): Promise<Node[]> {
    if (!node) return this.roots();
    switch (node.kind) {
      case 'run':
        return this.steps(node);
      case 'step':
        return this.actions(node);
      case 'action':
        return this.details(node);
      default:
        return [];
    }
  }

  private async steps(run: RunNode): Promise<Node[]> {
    const out: Node[] = [];
    let total = 0;
    while (out.length < run.stepsShown) {
      const page = await this.source.request('steps', { runId: run.run.id, from: out.length, limit: Math.min(1000, run.stepsShown - out.length) });
      total = page.total;
      for (const s of page.steps) {
        out.push(
          this.node<StepNode>(
            stepKey(s.runId, s.idx),
            () => ({ kind: 'step', key: stepKey(s.runId, s.idx), parent: run, step: s, actionsShown: PAGE.actions }),
            (n) => (n.step = s),
          ),
        );
      }
      if (page.steps.length === 0 || out.length >= total) break;
    }
    if (total > out.length) out.push(this.more(`more:${run.key}`, run, total - out.length));
    return out;
  }

  private async actions(step: StepNode): Promise<Node[]> {
    const runId = step.step.runId;
    const out: Node[] = [];
    // The runs this step started with run.child come first: the step waits for them before it ends.
    if (step.step.childCount > 0) for (const c of await this.source.request('children', { runId, stepIdx: step.step.idx })) out.push(this.runNode(c, step));
    let total = 0;
    let afterSeq = 0;
    while (out.length < step.actionsShown) {
      const page = await this.source.request('actions', { runId, stepIdx: step.step.idx, afterSeq, limit: Math.min(1000, step.actionsShown - out.length) });
      total = page.total;
      for (const a of page.actions) {
        out.push(this.actionNode(step, a));
        afterSeq = a.seq;
      }
      if (page.actions.length === 0 || out.length >= total + step.step.childCount) break;
    }
    const actionsShown = out.filter((x) => x.kind === 'action').length;
    if (total > actionsShown) out.push(this.more(`more:${step.key}`, step, total - actionsShown));
    return out;
  }

  private actionNode(step: StepNode, a: ActionDto): ActionNode {
    const key = actionKey(a.runId, a.id);
    return this.node<ActionNode>(
      key,
      () => ({ kind: 'action', key, parent: step, action: a }),
      (n) => (n.action = a),
    );
  }

  private async details(node: ActionNode): Promise<Node[]> {
    const a = (await this.source.request('action', { runId: node.action.runId, actionId: node.action.id })) ?? node.action;
    const ai = a.ai;
    const rows: Array<[string, string | null]> = [
      ...aiRows(ai),
      ['idempotency key', a.id],
      ['args', a.args],
      ['result', a.result],
      ['error', a.error],
      ['executions', executionsText({ status: a.journalStatus, executions: a.executions })],
      ['reconciliation', a.reconciliation],
      ['decision', a.decision],
      ['approval', a.approval ? `${a.approval}${a.approvalNote ? ` (${a.approvalNote})` : ''}` : null],
      ['compensation', a.compensation ? `${a.compensation}, ${a.compensationExecutions} execution(s) of the inverse` : null],
      ['version', String(a.version)],
      ['timing', timing(a.startedAt, a.endedAt)],
    ];
    return rows
      .filter((r): r is [string, string] => r[1] !== null)
      .map(([name, value]) => {
        const key = `detail:${node.key}:${name}`;
        return this.node<DetailNode>(
          key,
          () => ({ kind: 'detail', key, parent: node, name, value }),
          (n) => (n.value = value),
        );
      });
  }

  getParent(node: Node): Node | undefined {
    return node.parent;
  }

  /** Shows one more page under a "load more" node's owner. */
  loadMore(more: MoreNode): void {
    const o = more.owner;
    if (!o) {
      this.runsShown += PAGE.runs;
      this.emit([undefined]);
    } else if (o.kind === 'run') {
      o.stepsShown += PAGE.steps;
      this.emit([o]);
    } else {
      o.actionsShown += PAGE.actions;
      this.emit([o]);
    }
  }

  /** Applies a change notice: refetches the changed runs that are shown; structure changes refresh the root. */
  async apply(n: Pick<ChangedNotice, 'runs' | 'structure'>): Promise<void> {
    if (n.structure) {
      this.emit([undefined]);
      return;
    }
    const changed: Node[] = [];
    for (const runId of n.runs) {
      const node = this.cache.get(runKey(runId));
      if (node?.kind !== 'run') continue;
      const dto = await this.source.request('run', { runId });
      if (!dto) {
        this.emit([undefined]);
        return;
      }
      node.run = dto;
      changed.push(node);
    }
    if (changed.length) this.emit(changed);
  }

  refreshAll(): void {
    this.cache.clear();
    this.emit([undefined]);
  }

  /** Makes sure a run, step and action are loaded (paging as needed) and returns the deepest node. */
  async locate(runId: string, stepIdx?: number, actionId?: string): Promise<Node | undefined> {
    let run = this.cache.get(runKey(runId));
    if (run?.kind !== 'run') {
      const dto = await this.source.request('run', { runId });
      if (!dto) return undefined;
      // A child run is found under its parent's step, so reveal opens the way down to it.
      if (dto.parentId !== null && dto.parentStep !== null) {
        const step = await this.locate(dto.parentId, dto.parentStep);
        if (step?.kind === 'step') await this.actions(step);
        const found = this.cache.get(runKey(runId));
        run = found?.kind === 'run' ? found : this.runNode(dto);
      } else {
        run = this.runNode(dto);
        await this.showRoot(runId);
      }
    }
    if (stepIdx === undefined) return run;
    if (run.stepsShown <= stepIdx) run.stepsShown = (Math.floor(stepIdx / PAGE.steps) + 1) * PAGE.steps;
    await this.steps(run);
    const step = this.cache.get(stepKey(runId, stepIdx));
    if (step?.kind !== 'step' || actionId === undefined) return step ?? run;
    let nodes = await this.actions(step);
    while (!this.cache.has(actionKey(runId, actionId)) && nodes.some((x) => x.kind === 'more')) {
      step.actionsShown += PAGE.actions;
      nodes = await this.actions(step);
    }
    return this.cache.get(actionKey(runId, actionId)) ?? step;
  }

  /**
   * Pages the roots until a top-level run is among them: the view finds a node to reveal only among the children it
   * was given, and a run past the first page of roots was not given yet.
   */
  private async showRoot(runId: string): Promise<void> {
    for (let pages = 0; pages < 1000; pages++) {
      const roots = await this.roots();
      if (roots.some((n) => n.kind === 'run' && n.run.id === runId) || !roots.some((n) => n.kind === 'more')) return;
      this.runsShown += PAGE.runs;
      this.emit([undefined]);
    }
  }

  /** Every cached run node (for the status bar and decorations). */
  runs(): RunNode[] {
    return [...this.cache.values()].filter((n): n is RunNode => n.kind === 'run');
  }
}

/** A model call's or a tool call's own rows, above the action's: clipped here, whole with Open Model or Tool Call in Full. */
function aiRows(ai: ActionDto['ai']): Array<[string, string | null]> {
  if (!ai) return [];
  if (ai.kind === 'tool')
    return [
      ['tool', ai.name],
      ['input', ai.input],
      ['tool result', ai.output],
    ];
  return [
    ['model', ai.name],
    ['tokens', ai.tokens ? `${ai.tokens.input} in, ${ai.tokens.output} out` : null],
    ['last messages', ai.lastMessages.length ? ai.lastMessages.join('\n') : null],
    ['response', ai.text || null],
    ['tool calls', ai.toolCalls.length ? ai.toolCalls.join('\n') : null],
    ['finish reason', ai.finishReason],
  ];
}

function timing(start: number, end: number | null): string {
  const s = new Date(start).toISOString().replace('T', ' ').slice(0, 23);
  return end === null ? `started ${s}` : `started ${s}, took ${end - start} ms`;
}
