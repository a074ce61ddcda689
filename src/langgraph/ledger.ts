// The steps runGraph journaled in earlier attempts, given back to the run in their order on a resume: the ones that
// ended are replayed, a node step cut by a crash is run again at its own position when LangGraph runs its task
// again, and one LangGraph will not run again (its writes were saved, or it stopped at interrupt()) is closed.
//
// A run's steps are positional: the step at each position must be the one the journal holds there. LangGraph, not
// the script, decides which nodes run on a resume (those of the latest checkpoint whose writes were not saved), so
// runGraph cannot re-derive its earlier steps by running again from the top; it reads them back from the journal.

import { ErrorCodes, LogbookError, type RunApi, type SourceLocation } from 'agent-logbook';
import type { JournaledStep } from './saver';

/** What a node step journals (its checkpoint): the task it ran, and how the node ended. */
export interface NodeRecord {
  readonly node: string;
  readonly superstep: number;
  /** The task and the checkpoint it ran from; absent for a step closed after LangGraph moved on without it. */
  readonly task?: string;
  readonly checkpoint?: string;
  /**
   * done: the node returned (its writes are LangGraph's pending writes); interrupted: it stopped at interrupt();
   * handed-on: it raised another of LangGraph's controls (a Command to a parent graph); not-run-again: a step cut by a
   * crash whose node LangGraph did not run again.
   */
  readonly outcome: 'done' | 'interrupted' | 'handed-on' | 'not-run-again';
  readonly interrupts?: readonly unknown[];
}

/** What a gate step journals: the interrupt it answered (LangGraph's id, stable within the thread) and the answer. */
export interface GateRecord {
  readonly interrupt: string;
  readonly answer: unknown;
}

/** What runGraph's last step journals: the thread's checkpoint at the end. */
export interface EndRecord {
  readonly end: string | null;
}

export const GATE_PREFIX = 'interrupt: ';

type Kind = 'node' | 'gate' | 'end';

interface Entry extends JournaledStep {
  readonly kind: Kind;
  readonly parsed: unknown;
  /** The last journaled step: a failed one is run again (its failure is not replayed), like a started one. */
  readonly last: boolean;
}

/** How runGraph decided to treat a node step an earlier attempt left unfinished. */
export type OpenNode = { readonly rerun: true } | { readonly rerun: false; readonly record: NodeRecord };

function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A damaged result: the replay reads it again through the runtime, which stops the run with LB_JOURNAL_INVALID.
    return undefined;
  }
}

const never = (name: string) => (): never => {
  throw new LogbookError(
    ErrorCodes.NONDETERMINISM,
    `runGraph: the journaled step "${name}" was to be replayed, but the run would have run it again.`,
    'The journal does not match the thread: start a new run.',
  );
};

export class Ledger {
  private readonly queue: Entry[];
  private readonly all: readonly Entry[];
  /** The steps given back and not yet awaited; the first error among them, thrown when they are (drain). */
  private readonly tracked: Promise<void>[] = [];
  private failure: { readonly error: unknown } | undefined;
  private readonly answers = new Map<string, unknown>();
  private readonly gateCount = new Map<string, number>();
  /** Decisions on the unfinished node steps, by position (runGraph classifies them against the thread). */
  private readonly open = new Map<number, OpenNode>();
  ended: EndRecord | undefined;

  constructor(
    private readonly run: RunApi,
    steps: readonly JournaledStep[],
    private readonly endName: string,
  ) {
    const stop = steps.findIndex((s) => s.name === endName);
    const mine = stop < 0 ? steps : steps.slice(0, stop + 1);
    const lastIdx = steps.length > 0 ? steps[steps.length - 1]!.idx : -1;
    this.all = mine.map((s) => ({
      ...s,
      kind: s.name === endName ? 'end' : s.name.startsWith(GATE_PREFIX) ? 'gate' : 'node',
      parsed: parse(s.result),
      last: s.idx === lastIdx,
    }));
    this.queue = [...this.all];
    for (const e of this.all) if (e.kind === 'gate' && e.status === 'completed') this.noteAnswer(e.parsed);
  }

  /** Every journaled step of this graph (the fork's inherited ones among them): what the thread must have reached. */
  get entries(): readonly (JournaledStep & { readonly kind: Kind; readonly parsed: unknown })[] {
    return this.all;
  }

  /** The node steps an earlier attempt left unfinished (started, or failed as the run's last step). */
  openNodes(): readonly (JournaledStep & { readonly parsed: unknown })[] {
    return this.all.filter((e) => e.kind === 'node' && this.isOpen(e));
  }

  decide(idx: number, how: OpenNode): void {
    this.open.set(idx, how);
  }

  /** The answer a journaled gate gave the interrupt with LangGraph's id `id`. */
  answer(id: string): { readonly answer: unknown } | undefined {
    return this.answers.has(id) ? { answer: this.answers.get(id) } : undefined;
  }

  /** How many gates for `place` came before this one in the run: the gate's key names it, the same in every run. */
  nextGateOrdinal(name: string): number {
    const n = this.gateCount.get(name) ?? 0;
    this.gateCount.set(name, n + 1);
    return n;
  }

  private isOpen(e: Entry): boolean {
    return e.status === 'started' || (e.status === 'failed' && e.last);
  }

  private noteAnswer(v: unknown): void {
    const g = v as Partial<GateRecord> | null;
    if (g && typeof g.interrupt === 'string') this.answers.set(g.interrupt, g.answer);
  }

  private waitsForLangGraph(e: Entry): boolean {
    return e.kind === 'node' && this.isOpen(e) && this.open.get(e.idx)?.rerun === true;
  }

  /** The main loop runs these itself (a gate waiting for its answer, the end step cut by a crash). */
  private waitsForLoop(e: Entry): boolean {
    return e.kind !== 'node' && this.isOpen(e);
  }

  /** Gives the head back to the run: replays it, or closes an unfinished node step LangGraph will not run again. */
  private consume(): void {
    const e = this.queue.shift();
    if (!e) return;
    if (e.kind === 'gate') this.nextGateOrdinal(e.name);
    if (e.status === 'completed') {
      if (e.kind === 'end') this.ended = (e.parsed as EndRecord | null) ?? { end: null };
      this.track(this.run.step(e.name, never(e.name)));
    } else if (!this.isOpen(e)) {
      // A failure the run went on from (LangGraph retried the node, or the script caught it): replayed as that failure.
      this.track(this.run.step(e.name, never(e.name)).catch(() => undefined));
    } else {
      const how = this.open.get(e.idx);
      const record: NodeRecord = how && !how.rerun ? how.record : { ...nodeOf(e.name), outcome: 'not-run-again' };
      this.track(this.run.step(e.name, () => record));
    }
  }

  /**
   * Replays what can be replayed now, in order, and waits for it: stops at a node step LangGraph is to run again, at a
   * gate or end step the main loop runs, or at the end of what was journaled.
   */
  async replayReady(): Promise<void> {
    for (let e = this.queue[0]; e && !this.waitsForLangGraph(e) && !this.waitsForLoop(e); e = this.queue[0]) this.consume();
    await this.drain();
  }

  /** After an invocation: a node step LangGraph did not run again after all is closed, and the rest replayed. */
  async settle(): Promise<void> {
    for (let e = this.queue[0]; e && !this.waitsForLoop(e); e = this.queue[0]) this.consume();
    await this.drain();
  }

  /**
   * The run's step for one execution of a node (a wrapped node calls it, in the order LangGraph starts them): at the
   * position of the journal's unfinished step of that task when there is one, else the next new one. Anything before
   * it in the journal is given back first (an unfinished step of another task LangGraph did not start first is closed).
   */
  nodeStep<T>(name: string, body: () => Promise<T>, at: SourceLocation | undefined): Promise<T> {
    for (let e = this.queue[0]; e && !(this.isOpen(e) && e.kind === 'node' && e.name === name); e = this.queue[0]) {
      if (this.waitsForLoop(e)) throw mismatch(e.name, name);
      this.consume();
    }
    this.queue.shift();
    return this.run.step(name, body, { at });
  }

  /** A step the main loop runs (a gate, the end): at the position of its unfinished journaled step, or a new one. */
  loopStep<T>(name: string, body: () => Promise<T> | T, at: SourceLocation | undefined): Promise<T> {
    for (let e = this.queue[0]; e && !(this.waitsForLoop(e) && e.name === name); e = this.queue[0]) {
      if (this.waitsForLoop(e)) throw mismatch(e.name, name);
      this.consume();
    }
    this.queue.shift();
    return this.run.step(name, body, { at });
  }

  /** Whether a node step is still waiting for LangGraph to run its task again. */
  get waiting(): boolean {
    return this.queue.some((e) => this.waitsForLangGraph(e));
  }

  /** Handled at once (an error waits for drain, never an unhandled rejection). */
  private track(p: Promise<unknown>): void {
    this.tracked.push(
      p.then(
        () => undefined,
        (error: unknown) => void (this.failure ??= { error }),
      ),
    );
  }

  private async drain(): Promise<void> {
    while (this.tracked.length > 0) await Promise.all(this.tracked.splice(0));
    const f = this.failure;
    this.failure = undefined;
    if (f) throw f.error;
  }
}

function mismatch(journaled: string, current: string): LogbookError {
  return new LogbookError(
    ErrorCodes.NONDETERMINISM,
    `runGraph: the journal's next step is "${journaled}", but the graph now runs "${current}". Nothing new was executed.`,
    'The graph changed since the run started: resume it with the script that started it, or start a new run.',
    { journaled, current },
  );
}

/** The node and superstep a node step's name gives (`node@3`, `node@3#1`). */
export function nodeOf(name: string): { readonly node: string; readonly superstep: number } {
  const m = /^(.*)@(\d+)(?:#\d+)?$/.exec(name);
  return m ? { node: m[1] ?? name, superstep: Number(m[2]) } : { node: name, superstep: -1 };
}
