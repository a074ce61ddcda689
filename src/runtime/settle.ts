// Settling one in-doubt action without going forward (before compensating, or at a run's end): the policy's plan carried out.

import { ErrorCodes, LogbookError } from './errors';
import type { ActionDefinition, EffectContext } from './define';
import { actionPlace, fromJournalJson, toJournalJson } from './json';
import { reconcilePlan, type ReconcileHow } from './policy';
import type { ActionRow } from './store/rows';
import type { RunWriter } from './store';
import type { Decision } from './types';
import { journaledDecision, type DecisionInput } from './decisions';
import { VERIFY_TIMEOUT_MS, verifyTimedOut, withTimeout } from './timeout';

export type SettleOutcome =
  | { readonly happened: boolean; readonly how: ReconcileHow }
  | { readonly happened: undefined; readonly how: 'needs-decision' };

export interface SettleDeps {
  readonly writer: RunWriter;
  readonly ctx: EffectContext;
  /** Asks a host for a decision when the plan needs one; undefined leaves the action waiting. */
  readonly ask?: () => Promise<DecisionInput | undefined>;
  /** The error to raise when verify throws (it says what was, and was not, done). */
  readonly verifyFailed: (err: unknown) => Error;
}

/** Brings an in-doubt action to committed (it happened) or failed (it did not), as far as the policy allows without a person. */
export async function settleInDoubt(a: ActionRow, def: ActionDefinition, d: SettleDeps): Promise<SettleOutcome> {
  const plan = reconcilePlan({ effect: a.effect, hasVerify: typeof def.verify === 'function', decision: a.decision }, 'settle');
  const args = fromJournalJson(a.args, () => actionPlace(a, 'args')) as never;
  const notHappened = (how: ReconcileHow, why: string): SettleOutcome => {
    d.writer.actionFailed(a.step_idx, a.id, { name: 'NotHappened', message: why });
    return { happened: false, how };
  };
  // Happened: committed with the result the person gave (journaled with the decision), or with none.
  const decided = (decision: Decision, result: string | null, how: ReconcileHow): SettleOutcome => {
    if (decision === 'not-happened') return notHappened(how, 'a person decided it did not happen');
    d.writer.actionCommitted(a.step_idx, a.id, result, 'decided-happened');
    return { happened: true, how };
  };
  switch (plan.how) {
    case 'run-again':
    case 'nothing-to-undo':
      return notHappened('nothing-to-undo', 'read-only: nothing to undo');
    case 'decided-happened':
      return decided('happened', a.result, plan.how);
    case 'decided-not-happened':
      return decided('not-happened', null, plan.how);
    case 'verify': {
      let found: unknown;
      try {
        found = await withTimeout(def.verify?.(args, d.ctx), def.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS, () => verifyTimedOut(a, d.ctx.runId, def.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS));
      } catch (err) {
        if (err instanceof LogbookError && err.code === ErrorCodes.VERIFY_TIMEOUT) throw err;
        throw d.verifyFailed(err);
      }
      if (found === undefined) return notHappened('verify', 'verify found no trace of it');
      d.writer.actionCommitted(a.step_idx, a.id, toJournalJson(found, `The verified result of ${a.type}`, 'Return plain JSON from verify.'), 'verified');
      return { happened: true, how: 'verify' };
    }
    case 're-execute-with-key': {
      // Safe to redo with its key: bring it to a known state (committed).
      d.writer.actionStarted({ id: a.id, stepIdx: a.step_idx, type: a.type, version: a.version, effect: a.effect, args: a.args }, true, 're-executed');
      d.writer.actionExecuting(a.step_idx, a.id);
      const ended = d.writer.effectStarting(a.type, a.id);
      let result: unknown;
      try {
        result = await def.execute(args, d.ctx);
      } finally {
        ended();
      }
      d.writer.actionCommitted(a.step_idx, a.id, toJournalJson(result, `The result of ${a.type}`, 'Return plain JSON from execute.'), 're-executed');
      return { happened: true, how: 're-execute-with-key' };
    }
    case 'needs-decision':
    case 'unknown': {
      const given = d.ask ? await d.ask() : undefined;
      if (!given) return { happened: undefined, how: 'needs-decision' };
      const { decision, result } = journaledDecision(a.id, given, 'the decision hook');
      d.writer.decision(a.step_idx, a.id, decision, result);
      return decided(decision, result, decision === 'happened' ? 'decided-happened' : 'decided-not-happened');
    }
  }
}

/** The journal's record of an error (JSON with name, message, code), as a boundary event carries it. */
export function journaledError(text: string | null): { name: string; message: string; code?: string } {
  try {
    const e = JSON.parse(text ?? 'null') as { name?: unknown; message?: unknown; code?: unknown } | null;
    if (e && typeof e.message === 'string') return { name: typeof e.name === 'string' ? e.name : 'Error', message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) };
  } catch {
    // A journaled error that is not JSON is shown as text.
  }
  return { name: 'Error', message: text ?? '' };
}
