// Trace and span ids derived from the journal (run, attempt, place), so every export of a run names its spans alike,
// and the caller's W3C traceparent a run joins.

import { createHash } from 'node:crypto';

/** The event kind the store writes with the caller's trace context (run --detach, TRACEPARENT, the host's option). */
export const TRACE_CONTEXT_EVENT = 'trace.context';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A W3C traceparent's trace and parent span ids; undefined for one that is malformed or all zeros (the spec's invalid). */
export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string } | undefined {
  const m = TRACEPARENT.exec((value ?? '').trim().toLowerCase());
  if (!m || m[1] === 'ff') return undefined;
  const [, , traceId = '', spanId = ''] = m;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId };
}

function hexId(seed: string, bytes: number): string {
  const h = createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2);
  // An all-zero id is invalid in OTLP; a hash that gives one (once in 2^64) is nudged.
  return /^0+$/.test(h) ? `${h.slice(0, -1)}1` : h;
}

/** The trace id of a run with no caller: the run id's hash, so every export of the run names the same trace. */
export function runTraceId(runId: string): string {
  return hexId(`logbook/trace/${runId}`, 16);
}

/** A span's id from the run and the item's place (`run`, `attempt/2`, `step/3/2`, `action/<key>`): the same at every export. */
export function spanIdOf(runId: string, place: string): string {
  return hexId(`logbook/span/${runId}/${place}`, 8);
}
