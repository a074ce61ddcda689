// What the adapter sends for the run to pick up: the step mode that ends a stop, and answers addressed to an action.

import type { DecisionInput } from '../runtime/decisions';
import type { RunSnapshot } from '../runtime/hooks';
import type { StepMode } from '../link/runnerProtocol';
import type { Boundary } from './stopPolicy';

export interface Held {
  readonly at: Boundary;
  readonly run: RunSnapshot;
}

/**
 * The stop the run is held at. It is set before the adapter is told of the stop, so a resume sent the instant the
 * stop arrives always finds it; a resume with no stop (one already ended) is dropped, never kept for a later stop.
 */
export class StopGate {
  private held: (Held & { readonly resolve: (mode: StepMode) => void }) | undefined;

  get current(): Held | undefined {
    return this.held;
  }

  /** Holds the run at `at`; `announce` tells the adapter, once a resume can be taken. Resolves with the resume's mode. */
  async hold(at: Boundary, run: RunSnapshot, announce: () => void): Promise<StepMode> {
    const mode = await new Promise<StepMode>((resolve) => {
      this.held = { at, run, resolve };
      announce();
    });
    return mode;
  }

  /** Ends the current stop with `mode`; false when the run is not held. */
  release(mode: StepMode): boolean {
    const h = this.held;
    if (!h) return false;
    this.held = undefined;
    h.resolve(mode);
    return true;
  }
}

export type FollowUp = { kind: 'compensate' } | { kind: 'fork'; stepIdx: number };
export interface ApprovalAnswer {
  approved: boolean;
  note?: string;
}

/** Answers given at a stop for the runtime to take when it asks: each addressed to its action, taken once. */
export class Mailbox {
  private readonly decisions = new Map<string, DecisionInput>();
  private readonly approvals = new Map<string, ApprovalAnswer>();
  /** The job to run once the current one stops (compensate it, or fork it at a step). */
  followUp: FollowUp | undefined;

  /** `actionId` undefined: a decision given at a stop that named no action, taken by the next one asked. */
  postDecision(actionId: string | undefined, d: DecisionInput): void {
    this.decisions.set(actionId ?? '', d);
  }

  takeDecision(actionId: string | undefined): DecisionInput | undefined {
    for (const key of [actionId ?? '', '']) {
      const d = this.decisions.get(key);
      if (d !== undefined) {
        this.decisions.delete(key);
        return d;
      }
    }
    return undefined;
  }

  postApproval(actionId: string, a: ApprovalAnswer): void {
    this.approvals.set(actionId, a);
  }

  takeApproval(actionId: string | undefined): ApprovalAnswer | undefined {
    const a = actionId === undefined ? undefined : this.approvals.get(actionId);
    if (actionId !== undefined) this.approvals.delete(actionId);
    return a;
  }

  /** A new job starts with nothing posted. */
  clear(): void {
    this.decisions.clear();
    this.approvals.clear();
  }

  takeFollowUp(): FollowUp | undefined {
    const f = this.followUp;
    this.followUp = undefined;
    return f;
  }
}
