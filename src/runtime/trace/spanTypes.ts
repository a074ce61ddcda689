// The shapes of the trace mapping: an OTLP-ready span, its attributes and events, and what each span kind's builder reads.

import type { RunFacts } from '../runFacts';
import type { SecretMask } from '../../shared/secrets';

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

/** What the journal says of one attempt, one step of an attempt, one action (see journalWalk.ts). */
export interface AttemptInfo {
  readonly n: number;
  readonly start: number;
  end: number;
  killed: boolean;
  kind: 'start' | 'resume' | 'compensate';
  stats: Record<string, unknown> | undefined;
  endKind: string | undefined;
}

export interface StepInfo {
  readonly idx: number;
  readonly attempt: number;
  readonly name: string;
  readonly start: number;
  readonly restarted: boolean;
  end: number | undefined;
  status: 'completed' | 'failed' | undefined;
}

export interface ActionInfo {
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

/** What every span kind's builder needs of the run being mapped: its trace, ids, and when each attempt ended. */
export interface SpanContext {
  readonly facts: RunFacts;
  /** The caller's span the run's span hangs under, if the run joined a caller's trace. */
  readonly callerSpanId: string | undefined;
  /**
   * A span of the run's trace (its id, and the caller's tracestate with a caller's traceparent). Copied into a literal,
   * never spread: in V8 an object built by spreading another first and then adding keys cost 5–8 µs, against under
   * 0.5 µs copied (measured; the trace export's cost per action is a budget row).
   */
  span(s: Omit<TraceSpan, 'traceId' | 'traceState'>): TraceSpan;
  /** Attributes: the one every span carries (the run id), then `more`, copied as `span` copies. */
  attrs(more?: Attrs): Record<string, Attrs[string]>;
  readonly attempts: ReadonlyMap<number, AttemptInfo>;
  /** The last moment the journal knows of the run. */
  readonly lastAt: number;
  /** A span's id from its place in the run (`run`, `attempt/2`, `step/3/2`, `action/<key>`). */
  id(place: string): string;
  /** Whether attempt `n` is the one a live lease drives now. */
  live(n: number): boolean;
  /** Where attempt `n` ended, as far as the journal knows. */
  attemptEnd(n: number): number;
}
