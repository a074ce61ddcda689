// What every bundle reads of tracing: whether an endpoint is set at all, and the caller's W3C trace context. The rest
// (the variables in full, the mapping, the encoders) is in dist/traces.js, loaded only when this says to.

import type { CallerContext } from './spans';

/** True when an OTLP endpoint is set and tracing is not turned off: only then is the exporter loaded. */
export function wantsTraces(env: NodeJS.ProcessEnv): boolean {
  if (!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() && !env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) return false;
  return !/^(1|true|yes|on)$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '') && env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== 'none';
}

/** The caller's trace context in this process's environment (W3C TRACEPARENT / TRACESTATE), if any. */
export function callerContextFromEnv(env: NodeJS.ProcessEnv): CallerContext | undefined {
  const traceparent = env.TRACEPARENT?.trim();
  if (!traceparent) return undefined;
  const tracestate = env.TRACESTATE?.trim();
  return { traceparent, ...(tracestate ? { tracestate } : {}) };
}
