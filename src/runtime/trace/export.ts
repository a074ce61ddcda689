// The export itself, bundled apart (dist/traces.js) and loaded only once tracing is on: read the run from the journal,
// map it, encode it, POST it; a failure is a line in the log, never the run's failure.

import type { Store } from '../store';
import { SecretMask } from '../../shared/secrets';
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

/** A URL as it may be shown: without its user and password. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/?#]*@/, '//');
  }
}

/**
 * Masks what the export carries that is a credential, by the secrets rules every output follows: the environment's
 * secrets (its OTLP header values and endpoint credentials among them), and this export's own endpoint and headers
 * (given by `--endpoint` or the host API rather than the environment) read as if the environment held them.
 */
function exportMask(cfg: TraceExportConfig): SecretMask {
  const encoded = (v: string): string => {
    try {
      return encodeURIComponent(v);
    } catch {
      return v; // a lone surrogate: request() refuses such a value, and it is masked as written
    }
  };
  const headers = Object.entries(cfg.headers)
    .map(([k, v]) => `${k}=${encoded(v)}`)
    .join(',');
  return SecretMask.ofEnv({ ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: cfg.url, OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers });
}

// RFC 9110: a field name is a token; a value has no CR, LF or NUL and (for fetch) no character above U+00FF.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex
const BAD_HEADER_VALUE = /[\r\n\0]|[^\u0000-\u00ff]/;

/** The request: credentials of the URL moved to a Basic authorization header (fetch refuses a URL that carries them). */
function request(cfg: TraceExportConfig): { url: string; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (const [k, raw] of Object.entries(cfg.headers)) {
    const v = raw.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ''); // as fetch trims it
    if (!HEADER_NAME.test(k)) throw new Error(`the header name "${k}" in OTEL_EXPORTER_OTLP_HEADERS is not a valid HTTP header name; fix it in the variable`);
    if (BAD_HEADER_VALUE.test(v))
      throw new Error(
        `the value of header ${k} in OTEL_EXPORTER_OTLP_HEADERS holds a line break or a character HTTP cannot carry; write it as the collector gave it, URL-encoded if needed`,
      );
    headers[k] = v;
  }
  let url = cfg.url;
  try {
    const u = new URL(cfg.url);
    if (u.username || u.password) {
      const auth = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) headers.authorization = `Basic ${auth}`;
      url = shownUrl(cfg.url);
    }
  } catch {
    // fetch says why the URL is wrong.
  }
  return { url, headers };
}

/** POSTs spans; rejects with a sentence (no credential in it) on a refusal, a timeout or an unreachable endpoint. */
export async function sendSpans(spans: readonly TraceSpan[], cfg: TraceExportConfig): Promise<void> {
  if (spans.length === 0) return;
  const mask = exportMask(cfg);
  const where = mask.text(shownUrl(cfg.url));
  try {
    await post(spans, cfg, where);
  } catch (err) {
    throw new Error(mask.text((err as Error).message));
  }
}

async function post(spans: readonly TraceSpan[], cfg: TraceExportConfig, where: string): Promise<void> {
  const { body, contentType } = encodeSpans(spans, cfg.protocol, { serviceName: cfg.serviceName });
  const { url, headers } = request(cfg);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': contentType },
      body,
      // A redirect would carry the API key headers to wherever it points (fetch drops only authorization): not followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${where} could not be reached (${cause?.code ?? cause?.message ?? (err as Error).message})`);
  }
  // The answer's body is not read: an endless or huge one would hold the run's exit (and its memory) until the timeout.
  await res.body?.cancel().catch(() => undefined);
  if (res.status >= 300 && res.status < 400)
    throw new Error(`${where} answered HTTP ${res.status} (a redirect, not followed so the headers go nowhere else; set the endpoint to the URL it points to)`);
  if (!res.ok) throw new Error(`${where} answered HTTP ${res.status}`);
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
