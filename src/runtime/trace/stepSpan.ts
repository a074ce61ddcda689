// One span per step per attempt that ran it (a replayed step runs nothing, so it has none).

import type { SpanContext, StepInfo, TraceSpan } from './spanTypes';

export function stepSpan(c: SpanContext, s: StepInfo): TraceSpan {
  const open = s.end === undefined;
  const interrupted = open && !c.live(s.attempt);
  return c.span({
    spanId: c.id(`step/${s.idx}/${s.attempt}`),
    parentSpanId: c.id(`attempt/${s.attempt}`),
    name: `step ${s.name}`,
    kind: 1,
    startMs: s.start,
    endMs: s.end ?? c.attemptEnd(s.attempt),
    attributes: c.attrs({
      'logbook.attempt': s.attempt,
      'logbook.step.index': s.idx,
      'logbook.step.name': s.name,
      'logbook.step.status': s.status ?? (interrupted ? 'interrupted' : 'running'),
      'logbook.step.rerun': s.restarted,
      'logbook.replayed': false,
    }),
    events: [],
    status:
      s.status === 'completed'
        ? { code: 1 }
        : s.status === 'failed'
          ? { code: 2, message: 'the step failed' }
          : interrupted
            ? { code: 2, message: 'interrupted' }
            : { code: 0 },
    owner: s.attempt,
  });
}
