// Where and how traces go (the standard OTEL_EXPORTER_OTLP_* variables), and the export itself: from the journal, after
// the attempt, in the background; a failure is a line in the log, never the run's failure.

import type { Store } from '../store';
import { otlpJson, otlpProtobuf, type Resource } from './otlp';
import { killedAttempts, runSpans, spansOfAttempt, type CallerContext, type MapOptions, type TraceSpan } from './spans';

export type OtlpProtocol = 'http/json' | 'http/protobuf';

export interface TraceExportConfig {
  /** The full URL spans are POSTed to (…/v1/traces). */
  readonly url: string;
  readonly protocol: OtlpProtocol;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  readonly timeoutMs: number;
  /** gen_ai.input.messages / gen_ai.output.messages on chat spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
  readonly captureContent: boolean;
}

/** How the host API asks for traces (an option of openJournal); the variables fill what it leaves out. */
export interface TraceOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces). Default: from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint?: string;
  readonly protocol?: OtlpProtocol;
  readonly headers?: Readonly<Record<string, string>>;
  readonly serviceName?: string;
  readonly captureContent?: boolean;
}

const truthy = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/** OTEL_EXPORTER_OTLP_HEADERS: `k=v,k2=v2`, values URL-encoded (W3C baggage's format, as the spec says). */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const raw = part.slice(i + 1).trim();
    let v = raw;
    try {
      v = decodeURIComponent(raw);
    } catch {
      // Not URL-encoded after all: sent as written.
    }
    if (k) out[k] = v;
  }
  return out;
}

function serviceNameOf(env: NodeJS.ProcessEnv): string {
  if (env.OTEL_SERVICE_NAME?.trim()) return env.OTEL_SERVICE_NAME.trim();
  for (const kv of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const [k, v] = kv.split('=');
    if (k?.trim() === 'service.name' && v?.trim()) return decodeURIComponent(v.trim());
  }
  return 'agent-logbook';
}

/**
 * The export the environment asks for, or undefined: none unless an endpoint is set (OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turn it off). `log` hears why a setting is not followed (grpc, an unknown protocol).
 */
export function traceConfig(env: NodeJS.ProcessEnv, over: TraceOptions = {}, log?: (line: string) => void): TraceExportConfig | undefined {
  if (truthy(env.OTEL_SDK_DISABLED) && over.endpoint === undefined) return undefined;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none' && over.endpoint === undefined) return undefined;
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = over.endpoint ?? (specific ? specific : general ? `${general.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  const proto = (over.protocol ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (proto !== 'http/json' && proto !== 'http/protobuf') {
    log?.(
      `logbook: traces: OTEL_EXPORTER_OTLP_PROTOCOL=${proto} is not supported (only http/protobuf and http/json); no traces are sent. Set it to http/protobuf.`,
    );
    return undefined;
  }
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000);
  return {
    url,
    protocol: proto,
    headers: { ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS), ...over.headers },
    serviceName: over.serviceName ?? serviceNameOf(env),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 10_000,
    captureContent: over.captureContent ?? truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
  };
}

/** The caller's trace context in this process's environment (W3C TRACEPARENT / TRACESTATE), if any. */
export function callerContextFromEnv(env: NodeJS.ProcessEnv): CallerContext | undefined {
  const traceparent = env.TRACEPARENT?.trim();
  if (!traceparent) return undefined;
  const tracestate = env.TRACESTATE?.trim();
  return { traceparent, ...(tracestate ? { tracestate } : {}) };
}

export function encodeSpans(spans: readonly TraceSpan[], protocol: OtlpProtocol, resource: Resource): { body: Buffer | string; contentType: string } {
  return protocol === 'http/json'
    ? { body: JSON.stringify(otlpJson(spans, resource)), contentType: 'application/json' }
    : { body: otlpProtobuf(spans, resource), contentType: 'application/x-protobuf' };
}

/** POSTs spans; rejects with a sentence on a refusal, a timeout or an unreachable endpoint. */
export async function sendSpans(spans: readonly TraceSpan[], cfg: TraceExportConfig): Promise<void> {
  if (spans.length === 0) return;
  const { body, contentType } = encodeSpans(spans, cfg.protocol, { serviceName: cfg.serviceName });
  let res: Response;
  try {
    res = await fetch(cfg.url, {
      method: 'POST',
      headers: { ...cfg.headers, 'content-type': contentType },
      body,
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${cfg.url} could not be reached (${cause?.code ?? cause?.message ?? (err as Error).message})`);
  }
  await res.arrayBuffer().catch(() => undefined);
  if (!res.ok) throw new Error(`${cfg.url} answered HTTP ${res.status}`);
}

export interface AttemptExport {
  readonly spans: number;
  readonly done: Promise<void>;
}

/**
 * After an attempt: reads the run's spans now (the store may close next) and sends this attempt's in the background.
 * Never throws; a failure is one line in `log` that says how to send them later.
 */
export function exportAttempt(store: Store, runId: string, attempt: number, cfg: TraceExportConfig, log: (line: string) => void): AttemptExport {
  let spans: TraceSpan[];
  try {
    const opts: MapOptions = { captureContent: cfg.captureContent };
    const all = runSpans(store, runId, opts)?.spans ?? [];
    spans = spansOfAttempt(all, killedAttempts(all), attempt);
  } catch (err) {
    log(`logbook: traces of run ${runId} were not read (${(err as Error).message}); the journal keeps the run: \`logbook traces ${runId}\` sends them later.`);
    return { spans: 0, done: Promise.resolve() };
  }
  const done = sendSpans(spans, cfg).catch((err: unknown) => {
    log(`logbook: traces of run ${runId} were not sent: ${(err as Error).message}. The journal keeps the run: \`logbook traces ${runId}\` sends them later.`);
  });
  pending.add(done);
  void done.finally(() => pending.delete(done));
  return { spans: spans.length, done };
}

const pending = new Set<Promise<void>>();

/** Waits for the exports this process started (a host that shuts down, a test). */
export async function flushTraces(): Promise<void> {
  await Promise.all([...pending]);
}
