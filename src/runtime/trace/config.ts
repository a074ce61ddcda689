// Where and how traces go: the standard OTEL_EXPORTER_OTLP_* variables, read in full by the exporter (dist/traces.js)
// once env.ts has seen that an endpoint is set.

import type { OtlpProtocol, TraceOptions } from './options';
import { malformedHeaderParts, parseOtlpHeaders } from '../../shared/otlpHeaders';

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

const truthy = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

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
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    const bad = malformedHeaderParts(env[name]);
    // The part itself is not shown: a header variable's text is usually an API key.
    if (bad.length)
      log?.(
        `logbook: traces: ${name} part ${bad.join(', ')} has no \`=\`, so it is not sent. Write key=value pairs separated by commas (authorization=Bearer%20…).`,
      );
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
