// OTLP trace export requests, encoded here (JSON and protobuf) from opentelemetry-proto's trace.proto, so tracing needs no package.

import type { AttrValue, Attrs, TraceSpan } from './spans';

export interface Resource {
  readonly serviceName: string;
  readonly attributes?: Attrs;
}

export const SCOPE = { name: 'agent-logbook', version: '0.1.0' } as const;

const nanos = (ms: number): bigint => BigInt(Math.round(ms)) * 1_000_000n;

function resourceAttrs(r: Resource): Attrs {
  return { 'service.name': r.serviceName, 'telemetry.sdk.name': 'agent-logbook', 'telemetry.sdk.language': 'nodejs', ...r.attributes };
}

// ---- OTLP/JSON (the protobuf JSON mapping with the OTLP rules: ids as hex, enums as numbers, 64-bit ints as strings)

type JsonAny = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number } | { arrayValue: { values: JsonAny[] } };

function jsonValue(v: AttrValue): JsonAny {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isSafeInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map((x) => ({ stringValue: x })) } };
}

const jsonAttrs = (a: Attrs): Array<{ key: string; value: JsonAny }> => Object.entries(a).map(([key, v]) => ({ key, value: jsonValue(v) }));

export function otlpJson(spans: readonly TraceSpan[], resource: Resource): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: jsonAttrs(resourceAttrs(resource)) },
        scopeSpans: [
          {
            scope: { name: SCOPE.name, version: SCOPE.version },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.traceState ? { traceState: s.traceState } : {}),
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: nanos(s.startMs).toString(),
              endTimeUnixNano: nanos(s.endMs).toString(),
              attributes: jsonAttrs(s.attributes),
              events: s.events.map((e) => ({ timeUnixNano: nanos(e.timeMs).toString(), name: e.name, attributes: jsonAttrs(e.attributes) })),
              status: { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
            })),
          },
        ],
      },
    ],
  };
}

// ---- OTLP/protobuf: a minimal writer (varint, fixed64, length-delimited) over the message numbers of trace.proto

class Writer {
  // One growing buffer: a span is a few hundred small fields, and a Buffer per field cost more than the mapping.
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  private push(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** Writes a varint of 0 ≤ v < 2^31 at `at` (room already made); returns where it ends. */
  private smallVarintAt(at: number, v: number): number {
    let i = at;
    while (v > 0x7f) {
      this.buf[i++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[i++] = v;
    return i;
  }

  private varint(n: bigint | number): void {
    this.room(10);
    if (typeof n === 'number' && n >= 0 && n < 0x80000000) {
      this.len = this.smallVarintAt(this.len, n);
      return;
    }
    let v = BigInt(n);
    if (v < 0n) v &= (1n << 64n) - 1n; // int64 negatives go out as ten bytes, two's complement
    while (v > 0x7fn) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  private tag(field: number, wire: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wire);
  }

  uint(field: number, n: number | bigint): this {
    if (n === 0 || n === 0n) return this;
    this.tag(field, 0);
    this.varint(n);
    return this;
  }

  bool(field: number, b: boolean): this {
    this.tag(field, 0);
    this.varint(b ? 1 : 0);
    return this;
  }

  fixed64(field: number, n: bigint): this {
    this.tag(field, 1);
    this.room(8);
    this.buf.writeBigUInt64LE(n, this.len);
    this.len += 8;
    return this;
  }

  double(field: number, n: number): this {
    this.tag(field, 1);
    this.room(8);
    this.buf.writeDoubleLE(n, this.len);
    this.len += 8;
    return this;
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2);
    this.varint(b.length);
    this.push(b);
    return this;
  }

  string(field: number, s: string | undefined): this {
    return s ? this.stringAlways(field, s) : this;
  }

  /** A string that is sent even when empty (a oneof member: absence would mean another case). */
  stringAlways(field: number, s: string): this {
    const n = Buffer.byteLength(s, 'utf8');
    this.tag(field, 2);
    this.varint(n);
    this.room(n);
    this.len += this.buf.write(s, this.len, 'utf8');
    return this;
  }

  /**
   * A nested message, written in place: one byte is kept for its length, and the body moved up only when its length
   * needs more (a body of 128 bytes or more), where a writer per message cost an allocation and a copy each.
   */
  message(field: number, build: (w: Writer) => void): this {
    this.tag(field, 2);
    this.room(1);
    const at = this.len++;
    build(this);
    const size = this.len - at - 1;
    let extra = 0;
    for (let v = size >>> 7; v > 0; v >>>= 7) extra++;
    if (extra > 0) {
      this.room(extra);
      this.buf.copyWithin(at + 1 + extra, at + 1, this.len);
      this.len += extra;
    }
    this.smallVarintAt(at, size);
    return this;
  }

  /** The bytes written so far (shared with this writer). */
  view(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  finish(): Buffer {
    return Buffer.from(this.view());
  }
}

// AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5 (ArrayValue.values 1).
function anyValue(w: Writer, v: AttrValue): void {
  if (typeof v === 'string') w.stringAlways(1, v);
  else if (typeof v === 'boolean') w.bool(2, v);
  else if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) {
      if (v === 0)
        w.bool(3, false); // int_value 0: tag 3, varint 0 (a oneof member is sent even when zero)
      else w.uint(3, BigInt(v));
    } else w.double(4, v);
  } else w.message(5, (arr) => v.forEach((x) => arr.message(1, (item) => item.stringAlways(1, x))));
}

// KeyValue: key 1, value 2.
function attributes(w: Writer, field: number, a: Attrs): void {
  for (const [k, v] of Object.entries(a)) w.message(field, (kv) => kv.string(1, k).message(2, (av) => anyValue(av, v)));
}

export function otlpProtobuf(spans: readonly TraceSpan[], resource: Resource): Buffer {
  // ExportTraceServiceRequest.resource_spans 1 → ResourceSpans { resource 1 { attributes 1 }, scope_spans 2 }
  return new Writer()
    .message(1, (rs) => {
      rs.message(1, (r) => attributes(r, 1, resourceAttrs(resource)));
      // ScopeSpans { scope 1 { name 1, version 2 }, spans 2 }
      rs.message(2, (ss) => {
        ss.message(1, (sc) => sc.string(1, SCOPE.name).string(2, SCOPE.version));
        for (const s of spans) {
          // Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6, start 7, end 8 (fixed64),
          // attributes 9, events 11 { time_unix_nano 1 fixed64, name 2, attributes 3 }, status 15 { message 2, code 3 }.
          ss.message(2, (sp) => {
            sp.bytes(1, Buffer.from(s.traceId, 'hex')).bytes(2, Buffer.from(s.spanId, 'hex')).string(3, s.traceState);
            if (s.parentSpanId) sp.bytes(4, Buffer.from(s.parentSpanId, 'hex'));
            sp.string(5, s.name).uint(6, s.kind).fixed64(7, nanos(s.startMs)).fixed64(8, nanos(s.endMs));
            attributes(sp, 9, s.attributes);
            for (const e of s.events)
              sp.message(11, (ev) => {
                ev.fixed64(1, nanos(e.timeMs)).string(2, e.name);
                attributes(ev, 3, e.attributes);
              });
            sp.message(15, (st) => st.string(2, s.status.message).uint(3, s.status.code));
          });
        }
      });
    })
    .finish();
}
