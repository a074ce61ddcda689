// The boundary queue: each runtime boundary in turn (parallel actions stop one at a time), asked of the stop policy.

import type { PauseEvent, RunSnapshot } from '../runtime/hooks';
import type { StopGate } from './mailbox';
import type { RunnerState } from './jobState';
import type { StopContextBuilder } from './stopContext';
import type { Boundary, BoundaryKind, StopDecision } from './stopPolicy';

const YIELD_EVERY_MS = 10;

export class BoundaryQueue {
  private chain: Promise<void> = Promise.resolve();
  /** Boundaries waiting in the chain (a stop held, or a turn given to the event loop): a new one queues behind them. */
  private queued = 0;
  private lastYield = 0;
  /** The run as of the latest boundary: conditions are evaluated against it. */
  lastRun: RunSnapshot | undefined;
  /** The latest session's way to write the records it holds behind: called at a stop, before the journal is read. */
  private writePending: (() => void) | undefined;

  constructor(
    private readonly state: RunnerState,
    private readonly builder: StopContextBuilder,
    private readonly gate: StopGate,
    /** Called once a run's entry boundary is reached: the adapter is told the run started. */
    private readonly onEntry: (run: RunSnapshot) => void,
  ) {}

  /**
   * Serialises boundaries: parallel actions in one step stop one at a time. A boundary with none before it that does
   * not stop is decided at once and returns undefined, so the run goes on without a turn of the event loop: a run with
   * no breakpoint pays a policy check per boundary, not a chain of promises. `detail` is worded only when read.
   */
  boundary(ev: PauseEvent, kind: BoundaryKind, detail: () => string): Promise<void> | undefined {
    // A script whose steps never wait on I/O would starve the event loop, and with it the adapter's pause and
    // terminate messages: give the loop a turn every few milliseconds.
    if (this.queued === 0 && performance.now() - this.lastYield <= YIELD_EVERY_MS) {
      const at = this.atBoundary(ev, kind, detail);
      return at ? this.enqueue(() => this.stopAt(...at)) : undefined;
    }
    return this.enqueue(async () => {
      if (performance.now() - this.lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.lastYield = performance.now();
      }
      const at = this.atBoundary(ev, kind, detail);
      if (at) await this.stopAt(...at);
    });
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    this.queued++;
    const next = this.chain.then(fn).finally(() => void this.queued--);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** What the policy decides at this boundary: the stop to make, or undefined to go on. */
  private atBoundary(ev: PauseEvent, kind: BoundaryKind, detail: () => string): [Boundary, RunSnapshot, StopDecision] | undefined {
    if (ev.writePending) this.writePending = ev.writePending;
    this.builder.trackStep(kind, ev.step, ev.run.id);
    let word = detail;
    if (kind === 'run:entry' && !ev.caller) {
      if (this.state.current && ev.run.input !== undefined) this.state.current.input = ev.run.input;
      this.onEntry(ev.run);
      word = once(() => this.builder.entryDetail(ev.run, detail()));
    }
    const policy = this.state.policy;
    if (this.state.stopRequested || this.state.cancelling || !policy) return undefined;
    const action = ev.action ? this.builder.withCompensateLocation(kind, ev.action) : undefined;
    if (action) word = this.builder.reconciliationDetail(kind, action, word);
    this.lastRun = ev.run;
    if (policy.quietAt(kind)) return undefined;
    const callers = callerChain(ev);
    const step = ev.step ?? (action ? this.builder.stepFor(ev.run.id, action.stepIdx) : undefined);
    const at = boundaryOf(kind, word, step, action, { runId: ev.run.id, ...(callers.length ? { callers } : {}), ...(ev.sleep ? { sleep: ev.sleep } : {}) });
    const stop = policy.decide(at);
    return stop ? [at, ev.run, stop] : undefined;
  }

  private async stopAt(at: Boundary, run: RunSnapshot, stop: StopDecision): Promise<void> {
    // The runtime leaves them for its next transaction (writesPendingOnStop): a stop shows the journal, so they go in now.
    this.writePending?.();
    const context = this.builder.context(at, run);
    const mode = await this.gate.hold(at, run, () => this.state.send({ type: 'stopped', ...stop, context }));
    this.state.policy?.resumed(mode, at);
  }
}

/** The run.child calls that led to this boundary's run, innermost first. */
function callerChain(ev: PauseEvent): PauseEvent[] {
  const out: PauseEvent[] = [];
  for (let c = ev.caller; c; c = c.caller) out.push(c);
  return out;
}

/** A boundary whose sentence is worded the first time it is read (a stop, a condition), once. */
function boundaryOf(
  kind: BoundaryKind,
  detail: () => string,
  step: Boundary['step'],
  action: Boundary['action'],
  more: Pick<Boundary, 'runId' | 'callers' | 'sleep'>,
): Boundary {
  const word = once(detail);
  return {
    kind,
    get detail() {
      return word();
    },
    step,
    action,
    ...more,
  };
}

function once(fn: () => string): () => string {
  let v: string | undefined;
  return () => (v ??= fn());
}
