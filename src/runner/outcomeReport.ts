// What a finished run or compensation tells the session: status, output, and one sentence with the way forward.

import type { CompensationReport } from '../runtime/compensate';
import type { RunOutcome } from '../runtime/engine';
import { approveHint, sendHint } from '../link/hints';
import type { Outcome } from '../link/runnerProtocol';
import { toWire } from '../link/wire';

/** `cancel`: the cancel the run heard, for its reason. */
export function outcomeOfRun(o: RunOutcome, cancel?: { readonly reason: string | null } | null): Outcome {
  const s = o.stats;
  const work = `steps: ${s.stepsReplayed} replayed, ${s.stepsRedone} redone, ${s.stepsRun} run; actions: ${s.actionsSkipped} skipped, ${s.reconciled.length} reconciled, ${s.actionsExecuted} executed`;
  let summary: string;
  switch (o.status) {
    case 'completed':
      summary = `run ${o.runId} completed (attempt ${o.attempt}); output ${JSON.stringify(o.output) ?? 'undefined'}; ${work}`;
      break;
    case 'interrupted':
      summary = `run ${o.runId} stopped at a boundary on request (attempt ${o.attempt}); it is resumable: launch with "resume": "${o.runId}"`;
      break;
    case 'needs-decision':
      summary = `run ${o.runId} waits for a decision: ${o.waitingOn?.reason ?? ''} Launch with "resume": "${o.runId}" and "decide": {"${o.waitingOn?.actionId ?? '<action id>'}": "happened" | "not-happened"}, or decide when the debugger stops there`;
      break;
    case 'cancelled':
      summary = `run ${o.runId} was cancelled${cancel?.reason ? ` (${cancel.reason})` : ''} (attempt ${o.attempt}): it stopped at a boundary without starting a new effect, and it cannot be resumed. Undo what it did with "compensate": "${o.runId}" (or \`logbook compensate ${o.runId}\`)${o.error ? `; it could not be compensated here: ${o.error.message}` : ''}`;
      break;
    case 'awaiting-approval':
      summary = `run ${o.runId} waits for approval: ${o.waitingOn?.reason ?? ''} ${approveHint(o.runId, o.waitingOn?.actionId ?? '<action id>')}`;
      break;
    case 'waiting': {
      const w = o.waitingFor;
      const until = w?.until == null ? '' : ` until ${new Date(w.until).toISOString()}`;
      // Its child's wait (run.child): the event goes to the child, and sending it continues both.
      const whose = w?.runId === undefined ? '' : ` in its child run ${w.runId}`;
      summary = `run ${o.runId} waits for event ${JSON.stringify(w?.event ?? '?')}${whose}${until}, released (no process holds it). ${sendHint(w?.runId ?? o.runId, w?.event ?? '<name>')}`;
      break;
    }
    default:
      summary = `run ${o.runId} ${o.status}${o.error ? `: ${o.error.message}` : ''}; ${work}. Fix the cause and resume it, or compensate it`;
  }
  const doubt = s.leftInDoubt.map((d) => `${d.type} ${d.id}`);
  if (doubt.length) summary += `; in doubt after an error (it may have happened): ${doubt.join(', ')}; resuming reconciles it`;
  if (o.compensation) summary += `; ${cancel ? `cancelled${cancel.reason ? ` (${cancel.reason})` : ''}, then ` : ''}compensation ${o.compensation.status}`;
  return {
    runId: o.runId,
    status: o.status,
    attempt: o.attempt,
    ...(o.output !== undefined ? { output: toWire(o.output) } : {}),
    ...(o.error ? { error: o.error } : {}),
    ...(o.waitingOn ? { waitingOn: o.waitingOn } : {}),
    summary,
  };
}

export function outcomeOfCompensation(r: CompensationReport, attempt: number): Outcome {
  const parts = [`${r.compensated.length} inverse(s) applied`];
  if (r.alreadyCompensated) parts.push(`${r.alreadyCompensated} applied earlier`);
  if (r.irreversible.length) parts.push(`irreversible: ${r.irreversible.map((i) => `${i.type} ${i.id}`).join(', ')}`);
  if (r.settled.length) parts.push(`settled first: ${r.settled.map((s) => `${s.type} ${s.id} (${s.outcome})`).join(', ')}`);
  if (r.status === 'interrupted')
    parts.push(`it stopped between inverses on request; launch with "compensate": "${r.runId}" to finish (applied inverses are not repeated)`);
  const summary = `run ${r.runId} ${r.status === 'interrupted' ? 'compensation interrupted' : r.status}: ${parts.join('; ')}${r.waitingOn ? `; waiting: ${r.waitingOn.reason}` : ''}${r.error ? `; error: ${r.error.message}` : ''}`;
  return {
    runId: r.runId,
    status: r.status,
    attempt,
    ...(r.error ? { error: r.error } : {}),
    ...(r.waitingOn ? { waitingOn: r.waitingOn } : {}),
    summary,
  };
}
