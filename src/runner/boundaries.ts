// The boundary queue: each runtime boundary in turn (parallel actions stop one at a time), asked of the stop policy.

import type { PauseEvent, RunSnapshot } from '../runtime/hooks';
import type { StopGate } from './mailbox';
import type { RunnerState } from './jobState';
import type { StopContextBuilder } from './stopContext';
import type { Boundary, BoundaryKind, StopDecision } from './stopPolicy';

const YIELD_EVERY_MS = 10;

export class BoundaryQueue {
  private chain: Promise<void> = Promise.resolve();
  private lastYield = 0;
  /** The run as of the latest boundary: conditions are evaluated against it. */
  lastRun: RunSnapshot | undefined;

  constructor(
    private readonly state: RunnerState,
    private readonly builder: StopContextBuilder,
    private readonly gate: StopGate,
    /** Called once a run's entry boundary is reached: the adapter is told the run started. */
    private readonly onEntry: (run: RunSnapshot) => void,
  ) {}

  /** Serialises boundaries: parallel actions in one step stop one at a time. */
  boundary(ev: PauseEvent, kind: BoundaryKind, detail: string): Promise<void> {
    const next = this.chain.then(() => this.atBoundary(ev, kind, detail));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async atBoundary(ev: PauseEvent, kind: BoundaryKind, detail: string): Promise<void> {
    // A script whose steps never wait on I/O would starve the event loop, and with it the adapter's pause and
    // terminate messages: give the loop a turn every few milliseconds.
    const now = performance.now();
    if (now - this.lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
    }
    const callers = callerChain(ev);
    this.builder.trackStep(kind, ev.step, ev.run.id);
    if (kind === 'run:entry' && callers.length === 0) {
      if (this.state.current && ev.run.input !== undefined) this.state.current.input = ev.run.input;
      this.onEntry(ev.run);
      detail = this.builder.entryDetail(ev.run, detail);
    }
    const policy = this.state.policy;
    if (this.state.stopRequested || this.state.cancelling || !policy) return;
    const action = ev.action ? this.builder.withCompensateLocation(kind, ev.action) : undefined;
    if (action) detail = this.builder.reconciliationDetail(kind, action, detail);
    const step = ev.step ?? (action ? this.builder.stepFor(ev.run.id, action.stepIdx) : undefined);
    const at: Boundary = { kind, detail, step, action, runId: ev.run.id, ...(callers.length ? { callers } : {}), ...(ev.sleep ? { sleep: ev.sleep } : {}) };
    this.lastRun = ev.run;
    const stop = policy.decide(at);
    if (stop) await this.stopAt(at, ev.run, stop);
  }

  private async stopAt(at: Boundary, run: RunSnapshot, stop: StopDecision): Promise<void> {
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
