// The adapter's requests to the runner: evaluate, journal pages, decide, approve, compensate, fork; each answered once.

import { ErrorCodes, LogbookError } from '../runtime/errors';
import { processOwner } from '../runtime/store';
import { requireWellFormed } from '../runtime/wellFormed';
import type { Decision } from '../runtime/types';
import { journaledDecision, type DecisionInput } from '../runtime/decisions';
import type { RunnerRequest, StepMode } from '../link/runnerProtocol';
import { toWire } from '../link/wire';
import type { Evaluator } from './evaluator';
import type { Mailbox, StopGate } from './mailbox';
import { noDecisionNeeded } from './boundaryText';
import { thrownText } from './errorText';
import type { RunnerState } from './jobState';
import type { StopContextBuilder } from './stopContext';
import { journalPage, stepsPage } from './views';
import { sendEvent, sendReportLine } from '../runtime/send';

export class RequestHandler {
  constructor(
    private readonly state: RunnerState,
    private readonly gate: StopGate,
    private readonly mailbox: Mailbox,
    private readonly builder: StopContextBuilder,
    private readonly evaluator: Evaluator,
    /** Stops the current job at its next boundary (for a follow-up job). */
    private readonly requestStop: () => void,
  ) {}

  answer(id: number, req: RunnerRequest): void {
    try {
      this.state.send({ type: 'response', id, ok: true, body: this.handle(req) });
    } catch (err) {
      this.state.send({ type: 'response', id, ok: false, message: err instanceof LogbookError ? err.message : thrownText(err) });
    }
  }

  private notStopped(what: string): LogbookError {
    return new LogbookError(ErrorCodes.USAGE, `The run is not paused, so ${what} is not possible now.`, 'Pause the run (or wait for a stop) and try again.');
  }

  private handle(req: RunnerRequest): unknown {
    const reader = this.state.store?.reader;
    const current = this.state.current;
    // Stopped in a child run (run.child), its journal is the one shown.
    const runId = this.gate.current?.run.id ?? current?.runId;
    switch (req.op) {
      case 'evaluate': {
        const s = this.gate.current;
        if (!s) throw this.notStopped('evaluating an expression');
        return { value: toWire(this.evaluator.evaluate(req.expression, this.builder.scopeAt(s.at, s.run))) };
      }
      case 'journal':
        if (!reader || !runId) return [];
        return journalPage(reader, runId, req.start, req.count);
      case 'steps':
        if (!reader || !runId) return [];
        return stepsPage(reader, runId, req.start, req.count);
      case 'decide':
        return this.decide(req.decision, req.actionId, req.then, req.result);
      case 'approval':
        return this.approve(req.approved, req.note, req.then);
      case 'sendEvent': {
        const store = this.state.store;
        if (!store || !runId)
          throw new LogbookError(ErrorCodes.USAGE, 'No run has started yet, so an event has nowhere to go.', 'Wait for the run to start, then send it.');
        const r = sendEvent(store, runId, req.name, req.data, { ...(req.id !== undefined ? { id: req.id } : {}), role: 'debugger', what: 'Send Event' });
        // At the wait that has no event yet, going on lets it take this one.
        if (this.gate.current) this.resumeAfter(req.then);
        return { message: sendReportLine(r), report: r };
      }
      case 'compensate': {
        if (!current?.announced)
          throw new LogbookError(ErrorCodes.USAGE, 'No run has started yet, so there is nothing to compensate.', 'Wait for the run to start.');
        if (this.state.compensating)
          throw new LogbookError(ErrorCodes.USAGE, `Run ${current.runId} is already being compensated.`, 'Step through the inverses, or continue.');
        this.mailbox.followUp = { kind: 'compensate' };
        this.requestStop();
        return { message: `run ${current.runId} stops at its next boundary, then its compensation starts (inverses newest-first)` };
      }
      case 'cancel':
        return this.cancel(req.reason, req.compensate === true);
      case 'fork': {
        const s = this.gate.current;
        if (!s) throw this.notStopped('restarting a frame');
        if (this.state.compensating)
          throw new LogbookError(ErrorCodes.USAGE, 'A run being compensated cannot be forked.', 'Fork from a stop in a forward run.');
        if (s.at.callers?.length)
          throw new LogbookError(
            ErrorCodes.USAGE,
            `The stop is in child run ${s.run.id}, which its parent started with run.child: this session forks the run it drives, not a child.`,
            'Restart a frame of the parent’s run, or debug the child on its own (a launch configuration that resumes its run id).',
          );
        const at = s.at.step?.idx;
        if (at === undefined || req.stepIdx > at)
          throw new LogbookError(
            ErrorCodes.USAGE,
            `Step #${req.stepIdx + 1} has not been reached, so the run cannot fork there.`,
            'Restart a step frame of the current stop.',
          );
        this.mailbox.followUp = { kind: 'fork', stepIdx: req.stepIdx };
        this.requestStop();
        return { message: `forking run ${runId ?? ''} at step #${req.stepIdx + 1}` };
      }
    }
  }

  /**
   * Cancels the run this session drives, as `logbook cancel` would: journaled with its reason; the run hears it at once
   * (its writer is in this process), goes on to its next boundary without stopping, and ends cancelled (then compensated,
   * if asked). A run not going forward (being compensated, ended) is refused, and nothing is written.
   */
  private cancel(reason: string | undefined, compensate: boolean): unknown {
    const { store, current } = this.state;
    if (!store || !current?.announced)
      throw new LogbookError(ErrorCodes.USAGE, 'No run has started yet, so there is nothing to cancel.', 'Wait for the run to start, or stop the session.');
    if (this.state.compensating)
      throw new LogbookError(
        ErrorCodes.RUN_NOT_CANCELLABLE,
        `Run ${current.runId} is being compensated; a compensation is not cancelled.`,
        'Step through the inverses, or continue.',
      );
    if (this.state.cancelling) return { message: `run ${current.runId} is already stopping, cancelled` };
    if (reason !== undefined) requireWellFormed(reason, 'The reason of the cancel');
    this.state.cancelSource = 'from the debugger';
    try {
      const r = store.cancelRun(current.runId, {
        reason: reason ?? null,
        compensate,
        at: Date.now(),
        by: processOwner('debugger').label,
      });
      return {
        message:
          r.kind === 'cancelled'
            ? `run ${current.runId} was cancelled`
            : `run ${current.runId} stops at its next boundary, cancelled${compensate ? ', then it is compensated (inverses newest-first)' : ''}`,
      };
    } finally {
      this.state.cancelSource = undefined;
    }
  }

  private resumeAfter(then: StepMode | 'stay'): void {
    if (then !== 'stay') this.gate.release(then);
  }

  private decide(decision: Decision, actionId: string | undefined, then: StepMode | 'stay', result: unknown): unknown {
    const s = this.gate.current;
    if (!s) throw this.notStopped('deciding');
    const a = s.at.action;
    if (s.at.kind !== 'decision' && s.at.kind !== 'action:reconcile') {
      throw new LogbookError(
        ErrorCodes.BAD_DECISION,
        'The run is not stopped at an in-doubt action.',
        'Decide when the debugger stops at an in-doubt action (reconciliation) or asks for a decision.',
      );
    }
    if (a && actionId !== undefined && actionId !== a.id) {
      throw new LogbookError(ErrorCodes.BAD_DECISION, `The run is stopped at ${a.id}, not at ${actionId}.`, 'Decide the action the debugger is stopped at.');
    }
    const how = s.at.kind === 'action:reconcile' && a ? noDecisionNeeded(a) : undefined;
    if (a && how) throw new LogbookError(ErrorCodes.BAD_DECISION, `${a.type} ${a.id} needs no decision: ${how}.`, 'Step in to watch its reconciliation.');
    const given: DecisionInput = result === undefined ? decision : { decision, result };
    // Checked before it is posted: a result that is not plain JSON (or one given with "not-happened") changes nothing.
    journaledDecision(a?.id ?? actionId ?? 'the in-doubt action', given, 'decide');
    this.mailbox.postDecision(a?.id, given);
    if (a) this.builder.noteDecision(a.id, decision);
    this.resumeAfter(then);
    return {
      message: `decided: ${a ? `${a.type} ${a.id}` : 'the in-doubt action'} ${decision === 'happened' ? `happened${result === undefined ? '' : ', with its result'}` : 'did not happen'}`,
    };
  }

  private approve(approved: boolean, note: string | undefined, then: StepMode | 'stay'): unknown {
    const s = this.gate.current;
    if (!s) throw this.notStopped(approved ? 'approving' : 'rejecting');
    if (s.at.kind !== 'action:approval' || !s.at.action) {
      throw new LogbookError(
        ErrorCodes.BAD_DECISION,
        'The run is not stopped at an approval gate.',
        'Approve or reject when the debugger stops at an approval gate.',
      );
    }
    this.mailbox.postApproval(s.at.action.id, { approved, ...(note !== undefined ? { note } : {}) });
    this.resumeAfter(then);
    return { message: `${approved ? 'approved' : 'rejected'}: ${s.at.action.type} ${s.at.action.id}` };
  }
}
