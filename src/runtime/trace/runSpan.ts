// The run's span (invoke_agent, under the caller's span if it joined a trace) and one span per attempt under it.

import { num } from './journalWalk';
import type { SpanContext, SpanEvent, TraceSpan } from './spanTypes';

const FINAL_RUN = new Set(['completed', 'failed', 'compensated', 'compensation-failed']);

/** invoke_agent: from the run's creation to the last moment the journal knows; sent once the run is over. */
export function runSpan(c: SpanContext, runEvents: SpanEvent[]): TraceSpan {
  const f = c.facts;
  return c.span({
    spanId: c.id('run'),
    parentSpanId: c.callerSpanId,
    name: `invoke_agent ${f.agent}`,
    kind: 1,
    startMs: f.createdAt,
    endMs: Math.max(f.createdAt, c.lastAt),
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': f.agent,
      'gen_ai.conversation.id': f.id,
      'logbook.run.id': f.id,
      'logbook.run.status': f.status,
      'logbook.attempts': f.attempt,
      'logbook.script': f.script,
    },
    events: runEvents,
    status:
      f.storedStatus === 'completed' || f.storedStatus === 'compensated'
        ? { code: 1 }
        : f.storedStatus === 'failed' || f.storedStatus === 'compensation-failed'
          ? { code: 2, message: `the run ${f.storedStatus}` }
          : { code: 0 },
    owner: FINAL_RUN.has(f.storedStatus) ? 'final' : undefined,
  });
}

/** One span per attempt (start, resume or compensate), killed ones ended at the last moment the journal knows of them. */
export function attemptSpans(c: SpanContext): TraceSpan[] {
  return [...c.attempts.values()]
    .sort((x, y) => x.n - y.n)
    .map((a): TraceSpan => {
      const replayedSteps = num(a.stats?.stepsReplayed);
      const skippedActions = num(a.stats?.actionsSkipped);
      const live = c.live(a.n);
      const killed = a.killed && !live;
      return c.span({
        spanId: c.id(`attempt/${a.n}`),
        parentSpanId: c.id('run'),
        name: `${a.kind === 'compensate' ? 'compensate' : a.n === 1 ? 'start' : 'resume'} ${c.facts.agent} #${a.n}`,
        kind: 1,
        startMs: a.start,
        endMs: live ? c.lastAt : a.end,
        attributes: c.attrs({
          'logbook.attempt': a.n,
          'logbook.attempt.kind': a.kind,
          'logbook.attempt.ended': killed ? 'killed' : live ? 'running' : (a.endKind ?? 'unknown'),
          ...(replayedSteps !== undefined ? { 'logbook.replayed.steps': replayedSteps } : {}),
          ...(skippedActions !== undefined ? { 'logbook.replayed.actions': skippedActions } : {}),
        }),
        events: [],
        status: killed ? { code: 2, message: 'killed: the process ended without a word; ended at the last time the journal knows' } : { code: 0 },
        owner: a.n,
      });
    });
}
