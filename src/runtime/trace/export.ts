// The export itself, bundled apart (dist/traces.js) and loaded only once tracing is on: read the run from the journal,
// map it, encode it, POST it; a failure is a line in the log, never the run's failure.

import type { Store } from '../store';
import { otlpJson, otlpProtobuf, type Resource } from './otlp';
export { otlpJson } from './otlp';
export { runSpans } from './spans';
export { traceConfig } from './config';
import type { OtlpProtocol } from './options';
import type { TraceExportConfig } from './config';
import { killedAttempts, runSpans, spansOfAttempt, type MapOptions, type TraceSpan } from './spans';

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
  return { spans: spans.length, done };
}
