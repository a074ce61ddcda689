// The policy's reconcile plan for one in-doubt action carried out, wherever one is met: resuming, settling, compensating.
// The runtime's only switch on `plan.how` (test/unit/one-plan-runner.test.ts keeps it so); verify runs here, with its
// deadline, and the host's decision prompt is built here.

import { ErrorCodes, LogbookError } from './errors';
import type { EffectContext } from './define';
import { toJournalJson } from './json';
import type { ActionSnapshot, PauseEvent, RunSnapshot, RuntimeHooks } from './hooks';
import type { ReconcileHow, ReconcilePlan } from './policy';
import { journaledDecision, type DecisionInput } from './decisions';
import { VERIFY_TIMEOUT_MS, verifyTimedOut, withTimeout } from './timeout';
import type { ActionRow } from './store/rows';
import type { RunWriter } from './store';
import type { Reconciliation } from './types';

/** Why an in-doubt action runs again: the label its `committed` carries. */
export type RunAgainWhy = Extract<Reconciliation, 're-executed' | 'verified-absent' | 'decided-not-happened'>;

export interface CarryOutDeps<A, R> {
  readonly writer: RunWriter;
  readonly def: { readonly verify?: (args: A, ctx: EffectContext) => R | undefined | Promise<R | undefined>; readonly verifyTimeoutMs?: number | undefined };
  /** The action's args, read back from the journal (or as the script passed them again). */
  readonly args: A;
  readonly ctx: EffectContext;
  /** Asks the host whether it happened (see decisionAsker); undefined: no host decides, the action waits for a person. */
  readonly ask: (() => Promise<DecisionInput | undefined>) | undefined;
  /** The error raised when verify throws (it says what was, and was not, done); a verify that timed out is raised as it is. */
  readonly verifyFailed: (err: unknown) => Error;
  /**
   * Runs the effect again, bracketed, its `committed` labelled with why: resuming, the forward bracket (fault points,
   * pauses); settling, a plain redo with the key. Settling calls it only for an action safe to redo with its key.
   */
  readonly execute: (why: RunAgainWhy) => Promise<R>;
}

/** What carrying out a plan did; `how` is the way it was brought to a known state. */
export type Carried<R> =
  /** It ran again through `execute`, labelled `why`, which returned `result`. */
  | { readonly done: 'executed'; readonly how: ReconcileHow; readonly why: RunAgainWhy; readonly result: R }
  /** Verify found it: committed with what verify returned, without executing. */
  | { readonly done: 'verified'; readonly how: 'verify'; readonly found: R }
  /** A person decided it happened: committed with the result they gave (journal JSON), or with none (null). */
  | { readonly done: 'decided-happened'; readonly how: 'decided-happened'; readonly result: string | null }
  /** It did not happen, and the plan only learns the truth: marked failed; `why` is what going forward would have run it again as. */
  | { readonly done: 'marked-not-happened'; readonly how: ReconcileHow; readonly why: RunAgainWhy }
  /** No rule and no host decides: a person must. Nothing was written. */
  | { readonly done: 'needs-decision'; readonly how: 'needs-decision' }
  /** Compensating, with no inverse: not redone, and nothing was written (the caller records it irreversible). */
  | { readonly done: 'left-in-doubt'; readonly how: 'no-inverse' };

/** Carries out `plan` for the in-doubt action `a` (its row in the journal). */
export async function carryOut<A, R>(plan: ReconcilePlan, a: ActionRow, d: CarryOutDeps<A, R>): Promise<Carried<R>> {
  const notHappened = async (how: ReconcileHow, why: string, then: RunAgainWhy): Promise<Carried<R>> => {
    if (plan.ifNotHappened === 'execute') return { done: 'executed', how, why: then, result: await d.execute(then) };
    d.writer.actionFailed(a.step_idx, a.id, { name: 'NotHappened', message: why });
    return { done: 'marked-not-happened', how, why: then };
  };
  const happened = (result: string | null): Carried<R> => {
    d.writer.actionCommitted(a.step_idx, a.id, result, 'decided-happened');
    return { done: 'decided-happened', how: 'decided-happened', result };
  };
  switch (plan.how) {
    case 'run-again':
    case 'nothing-to-undo':
      // Read-only: going forward it runs again; settling, there is nothing to undo.
      return notHappened(plan.how, 'read-only: nothing to undo', 're-executed');
    case 're-execute-with-key':
      return { done: 'executed', how: plan.how, why: 're-executed', result: await d.execute('re-executed') };
    case 'no-inverse':
      return { done: 'left-in-doubt', how: plan.how };
    case 'decided-happened':
      return happened(a.result);
    case 'decided-not-happened':
      return notHappened(plan.how, 'a person decided it did not happen', 'decided-not-happened');
    case 'verify': {
      const found = await verifyWithDeadline(a, d);
      if (found === undefined) return notHappened('verify', 'verify found no trace of it', 'verified-absent');
      d.writer.actionCommitted(
        a.step_idx,
        a.id,
        toJournalJson(found, `The verified result of ${a.type} ${a.id}`, 'Return plain JSON (or undefined when not found) from verify.'),
        'verified',
      );
      return { done: 'verified', how: 'verify', found };
    }
    case 'needs-decision':
    case 'unknown': {
      const given = d.ask ? await d.ask() : undefined;
      if (!given) return { done: 'needs-decision', how: 'needs-decision' };
      const decided = journaledDecision(a.id, given, 'the decision hook');
      d.writer.decision(a.step_idx, a.id, decided.decision, decided.result);
      return decided.decision === 'happened'
        ? happened(decided.result)
        : notHappened('decided-not-happened', 'a person decided it did not happen', 'decided-not-happened');
    }
  }
}

/** Verify, bounded by the action's deadline: what it found, or undefined when it found nothing. */
async function verifyWithDeadline<A, R>(a: ActionRow, d: CarryOutDeps<A, R>): Promise<R | undefined> {
  const ms = d.def.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  try {
    return await withTimeout(d.def.verify?.(d.args, d.ctx), ms, () => verifyTimedOut(a, d.ctx.runId, ms));
  } catch (err) {
    if (err instanceof LogbookError && err.code === ErrorCodes.VERIFY_TIMEOUT) throw err;
    throw d.verifyFailed(err);
  }
}

/**
 * The host's question for an in-doubt action no rule settles (did it happen?), as `ask` for carryOut: undefined when
 * the host has no decision hook. The run and the action are read when it asks.
 */
export function decisionAsker(
  hooks: RuntimeHooks | undefined,
  plan: ReconcilePlan,
  run: () => RunSnapshot,
  action: () => ActionSnapshot,
): (() => Promise<DecisionInput | undefined>) | undefined {
  if (!hooks?.decision) return undefined;
  return () => {
    const ev: PauseEvent = { kind: 'action:decision', run: run(), plan, action: { ...action(), reconciliation: 'needs-decision' } };
    return hooks.decision?.(ev) ?? Promise.resolve(undefined);
  };
}
