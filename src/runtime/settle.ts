// Settling one in-doubt action without going forward (before compensating, or at a run's end): its settle plan carried out.

import type { ActionDefinition, EffectContext } from './define';
import { actionPlace, fromJournalJson, toJournalJson } from './json';
import { reconcilePlan, type ReconcileHow, type ReconcilePlan } from './policy';
import { carryOut } from './carryOut';
import type { ActionRow } from './store/rows';
import type { RunWriter } from './store';
import type { DecisionInput } from './decisions';
import type { Reconciliation } from './types';

export type SettleOutcome =
  /** `reconciliation`: what the attempt's stats call it (the label a resume would have given it). */
  | { readonly happened: boolean; readonly how: ReconcileHow; readonly reconciliation: Reconciliation }
  | { readonly happened: undefined; readonly how: 'needs-decision' }
  /** Compensating an idempotent action with no inverse: whether it happened is left unknown (see the policy). */
  | { readonly happened: null; readonly how: 'no-inverse' };

export interface SettleDeps {
  readonly writer: RunWriter;
  readonly ctx: EffectContext;
  /** Asks a host for a decision when the plan needs one (see decisionAsker); undefined leaves the action waiting. */
  readonly ask?: (() => Promise<DecisionInput | undefined>) | undefined;
  /** The error to raise when verify throws (it says what was, and was not, done). */
  readonly verifyFailed: (err: unknown) => Error;
}

/**
 * The policy's plan for settling `a`, which the caller shows its host before settleInDoubt carries it out. With
 * `compensate`, `hasInverse` says whether compensation can undo it (its definition has a compensate).
 */
export function settlePlan(a: ActionRow, def: ActionDefinition, compensate?: { readonly hasInverse: boolean }): ReconcilePlan {
  const facts = { effect: a.effect, hasVerify: typeof def.verify === 'function', decision: a.decision, hasInverse: compensate?.hasInverse };
  return reconcilePlan(facts, compensate ? 'compensate' : 'settle');
}

/** Brings an in-doubt action to committed (it happened) or failed (it did not), as far as the policy allows without a person. */
export async function settleInDoubt(a: ActionRow, def: ActionDefinition, plan: ReconcilePlan, d: SettleDeps): Promise<SettleOutcome> {
  const args = fromJournalJson(a.args, () => actionPlace(a, 'args')) as never;
  const out = await carryOut(plan, a, {
    writer: d.writer,
    def,
    args,
    ctx: d.ctx,
    ask: d.ask,
    verifyFailed: d.verifyFailed,
    execute: () => redoWithKey(a, def, args, d),
  });
  switch (out.done) {
    case 'executed':
      return { happened: true, how: out.how, reconciliation: out.why };
    case 'verified':
      return { happened: true, how: out.how, reconciliation: 'verified' };
    case 'decided-happened':
      return { happened: true, how: out.how, reconciliation: 'decided-happened' };
    case 'marked-not-happened':
      return { happened: false, how: out.how, reconciliation: out.why };
    case 'needs-decision':
      return { happened: undefined, how: out.how };
    case 'left-in-doubt':
      return { happened: null, how: out.how };
  }
}

/** An action safe to redo with its key, brought to a known state (committed): no fault point, no pause. */
async function redoWithKey(a: ActionRow, def: ActionDefinition, args: never, d: SettleDeps): Promise<unknown> {
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
  return result;
}

/** The journal's record of an error (JSON with name, message, code), as a boundary event carries it. */
export function journaledError(text: string | null): { name: string; message: string; code?: string } {
  try {
    const e = JSON.parse(text ?? 'null') as { name?: unknown; message?: unknown; code?: unknown } | null;
    if (e && typeof e.message === 'string')
      return { name: typeof e.name === 'string' ? e.name : 'Error', message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) };
  } catch {
    // A journaled error that is not JSON is shown as text.
  }
  return { name: 'Error', message: text ?? '' };
}
