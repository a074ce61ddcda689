// OTEL_EXPORTER_OTLP_HEADERS as the spec writes it (`k=v,k2=v2`, values URL-encoded): read by the exporter to send
// them, and by the secrets rules to mask every value wherever Logbook prints.

/** The names of the variables that hold OTLP headers: OTEL_EXPORTER_OTLP_HEADERS and its per-signal forms. */
export const OTLP_HEADERS_VARIABLE = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/;
/** The names of the variables that hold an OTLP endpoint, whose user:password@ is sent as Basic authorization. */
export const OTLP_ENDPOINT_VARIABLE = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?ENDPOINT$/;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `k=v,k2=v2` → { k: v, k2: v2 }, values URL-decoded when they are encoded (W3C baggage's format, as the spec says). */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    // Not URL-encoded after all: sent as written.
    if (k) out[k] = decoded(part.slice(i + 1).trim());
  }
  return out;
}

/** The 1-based numbers of the parts of a headers variable that are not `key=value` (not sent): named, never shown. */
export function malformedHeaderParts(text: string | undefined): number[] {
  const parts = (text ?? '').split(',');
  return parts.flatMap((p, i) => (p.trim() === '' || p.indexOf('=') > 0 ? [] : [i + 1]));
}

/**
 * What a headers variable holds that may be a credential, as written and decoded: each value, and each part that is not
 * `key=value` (it is not sent, but it is usually a pasted key). The names are not: they say which header, not its secret.
 */
export function otlpHeaderSecrets(text: string): string[] {
  const out = new Set<string>();
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    const v = (i > 0 ? part.slice(i + 1) : part).trim();
    if (v) for (const form of [v, decoded(v)]) out.add(form);
  }
  return [...out];
}
