// One pass over a run's events: its attempts (how each began and ended, killed or not), its steps per attempt, and its
// actions with the events their spans carry (reconciliation, approval, decision, compensation, doubt).

import type { RunFacts } from '../runFacts';
import type { EventRow } from '../store';
import type { ActionInfo, AttemptInfo, Attrs, SpanEvent, StepInfo } from './spanTypes';

const GRACEFUL_END = new Set([
  'run.completed',
  'run.failed',
  'run.needs-decision',
  'run.awaiting-approval',
  'run.compensated',
  'run.compensation-failed',
  'run.stopped',
  'run.process-exited',
  'compensation.stopped',
]);

export interface JournalWalk {
  readonly attempts: Map<number, AttemptInfo>;
  readonly steps: Map<string, StepInfo>;
  readonly actions: Map<string, ActionInfo>;
  /** Events of the run's own span (a fork's origin). */
  readonly runEvents: SpanEvent[];
  readonly lastAt: number;
}

/** An event's data as an object ({} for none, or for text that is not a JSON object: a damaged row maps with fallbacks). */
export function parsed(data: string | null): Record<string, unknown> {
  if (data === null) return {};
  try {
    const v = JSON.parse(data) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads the events in order; a killed attempt's unsettled actions get an in-doubt event at its last known moment. */
export function walkJournal(facts: RunFacts, events: readonly EventRow[]): JournalWalk {
  const attempts = new Map<number, AttemptInfo>();
  const steps = new Map<string, StepInfo>();
  const actions = new Map<string, ActionInfo>();
  const runEvents: SpanEvent[] = [];
  let lastAt = facts.createdAt;

  for (const e of events) {
    lastAt = Math.max(lastAt, e.at);
    if (e.attempt <= 0) continue;
    let a = attempts.get(e.attempt);
    if (!a) {
      a = { n: e.attempt, start: e.at, end: e.at, killed: true, kind: e.attempt === 1 ? 'start' : 'resume', stats: undefined, endKind: undefined };
      attempts.set(e.attempt, a);
    }
    a.end = Math.max(a.end, e.at);
    const data = parsed(e.data);
    if (e.kind === 'run.lease-acquired' && data.purpose === 'compensate') a.kind = 'compensate';
    if (e.kind === 'compensation.begin') a.kind = 'compensate';
    if (GRACEFUL_END.has(e.kind)) {
      a.killed = false;
      a.endKind = e.kind;
      if (typeof data.stats === 'object' && data.stats !== null) a.stats = data.stats as Record<string, unknown>;
    }
    if (e.kind === 'run.forked') runEvents.push({ name: 'logbook.fork', timeMs: e.at, attributes: attrsOf(data) });

    if (e.step_idx !== null && e.action_id === null) {
      const key = `${e.step_idx}/${e.attempt}`;
      if (e.kind === 'step.started' || e.kind === 'step.restarted') {
        steps.set(key, {
          idx: e.step_idx,
          attempt: e.attempt,
          name: str(data.name) ?? `#${e.step_idx + 1}`,
          start: e.at,
          restarted: e.kind === 'step.restarted',
          end: undefined,
          status: undefined,
        });
      } else if (e.kind === 'step.completed' || e.kind === 'step.failed') {
        const s = steps.get(key);
        if (s) {
          s.end = e.at;
          s.status = e.kind === 'step.completed' ? 'completed' : 'failed';
        }
      }
    }

    if (e.action_id !== null) {
      let act = actions.get(e.action_id);
      if (!act) {
        if (e.kind.startsWith('compensation.')) continue; // a compensation of an action this journal never started: nothing to hang it on
        act = {
          id: e.action_id,
          stepIdx: e.step_idx ?? 0,
          attempt: e.attempt,
          start: e.at,
          type: undefined,
          effect: undefined,
          settledIn: undefined,
          events: [],
          attempts: new Set(),
          comp: undefined,
        };
        actions.set(e.action_id, act);
      }
      act.attempts.add(e.attempt);
      act.type ??= str(data.type);
      act.effect ??= str(data.effect);
      const at = { 'logbook.attempt': e.attempt };
      switch (e.kind) {
        case 'action.committed':
        case 'action.failed':
        case 'action.rejected':
          act.settledIn = e.attempt;
          break;
        case 'action.started':
          // Started again with a reconciliation (a resume's); null when it only passed its approval gate.
          if (typeof data.reconciliation === 'string')
            act.events.push({ name: 'logbook.reconciliation', timeMs: e.at, attributes: { ...at, 'logbook.action.reconciliation': data.reconciliation } });
          break;
        case 'action.in-doubt':
          act.events.push({
            name: 'logbook.in_doubt',
            timeMs: e.at,
            attributes: { ...at, 'logbook.reason': 'execute threw an error that does not prove nothing happened' },
          });
          break;
        case 'action.awaiting-approval':
        case 'action.approved':
          act.events.push({
            name: 'logbook.approval',
            timeMs: e.at,
            attributes: { ...at, 'logbook.approval': e.kind === 'action.approved' ? 'approved' : 'pending' },
          });
          break;
        case 'action.decided':
          act.events.push({ name: 'logbook.decision', timeMs: e.at, attributes: { ...at, 'logbook.decision': str(data.decision) ?? 'unknown' } });
          break;
        case 'action.version-changed':
          act.events.push({
            name: 'logbook.drift',
            timeMs: e.at,
            attributes: { ...at, 'logbook.drift.from': num(data.from) ?? 0, 'logbook.drift.to': num(data.to) ?? 0 },
          });
          break;
        case 'fault.injected':
          act.events.push({ name: 'logbook.fault_injected', timeMs: e.at, attributes: { ...at, 'logbook.fault': str(data.spec) ?? '' } });
          break;
        default:
          if (e.kind.startsWith('action.') && e.kind !== 'action.executing') {
            // action.verified, action.verified-absent, action.re-executed, action.decided-…: the reconciliation settled it.
            act.settledIn = e.attempt;
            if (typeof data.reconciliation === 'string')
              act.events.push({ name: 'logbook.reconciled', timeMs: e.at, attributes: { ...at, 'logbook.action.reconciliation': data.reconciliation } });
          } else if (e.kind.startsWith('compensation.') && e.kind !== 'compensation.begin' && e.kind !== 'compensation.stopped') {
            const status = e.kind.slice('compensation.'.length);
            act.comp ??= { attempt: e.attempt, start: e.at, end: undefined, status, events: [] };
            if (status !== 'executing') act.comp.status = status;
            if (status === 'committed' || status === 'failed' || status === 'irreversible') act.comp.end = e.at;
            act.comp.events.push({ name: 'logbook.compensation', timeMs: e.at, attributes: { ...at, 'logbook.compensation.status': status } });
          }
      }
    }
  }
  // The final attempt of a run no one holds any more ends where the row was last written, if that is later.
  if (!facts.leaseLive) lastAt = Math.max(lastAt, facts.updatedAt);

  // Killed attempts: what they left started is in doubt from the last moment the journal knows of them.
  for (const act of actions.values()) {
    for (const n of [...act.attempts].sort((x, y) => x - y)) {
      const a = attempts.get(n);
      if (a?.killed && act.settledIn !== n && !(facts.leaseLive && n === facts.attempt))
        act.events.push({
          name: 'logbook.in_doubt',
          timeMs: a.end,
          attributes: { 'logbook.attempt': n, 'logbook.reason': 'the attempt was killed between started and committed' },
        });
    }
    act.events.sort((x, y) => x.timeMs - y.timeMs);
  }

  return { attempts, steps, actions, runEvents, lastAt };
}

function attrsOf(data: Record<string, unknown>): Attrs {
  const out: Attrs = {};
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[`logbook.${k}`] = v;
  return out;
}
