// A journaled run as OpenTelemetry spans (GenAI conventions + logbook.*): ids derived from the journal, so exporting twice
// or after a resume names every span the same, and a killed attempt's spans are ended where the journal last saw them.

import { createHash } from 'node:crypto';
import { runFacts, type RunFacts } from '../runFacts';
import type { ActionRow, EventRow, Store } from '../store';
import { SecretMask } from '../../shared/secrets';

export type AttrValue = string | number | boolean | readonly string[];
export type Attrs = Record<string, AttrValue>;

/** OTLP's status codes: 0 unset, 1 ok, 2 error. */
export type StatusCode = 0 | 1 | 2;

export interface SpanEvent {
  readonly name: string;
  readonly timeMs: number;
  readonly attributes: Attrs;
}

export interface TraceSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly traceState: string | undefined;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 3 client (a model call or a tool reaching outside). */
  readonly kind: 1 | 3;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attrs;
  readonly events: readonly SpanEvent[];
  readonly status: { readonly code: StatusCode; readonly message?: string };
  /**
   * Which attempt's automatic export sends this span: the attempt it belongs to (a step, an attempt), the attempt that
   * settled it (an action, a compensation), 'final' for the run's span (sent once the run is over), or undefined for
   * what the journal has not settled yet (only `logbook traces` sends it, as it stands).
   */
  readonly owner: number | 'final' | undefined;
}

export interface CallerContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export interface MapOptions {
  /** Record prompts and completions (gen_ai.input.messages / gen_ai.output.messages), masked by the secrets rules. */
  readonly captureContent?: boolean;
  /** The secrets to mask in captured content (default: those of this process's environment). */
  readonly mask?: SecretMask;
}

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
const FINAL_RUN = new Set(['completed', 'failed', 'compensated', 'compensation-failed']);
const MODEL_TYPES = new Set(['model.generate', 'model.stream']);

interface AttemptInfo {
  readonly n: number;
  readonly start: number;
  end: number;
  killed: boolean;
  kind: 'start' | 'resume' | 'compensate';
  stats: Record<string, unknown> | undefined;
  endKind: string | undefined;
}

interface StepInfo {
  readonly idx: number;
  readonly attempt: number;
  readonly name: string;
  readonly start: number;
  readonly restarted: boolean;
  end: number | undefined;
  status: 'completed' | 'failed' | undefined;
}

interface ActionInfo {
  readonly id: string;
  readonly stepIdx: number;
  readonly attempt: number;
  readonly start: number;
  type: string | undefined;
  effect: string | undefined;
  settledIn: number | undefined;
  readonly events: SpanEvent[];
  readonly attempts: Set<number>;
  comp: { attempt: number; start: number; end: number | undefined; status: string; events: SpanEvent[] } | undefined;
}

function parsed(data: string | null): Record<string, unknown> {
  if (data === null) return {};
  try {
    const v = JSON.parse(data) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function jsonOf(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A token count as AI SDK 5 (a number) or 6+ (`{ total }`) records it. */
function tokens(v: unknown): number | undefined {
  return num(v) ?? num((v as { total?: unknown } | null | undefined)?.total);
}

/** What a model call's journaled result says: usage, finish reason, response id and model, tool call ids, content. */
function modelResult(type: string, result: unknown): { usage: unknown; finish: unknown; response: unknown; toolCallIds: string[]; content: unknown } {
  const toolCallIds: string[] = [];
  const list = Array.isArray(result) ? result : (result as { parts?: unknown } | null | undefined)?.parts;
  if (type === 'model.stream' && Array.isArray(list)) {
    const parts = list as Array<Record<string, unknown>>;
    const finish = parts.find((p) => p?.type === 'finish');
    const meta = parts.find((p) => p?.type === 'response-metadata');
    for (const p of parts) if (p?.type === 'tool-call' && typeof p.toolCallId === 'string') toolCallIds.push(p.toolCallId);
    const text = parts
      .filter((p) => p?.type === 'text-delta')
      .map((p) => str(p.delta) ?? str(p.textDelta) ?? '')
      .join('');
    return { usage: finish?.usage, finish: finish?.finishReason, response: meta, toolCallIds, content: text };
  }
  const r = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  if (Array.isArray(r.content))
    for (const p of r.content as Array<Record<string, unknown>>)
      if (p?.type === 'tool-call' && typeof p.toolCallId === 'string') toolCallIds.push(p.toolCallId);
  return { usage: r.usage, finish: r.finishReason, response: r.response, toolCallIds, content: r.content };
}

function finishReason(v: unknown): string | undefined {
  return str(v) ?? str((v as { unified?: unknown } | null | undefined)?.unified);
}

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
  const traceId = caller?.traceId ?? runTraceId(runId);
  const traceState = caller ? str(ctxData.tracestate) : undefined;
  const id = (place: string): string => spanIdOf(runId, place);

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

  const rows = new Map(actionRows.map((r) => [r.id, r]));
  const toolCalls = new Map<string, string>();
  const mask = opts.captureContent ? (opts.mask ?? SecretMask.ofEnv(process.env)) : undefined;
  const spans: TraceSpan[] = [];
  const base = { traceId, traceState };
  const common = { 'logbook.run.id': runId };
  const live = (n: number): boolean => facts.leaseLive && n === facts.attempt;
  const attemptEnd = (n: number): number => attempts.get(n)?.end ?? lastAt;

  // The run.
  const final = FINAL_RUN.has(facts.storedStatus);
  spans.push({
    ...base,
    spanId: id('run'),
    parentSpanId: caller?.spanId,
    name: `invoke_agent ${facts.agent}`,
    kind: 1,
    startMs: facts.createdAt,
    endMs: Math.max(facts.createdAt, lastAt),
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': facts.agent,
      'gen_ai.conversation.id': runId,
      ...common,
      'logbook.run.status': facts.status,
      'logbook.attempts': facts.attempt,
      'logbook.script': facts.script,
    },
    events: runEvents,
    status:
      facts.storedStatus === 'completed' || facts.storedStatus === 'compensated'
        ? { code: 1 }
        : facts.storedStatus === 'failed' || facts.storedStatus === 'compensation-failed'
          ? { code: 2, message: `the run ${facts.storedStatus}` }
          : { code: 0 },
    owner: final ? 'final' : undefined,
  });

  // Attempts.
  for (const a of [...attempts.values()].sort((x, y) => x.n - y.n)) {
    const replayedSteps = num(a.stats?.stepsReplayed);
    const skippedActions = num(a.stats?.actionsSkipped);
    const killed = a.killed && !live(a.n);
    spans.push({
      ...base,
      spanId: id(`attempt/${a.n}`),
      parentSpanId: id('run'),
      name: `${a.kind === 'compensate' ? 'compensate' : a.n === 1 ? 'start' : 'resume'} ${facts.agent} #${a.n}`,
      kind: 1,
      startMs: a.start,
      endMs: live(a.n) ? lastAt : a.end,
      attributes: {
        ...common,
        'logbook.attempt': a.n,
        'logbook.attempt.kind': a.kind,
        'logbook.attempt.ended': killed ? 'killed' : live(a.n) ? 'running' : (a.endKind ?? 'unknown'),
        ...(replayedSteps !== undefined ? { 'logbook.replayed.steps': replayedSteps } : {}),
        ...(skippedActions !== undefined ? { 'logbook.replayed.actions': skippedActions } : {}),
      },
      events: [],
      status: killed ? { code: 2, message: 'killed: the process ended without a word; ended at the last time the journal knows' } : { code: 0 },
      owner: a.n,
    });
  }

  // Model calls first, so their tool call ids are known to the tools.
  for (const act of actions.values()) {
    const row = rows.get(act.id);
    const type = row?.type ?? act.type ?? '';
    if (!MODEL_TYPES.has(type) || !row) continue;
    for (const tc of modelResult(type, jsonOf(row.result)).toolCallIds) toolCalls.set(tc, act.id);
  }

  // Steps.
  for (const s of steps.values()) {
    const open = s.end === undefined;
    const interrupted = open && !live(s.attempt);
    spans.push({
      ...base,
      spanId: id(`step/${s.idx}/${s.attempt}`),
      parentSpanId: id(`attempt/${s.attempt}`),
      name: `step ${s.name}`,
      kind: 1,
      startMs: s.start,
      endMs: s.end ?? attemptEnd(s.attempt),
      attributes: {
        ...common,
        'logbook.attempt': s.attempt,
        'logbook.step.index': s.idx,
        'logbook.step.name': s.name,
        'logbook.step.status': s.status ?? (interrupted ? 'interrupted' : 'running'),
        'logbook.step.rerun': s.restarted,
        'logbook.replayed': false,
      },
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

  // Actions.
  for (const act of actions.values()) {
    const row = rows.get(act.id);
    const type = row?.type ?? act.type ?? 'action';
    const effect = row?.effect ?? act.effect ?? 'unknown';
    const stored = row?.status ?? 'started';
    const inDoubt = stored === 'started' && !live(facts.attempt);
    const status = inDoubt ? 'in-doubt' : stored;
    const lastAttempt = Math.max(...act.attempts);
    const endMs = row?.ended_at ?? attemptEnd(lastAttempt);
    const attrs: Attrs = {
      ...common,
      'logbook.attempt': act.attempt,
      'logbook.action.key': act.id,
      'logbook.action.effect': effect,
      'logbook.action.status': status,
      'logbook.replayed': false,
      ...(row?.reconciliation ? { 'logbook.action.reconciliation': row.reconciliation } : {}),
      ...(row ? { 'logbook.action.executions': row.executions, 'logbook.action.version': row.version } : {}),
      ...(row?.decision ? { 'logbook.action.decision': row.decision } : {}),
      ...(row?.approval ? { 'logbook.action.approval': row.approval } : {}),
    };
    let name: string;
    if (MODEL_TYPES.has(type)) {
      const args = (jsonOf(row?.args ?? null) ?? {}) as Record<string, unknown>;
      const model = str(args.model) ?? 'model';
      const r = modelResult(type, jsonOf(row?.result ?? null));
      const usage = (r.usage ?? {}) as Record<string, unknown>;
      const input = tokens(usage.inputTokens) ?? tokens(usage.promptTokens);
      const output = tokens(usage.outputTokens) ?? tokens(usage.completionTokens);
      const finish = finishReason(r.finish);
      const response = (r.response ?? {}) as Record<string, unknown>;
      name = `chat ${model}`;
      Object.assign(attrs, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': model,
        ...(str(response.modelId) ? { 'gen_ai.response.model': str(response.modelId) } : {}),
        ...(str(response.id) ? { 'gen_ai.response.id': str(response.id) } : {}),
        ...(input !== undefined ? { 'gen_ai.usage.input_tokens': input } : {}),
        ...(output !== undefined ? { 'gen_ai.usage.output_tokens': output } : {}),
        ...(finish ? { 'gen_ai.response.finish_reasons': [finish] } : {}),
        'logbook.model.call': str(args.call) ?? act.id,
      });
      if (mask) {
        const params = (args.params ?? {}) as Record<string, unknown>;
        if (params.prompt !== undefined) attrs['gen_ai.input.messages'] = mask.text(JSON.stringify(mask.deep(params.prompt)));
        if (r.content !== undefined) attrs['gen_ai.output.messages'] = mask.text(JSON.stringify(mask.deep(r.content)));
      }
    } else {
      name = `execute_tool ${type}`;
      Object.assign(attrs, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': type, 'gen_ai.tool.type': 'function' });
      const callId = [...toolCalls.keys()].find((tc) => act.id.endsWith(`:${tc}`));
      if (callId) attrs['gen_ai.tool.call.id'] = callId;
    }
    const settled = act.settledIn !== undefined && stored !== 'started' && stored !== 'awaiting-approval';
    spans.push({
      ...base,
      spanId: id(`action/${act.id}`),
      parentSpanId: id(`step/${act.stepIdx}/${act.attempt}`),
      name,
      kind: MODEL_TYPES.has(type) || effect !== 'read-only' ? 3 : 1,
      startMs: act.start,
      endMs: Math.max(act.start, endMs),
      attributes: attrs,
      events: act.events,
      status:
        stored === 'committed'
          ? { code: 1 }
          : stored === 'failed'
            ? { code: 2, message: 'the action failed' }
            : inDoubt
              ? { code: 2, message: 'in doubt: started, never committed; the next resume reconciles it' }
              : { code: 0 },
      owner: settled ? act.settledIn : undefined,
    });
    if (act.comp) {
      const c = act.comp;
      spans.push({
        ...base,
        spanId: id(`compensation/${act.id}`),
        parentSpanId: id(`attempt/${c.attempt}`),
        name: `compensate ${type}`,
        kind: 3,
        startMs: c.start,
        endMs: c.end ?? attemptEnd(c.attempt),
        attributes: {
          ...common,
          'logbook.attempt': c.attempt,
          'logbook.action.key': act.id,
          'logbook.compensation.status': c.status,
          'gen_ai.tool.name': type,
        },
        events: c.events,
        status: c.status === 'committed' ? { code: 1 } : c.status === 'failed' ? { code: 2, message: 'the compensation failed' } : { code: 0 },
        owner: c.end !== undefined ? c.attempt : undefined,
      });
    }
  }
  return spans;
}

function attrsOf(data: Record<string, unknown>): Attrs {
  const out: Attrs = {};
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[`logbook.${k}`] = v;
  return out;
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
