// A journaled run as OpenTelemetry spans (GenAI conventions + logbook.*): ids derived from the journal, so exporting twice
// or after a resume names every span the same, and a killed attempt's spans are ended where the journal last saw them.
// Each span kind has its builder: runSpan.ts (the run, its attempts), stepSpan.ts, actionSpan.ts (tools, compensations)
// and chatSpan.ts (model calls), over one pass of the journal (journalWalk.ts).

import { runFacts, type RunFacts } from '../runFacts';
import type { ActionRow, EventRow, Store } from '../store';
import { SecretMask } from '../../shared/secrets';
import { actionSpan, compensationSpan } from './actionSpan';
import { toolCallsOf } from './chatSpan';
import { parsed, str, walkJournal } from './journalWalk';
import { attemptSpans, runSpan } from './runSpan';
import { TRACE_CONTEXT_EVENT, parseTraceparent, runTraceId, spanIdOf } from './spanIds';
import { stepSpan } from './stepSpan';
import type { MapOptions, SpanContext, TraceSpan } from './spanTypes';

export type { AttrValue, Attrs, CallerContext, MapOptions, SpanEvent, StatusCode, TraceSpan } from './spanTypes';
export { TRACE_CONTEXT_EVENT, parseTraceparent, runTraceId, spanIdOf } from './spanIds';

/** Reads a run through the store's reader and maps it to spans; undefined when the journal has no such run. */
export function runSpans(store: Store, runId: string, opts: MapOptions = {}): { facts: RunFacts; spans: TraceSpan[] } | undefined {
  const row = store.reader.run(runId);
  if (!row) return undefined;
  const facts = runFacts(store, row);
  const events: EventRow[] = [];
  for (let after = 0; ;) {
    const page = store.reader.events(runId, after, 1000);
    events.push(...page);
    const last = page[page.length - 1];
    if (page.length < 1000 || !last) break;
    after = last.seq;
  }
  const actions = [...store.reader.allActions(runId)];
  return { facts, spans: mapRun(facts, events, actions, opts) };
}

/** The pure mapping: a run's facts, its events in order and its action rows, to spans. */
export function mapRun(facts: RunFacts, events: readonly EventRow[], actionRows: readonly ActionRow[], opts: MapOptions = {}): TraceSpan[] {
  const runId = facts.id;
  const ctxEvent = events.find((e) => e.kind === TRACE_CONTEXT_EVENT);
  const ctxData = ctxEvent ? parsed(ctxEvent.data) : {};
  const caller = parseTraceparent(str(ctxData.traceparent));
  const walk = walkJournal(facts, events);
  const traceId = caller?.traceId ?? runTraceId(runId);
  const traceState = caller ? str(ctxData.tracestate) : undefined;
  // A step's id is every one of its actions' parent: hashed once.
  const ids = new Map<string, string>();
  const c: SpanContext = {
    facts,
    callerSpanId: caller?.spanId,
    span: (span) => Object.assign({ traceId, traceState }, span),
    attrs: (more) => Object.assign({ 'logbook.run.id': runId }, more),
    attempts: walk.attempts,
    lastAt: walk.lastAt,
    id: (place) => {
      let id = ids.get(place);
      if (id === undefined) ids.set(place, (id = spanIdOf(runId, place)));
      return id;
    },
    live: (n) => facts.leaseLive && n === facts.attempt,
    attemptEnd: (n) => walk.attempts.get(n)?.end ?? walk.lastAt,
  };
  const rows = new Map(actionRows.map((r) => [r.id, r]));
  // Model calls first, so their tool call ids are known to the tools.
  const toolCalls = toolCallsOf([...walk.actions.keys()].flatMap((id) => rows.get(id) ?? []));
  const mask = opts.captureContent ? (opts.mask ?? SecretMask.ofEnv(process.env)) : undefined;
  const spans: TraceSpan[] = [runSpan(c, walk.runEvents), ...attemptSpans(c)];
  for (const s of walk.steps.values()) spans.push(stepSpan(c, s));
  for (const act of walk.actions.values()) {
    const row = rows.get(act.id);
    spans.push(actionSpan(c, act, row, toolCalls, mask));
    const comp = compensationSpan(c, act, row);
    if (comp) spans.push(comp);
  }
  return spans;
}

/**
 * The spans the automatic export at the end of attempt `n` sends: those of attempt n, and of the attempts killed just
 * before it (their process could not send anything); the run's span once the run is over. Each span is sent by one
 * attempt only, so a resumed run's trace holds each span once.
 */
export function spansOfAttempt(spans: readonly TraceSpan[], attemptsKilled: (n: number) => boolean, n: number): TraceSpan[] {
  const mine = new Set([n]);
  for (let k = n - 1; k >= 1 && attemptsKilled(k); k--) mine.add(k);
  return spans.filter((s) => s.owner === 'final' || (typeof s.owner === 'number' && mine.has(s.owner)));
}

/** Whether attempt `n` ended without a word (its span says killed). */
export function killedAttempts(spans: readonly TraceSpan[]): (n: number) => boolean {
  const killed = new Set<number>();
  for (const s of spans) if (s.attributes['logbook.attempt.ended'] === 'killed') killed.add(Number(s.attributes['logbook.attempt']));
  return (n) => killed.has(n);
}
