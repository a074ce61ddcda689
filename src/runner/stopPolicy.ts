// Whether the run stops at a boundary: breakpoints (conditions, hit counts), exception filters, stepping, pause.

import type { ActionSnapshot, PauseEvent, PauseKind, SleepSnapshot, SourceLocation, StepSnapshot } from '../runtime/hooks';
import { DEFAULT_FILTERS, FILTERS } from '../link/filters';
import { parseHitCondition, type HitCondition } from '../link/hitCondition';
import type { Breakpoints, ExceptionFilter, FunctionBreakpoint, LineBreakpoint, StepMode } from '../link/runnerProtocol';

/** Runtime pause kinds, plus the runner's own: a decision it needs, and the start of a compensation. */
export type BoundaryKind = PauseKind | 'decision' | 'compensate:entry';

export interface Boundary {
  readonly kind: BoundaryKind;
  readonly detail: string;
  /** The step of the event, or the step an action runs in. */
  readonly step?: StepSnapshot | undefined;
  readonly action?: ActionSnapshot | undefined;
  /** At `sleep:waiting`: the sleep, its wake time and what is left. */
  readonly sleep?: SleepSnapshot | undefined;
  /** In a child run (run.child): the calls that led to it, innermost first (its depth is their number). */
  readonly callers?: readonly PauseEvent[] | undefined;
  /** The run the boundary is in. */
  readonly runId?: string;
}

/** How deep in run.child calls a boundary is: 0 in the run the session drives. */
const depthOf = (at: Boundary): number => at.callers?.length ?? 0;

export interface StopDecision {
  readonly reason: string;
  readonly description: string;
  readonly text?: string;
  readonly exceptionId?: string;
  readonly hitBreakpointIds: number[];
}

/**
 * How the run goes on. `depth` is where the stepping started, in run.child calls: `next` steps over a child run (its
 * boundaries are deeper), and `stepOut` of a child's step stops back in that child, or in its caller once it ends.
 */
type Mode =
  | { kind: 'continue' | 'stepIn' | 'restart' }
  | { kind: 'next'; depth: number }
  | { kind: 'stepOut'; stepIdx: number; depth: number }
  | { kind: 'stepOutInverse'; actionId: string };

interface Armed<B> {
  readonly bp: B;
  readonly hit: HitCondition | undefined;
  hits: number;
  warned: boolean;
}

export interface PolicyOptions {
  readonly stopOnEntry: boolean;
  readonly stopOnReplay: boolean;
  readonly sameFile: (a: string, b: string) => boolean;
  /** Evaluates a condition against the boundary's context; throws when the expression does. */
  readonly evaluate: (expression: string, at: Boundary) => unknown;
  readonly warn: (message: string) => void;
}

const STEP_BOUNDARIES = new Set<BoundaryKind>(['step:before', 'step:after', 'run:end', 'compensate:before', 'sleep:waiting']);
/** Where a line or function breakpoint can stop (see lineTarget and choose). */
const NAMED_BOUNDARIES: readonly BoundaryKind[] = ['step:before', 'sleep:waiting', 'action:before-start'];

function glob(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

export class StopPolicy {
  private lines: Array<Armed<LineBreakpoint>> = [];
  private functions: Array<Armed<FunctionBreakpoint> & { re: RegExp }> = [];
  private filters = new Set<ExceptionFilter>(DEFAULT_FILTERS);
  private mode: Mode = { kind: 'continue' };
  pauseRequested = false;
  /** The kinds of boundary something armed can stop at while the run continues: breakpoints, filters, entry. */
  private armedKinds = new Set<BoundaryKind>();

  constructor(private readonly opts: PolicyOptions) {
    this.arm();
  }

  private arm(): void {
    const kinds = new Set<BoundaryKind>(['decision']);
    for (const f of FILTERS) if (this.filters.has(f.filter)) kinds.add(f.kind as BoundaryKind);
    if (this.lines.length > 0 || this.functions.length > 0) for (const k of NAMED_BOUNDARIES) kinds.add(k);
    if (this.opts.stopOnEntry) kinds.add('run:entry').add('compensate:entry');
    this.armedKinds = kinds;
  }

  /**
   * True when no boundary of this kind can stop now, whatever it holds: the run continues, no pause is asked, and
   * nothing armed stops at the kind. Most boundaries of a run with no breakpoints are such, and need no Boundary built.
   */
  quietAt(kind: BoundaryKind): boolean {
    return this.mode.kind === 'continue' && !this.pauseRequested && !this.armedKinds.has(kind);
  }

  setBreakpoints(b: Breakpoints): void {
    const old = new Map<number, number>([...this.lines, ...this.functions].map((a) => [a.bp.id, a.hits]));
    this.lines = b.lines.map((bp) => ({ bp, hit: bp.hitCondition ? parseHitCondition(bp.hitCondition) : undefined, hits: old.get(bp.id) ?? 0, warned: false }));
    this.functions = b.functions.map((bp) => ({
      bp,
      re: glob(bp.name),
      hit: bp.hitCondition ? parseHitCondition(bp.hitCondition) : undefined,
      hits: old.get(bp.id) ?? 0,
      warned: false,
    }));
    this.filters = new Set(b.filters);
    this.arm();
  }

  /** One-shot: the next new (not replayed) step stops, with reason `restart` (after a fork). */
  stopAtNextNewStep(): void {
    this.mode = { kind: 'restart' };
  }

  /** The next step boundary stops (a compensation started from the debugger stops at its first inverse). */
  stopAtNextBoundary(): void {
    this.mode = { kind: 'next', depth: 0 };
  }

  /** Sets how the run goes on after a stop at `at`. */
  resumed(how: StepMode, at: Boundary): void {
    this.pauseRequested = false;
    const depth = depthOf(at);
    if (how === 'next') {
      this.mode = { kind: 'next', depth };
      return;
    }
    if (how !== 'stepOut') {
      this.mode = { kind: how };
      return;
    }
    if (at.kind.startsWith('compensate:') && at.kind !== 'compensate:entry' && at.action) this.mode = { kind: 'stepOutInverse', actionId: at.action.id };
    else if (at.step && at.kind !== 'step:after' && !at.step.replayed) this.mode = { kind: 'stepOut', stepIdx: at.step.idx, depth };
    // Out of a child run's entry or end: back in its caller.
    else if (depth > 0 && (at.kind === 'run:entry' || at.kind === 'run:end')) this.mode = { kind: 'next', depth: depth - 1 };
    else this.mode = { kind: 'next', depth };
  }

  private conditionHolds(a: Armed<LineBreakpoint | FunctionBreakpoint>, at: Boundary): boolean {
    if (a.bp.condition) {
      let v: unknown;
      try {
        v = this.opts.evaluate(a.bp.condition, at);
      } catch (err) {
        if (!a.warned)
          this.opts.warn(
            `The condition of a breakpoint (${a.bp.condition}) threw: ${(err as Error)?.message ?? String(err)}. It does not stop until the condition evaluates.`,
          );
        a.warned = true;
        return false;
      }
      if (!v) return false;
    }
    a.hits++;
    return a.hit ? a.hit(a.hits) : true;
  }

  private at(loc: SourceLocation | undefined, bp: LineBreakpoint): boolean {
    return loc !== undefined && loc.line === bp.line && this.opts.sameFile(loc.file, bp.file);
  }

  /** The location a line breakpoint matches at this boundary: a step before it runs, an action before it starts. */
  private lineTarget(at: Boundary): SourceLocation | undefined {
    // A run.sleep line stops where the sleep waits, its wake time known: once (its step's own boundaries are not shown).
    if (at.kind === 'sleep:waiting') return at.step?.location;
    if (at.kind === 'step:before') return at.step?.location;
    if (at.kind !== 'action:before-start' || !at.action?.location) return undefined;
    const s = at.step?.location;
    const a = at.action.location;
    // On a line holding both the step and its action, the step already had the stop: count each line once.
    if (s && s.line === a.line && this.opts.sameFile(s.file, a.file)) return undefined;
    return a;
  }

  decide(at: Boundary): StopDecision | undefined {
    if (at.kind === 'step:before' && at.step?.replayed && !this.opts.stopOnReplay) return undefined;
    // A sleep is one unit: its stop is `sleep:waiting`, where its wake time is known, not its step's before and after.
    if ((at.kind === 'step:before' || at.kind === 'step:after') && at.step?.sleep) return undefined;
    const stop = this.choose(at);
    if (stop) {
      this.pauseRequested = false;
      this.mode = { kind: 'continue' };
    }
    return stop;
  }

  private choose(at: Boundary): StopDecision | undefined {
    const target = this.lineTarget(at);
    const lineHits = target ? this.lines.filter((a) => this.at(target, a.bp) && this.conditionHolds(a, at)).map((a) => a.bp.id) : [];
    const name = at.kind === 'step:before' || at.kind === 'sleep:waiting' ? at.step?.name : at.kind === 'action:before-start' ? at.action?.type : undefined;
    // An action also answers to its id, so `model:*` stops before every journaled model call (ids model:<step>.<call>).
    const id = at.kind === 'action:before-start' ? at.action?.id : undefined;
    // A LangGraph node's step (`review@3`, agent-logbook/langgraph) also answers to its node's name: `review` stops
    // before every execution of the node, `review@3` before those of superstep 3.
    const node = at.kind === 'step:before' && name !== undefined ? /^(.+)@\d+(?:#\d+)?$/.exec(name)?.[1] : undefined;
    const fnHits =
      name === undefined
        ? []
        : this.functions
            .filter((a) => (a.re.test(name) || (id !== undefined && a.re.test(id)) || (node !== undefined && a.re.test(node))) && this.conditionHolds(a, at))
            .map((a) => a.bp.id);

    // The stop a restartFrame asked for comes first: the client waits for it (breakpoints there still count hits).
    if (this.mode.kind === 'restart' && at.kind === 'step:before' && !at.step?.replayed)
      return { reason: 'restart', description: `restarted here: ${at.detail}`, hitBreakpointIds: [] };
    if (at.kind === 'decision') {
      return { reason: 'exception', exceptionId: 'needsDecision', text: 'Needs a decision', description: at.detail, hitBreakpointIds: [] };
    }
    const filter = FILTERS.find(
      (f) => f.kind === at.kind && this.filters.has(f.filter) && (f.filter !== 'nonIdempotent' || at.action?.effect === 'non-idempotent'),
    );
    if (filter) return { reason: 'exception', exceptionId: filter.filter, text: filter.label, description: at.detail, hitBreakpointIds: [] };
    if (lineHits.length > 0) return { reason: 'breakpoint', description: `breakpoint: ${at.detail}`, hitBreakpointIds: lineHits };
    if (fnHits.length > 0) return { reason: 'function breakpoint', description: `function breakpoint: ${at.detail}`, hitBreakpointIds: fnHits };
    // A child run's entry (run.child) is not the session's: stopOnEntry stops where the session's own run starts.
    if ((at.kind === 'run:entry' || at.kind === 'compensate:entry') && this.opts.stopOnEntry && depthOf(at) === 0)
      return { reason: 'entry', description: at.detail, hitBreakpointIds: [] };
    if (this.pauseRequested) return { reason: 'pause', description: `paused: ${at.detail}`, hitBreakpointIds: [] };
    return this.stepStop(at);
  }

  private stepStop(at: Boundary): StopDecision | undefined {
    return this.steppingStopsAt(at) ? { reason: 'step', description: at.detail, hitBreakpointIds: [] } : undefined;
  }

  /** Whether the stepping under way stops at this boundary (its sentence is worded only for a stop). */
  private steppingStopsAt(at: Boundary): boolean {
    switch (this.mode.kind) {
      case 'continue':
      case 'restart':
        return false;
      case 'stepIn':
        return at.kind !== 'run:entry' && at.kind !== 'compensate:entry';
      case 'next':
        // Over a child run: its own boundaries are deeper than where the stepping started.
        return STEP_BOUNDARIES.has(at.kind) && depthOf(at) <= this.mode.depth;
      case 'stepOut': {
        const d = depthOf(at);
        // A child run started inside the step runs within it: stepping out of the step steps over it.
        if (d > this.mode.depth) return false;
        if (d < this.mode.depth) return STEP_BOUNDARIES.has(at.kind) || at.kind === 'child:end';
        if (at.kind === 'step:after' && at.step?.idx === this.mode.stepIdx) return true;
        return at.kind === 'run:end' || (at.kind === 'step:before' && at.step?.idx !== this.mode.stepIdx);
      }
      case 'stepOutInverse':
        return (at.kind === 'compensate:committed' && at.action?.id === this.mode.actionId) || at.kind === 'compensate:before';
    }
  }
}
