// Runner side: the sentence a person reads at each boundary, worded from the runtime's typed event and the policy's plan.

import type { ActionSnapshot, PauseEvent } from '../runtime/hooks';
import { reconcilePlan, type ReconcileHow, type ReconcilePlan } from '../runtime/policy';
import type { Decision } from '../runtime/types';
import { decideHint } from '../link/hints';
import { durationWords } from '../shared/relativeTime';

/** Why an in-doubt action is reconciled the way the policy planned, as the tail of a sentence. */
export const RECONCILE_WHY: Record<ReconcileHow, string> = {
  'run-again': 'it is read-only, so it runs again',
  'nothing-to-undo': 'it is read-only: there is nothing to undo',
  'decided-happened': 'a person decided it happened',
  'decided-not-happened': 'a person decided it did not happen',
  verify: 'verify asks the outside system whether it happened',
  're-execute-with-key': 'it is idempotent, so it runs again with the same key',
  'no-inverse': 'it has no compensate, so running it again could only add an effect nothing undoes',
  'needs-decision': 'it has no verify, so a person must decide',
  unknown: 'the script that defines it is not loaded',
};

function errorOf(a: ActionSnapshot): string {
  return (a.error?.message ?? 'an error').replace(/\.$/, '');
}

function name(a: ActionSnapshot): string {
  return `${a.type} ${a.id}`;
}

/** The in-doubt-after-error sentence shared by the failed stop and the reconcile stop. */
function afterError(a: ActionSnapshot, plan: ReconcilePlan | undefined): string {
  const next = plan ? `; it is reconciled like a crash in flight: ${RECONCILE_WHY[plan.how]}` : '';
  return `${name(a)} is in doubt after an error: execute threw ${JSON.stringify(errorOf(a))}, which does not prove nothing happened${next}`;
}

export function boundaryText(ev: PauseEvent): string {
  const { step, action: a } = ev;
  switch (ev.kind) {
    case 'run:entry':
      if (ev.caller) return `child run ${ev.run.id} (${ev.run.agent}) of run ${ev.caller.run.id}, attempt ${ev.run.attempt}: about to start`;
      return ev.run.attempt > 1 ? `attempt ${ev.run.attempt}: the script runs again from the top, replaying the journal` : 'the run is about to start';
    case 'run:end':
      return ev.caller ? `child run ${ev.run.id} completed; its output goes back to run ${ev.caller.run.id}` : 'the run completed';
    case 'child:start': {
      const c = ev.child;
      if (!c) break;
      if (c.how === 'start') return `run.child: child run ${c.runId} (${c.agent}) is journaled; it runs next, in this session (step in to follow it)`;
      return `run.child: the journal already has child run ${c.runId} (${c.agent}, ${c.status ?? 'found'}): this run re-attaches to it instead of starting another`;
    }
    case 'child:end': {
      const c = ev.child;
      if (!c) break;
      return c.status === 'completed'
        ? `run.child: child run ${c.runId} completed; its output is this step's result`
        : `run.child: child run ${c.runId} is ${c.status ?? 'stopped'}`;
    }
    case 'step:before':
      if (!step) break;
      if (step.replayed) return `replay: step "${step.name}" completed in an earlier attempt; its checkpointed result is returned`;
      return step.redone ? `step "${step.name}" was in progress when the run stopped: it runs again` : `step "${step.name}" is about to run`;
    case 'step:after':
      if (!step) break;
      return `step "${step.name}" checkpointed`;
    case 'sleep:waiting': {
      const z = ev.sleep;
      if (!z) break;
      const until = new Date(z.wakeAt).toISOString();
      if (z.leftMs <= 0) return `sleep "${z.name}" is over (it woke at ${until}): the run goes on`;
      const left = `${durationWords(z.leftMs)} left`;
      return z.replayed
        ? `sleep "${z.name}" started in an earlier attempt: the run waits only what is left, until ${until} (${left})`
        : `sleep "${z.name}" started: the run waits until ${until} (${left}); its wake time is journaled`;
    }
    case 'event:wait': {
      const w = ev.wait;
      if (!w) break;
      const until = w.deadline === null ? '' : ` (until ${new Date(w.deadline).toISOString()}, then it times out)`;
      return `run.waitFor("${w.name}") has no event yet${until}: send one now ("Send Event…"), or go on and the run stops waiting (released, exit 3)`;
    }
    default:
      break;
  }
  if (!a) return ev.kind;
  const fresh = a.status === 'new';
  switch (ev.kind) {
    case 'action:skipped':
      return `skip: ${name(a)} is committed in the journal; its result is returned without running`;
    case 'action:before-start':
      if (a.effect === 'read-only' && fresh) return `read-only ${name(a)} is about to run`;
      return `${a.effect === 'non-idempotent' ? 'non-idempotent ' : ''}${name(a)} is about to start`;
    case 'action:after-start':
      return `${name(a)}: started is durable; execute runs next`;
    case 'action:after-execute':
      return `${name(a)} executed; committed is written next`;
    case 'action:committed':
      // A read-only action's first run is recorded without a bracket; one re-run in doubt was reconciled.
      return a.effect === 'read-only' && a.reconciliation === undefined ? `read-only ${name(a)} recorded` : `${name(a)} committed`;
    case 'action:failed':
      return a.afterError ? afterError(a, ev.plan) : `${name(a)} failed: ${errorOf(a)}`;
    case 'action:reconcile': {
      const why = ev.plan ? RECONCILE_WHY[ev.plan.how] : 'it is reconciled';
      if (a.afterError) return `in doubt: ${afterError(a, ev.plan)}`;
      return `in doubt: ${name(a)} was started but not committed; ${why}`;
    }
    case 'action:reconciled':
      return a.reconciliation === 'verified'
        ? `${name(a)}: verify found it; marked committed without executing`
        : `${name(a)}: decided it happened; marked committed without executing`;
    case 'action:approval':
      return `approval gate: ${name(a)} waits for a person to approve or reject`;
    case 'action:decision':
      return ev.run.status === 'compensating'
        ? `${name(a)} has no verify: did it happen? (compensation needs to know)`
        : `${name(a)}${a.afterError ? ` is in doubt after an error (${errorOf(a)}) and` : ''} has no verify: did it happen?`;
    case 'compensate:before':
      return `compensate: ${name(a)}${ev.redoInverse ? ' (its inverse was in doubt: it runs again with the same key)' : ''}`;
    case 'compensate:after-start':
      return `compensate: ${name(a)}: started is durable; the inverse runs next`;
    case 'compensate:after-execute':
      return `compensate: ${name(a)}: the inverse ran; committed is written next`;
    case 'compensate:committed':
      return `compensate: ${name(a)} compensated`;
    default:
      break;
  }
  return ev.kind;
}

/** How an in-doubt action came to execute, for the before-start stop that follows its reconcile stop. */
const RECONCILED_THEN: Partial<Record<ReconcileHow, string>> = {
  'run-again': 'reconciled: read-only, so it runs again',
  'decided-not-happened': 'reconciled: decided it did not happen, so it executes',
  verify: 'reconciled: verify found no trace of it, so it executes again',
  're-execute-with-key': 'reconciled: idempotent, so it runs again with the same key',
};

/**
 * The runtime has no boundary of its own for "verify found nothing" or "re-execute": the before-start stop after a
 * reconcile stop says which reconciliation led there (the policy's plan, with any decision given in the session).
 */
export function reconciledText(a: ActionSnapshot, decided: Decision | undefined, detail: string): string {
  const why = RECONCILED_THEN[reconcilePlan({ effect: a.effect, hasVerify: a.hasVerify, decision: decided ?? null }, 'resume').how];
  return why ? `${why}; ${detail}` : detail;
}

/** Why a stop at an in-doubt action needs no decision from a person, or undefined when it does (the policy's plan). */
export function noDecisionNeeded(a: ActionSnapshot): string | undefined {
  const how = reconcilePlan({ effect: a.effect, hasVerify: a.hasVerify, decision: null }, 'resume').how;
  return how === 'needs-decision' ? undefined : RECONCILE_WHY[how];
}

/** The runner's own stop when an in-doubt action with no verify needs a person's answer. */
export function decisionText(ev: PauseEvent): string {
  const a = ev.action;
  const what = a ? `${name(a)} ${a.afterError ? `is in doubt after an error (${errorOf(a)})` : 'was started but not committed'}` : 'an in-doubt action';
  return `needs a decision: ${what} and has no verify. Decide "happened" or "not-happened" (${decideHint()}), or continue to leave the run waiting in needs-decision`;
}
