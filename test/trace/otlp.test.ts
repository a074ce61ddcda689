// The OTLP/protobuf writer against trace.proto itself: spans whose messages' lengths fall on each side of every varint
// size (1, 2, 3 bytes), decoded by opentelemetry-proto's generated code (byte for byte) and read the same as the JSON.

import { strict as assert } from 'node:assert';
import { otlpJson, otlpProtobuf } from '../../src/runtime/trace/otlp';
import type { TraceSpan } from '../../src/runtime/trace/spanTypes';
import { decodeJson, decodeProtobuf } from './receiver';

const text = (n: number): string => 'é'.repeat(Math.floor(n / 2)) + 'x'.repeat(n % 2);

function span(i: number, size: number): TraceSpan {
  return {
    traceId: 'ab'.repeat(16),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    parentSpanId: i % 2 ? '12'.repeat(8) : undefined,
    traceState: i % 3 ? undefined : 'k=v',
    name: `span ${i}`,
    kind: i % 2 ? 3 : 1,
    startMs: 1_700_000_000_000 + i,
    endMs: 1_700_000_000_500 + i,
    attributes: { big: text(size), zero: 0, negative: -7, int: 2 ** 40, double: 1.5, yes: true, no: false, list: ['a', text(size), ''], empty: '' },
    events: [{ name: 'e', timeMs: 1_700_000_000_100, attributes: { body: text(size) } }],
    status: i % 2 ? { code: 2, message: text(size) } : { code: 1 },
    owner: undefined,
  };
}

describe('traces: the OTLP/protobuf writer', () => {
  it('matches trace.proto byte for byte and reads as the JSON does, across every length-prefix size', () => {
    // Around 127/128 and 16383/16384 bytes, for an attribute, the key-value holding it, the span and the request.
    const sizes = [0, 1, 100, 110, 126, 127, 128, 129, 200, 16_250, 16_383, 16_384, 16_400, 70_000];
    const spans = sizes.map((n, i) => span(i, n));
    for (const batch of [spans, ...spans.map((s) => [s])]) {
      const resource = { serviceName: 'test', attributes: { 'deployment.environment': text(130) } };
      const fromProto = decodeProtobuf(otlpProtobuf(batch, resource));
      const fromJson = decodeJson(JSON.stringify(otlpJson(batch, resource)));
      assert.equal(fromProto.length, batch.length);
      assert.deepEqual(
        fromProto.map((s) => ({ ...s, protocol: undefined })),
        fromJson.map((s) => ({ ...s, protocol: undefined })),
      );
      assert.equal(fromProto[0]?.attributes.big, batch[0]?.attributes.big);
    }
  });

  it('negative control: a length prefix one byte short is refused by the decoder', () => {
    const body = otlpProtobuf([span(0, 300)], { serviceName: 'test' });
    // The request's first field is resource_spans (tag 0x0a) with a two-byte length: shorten it.
    assert.equal(body[0], 0x0a);
    const broken = Buffer.from(body);
    broken[1] = (broken[1] ?? 0) - 1;
    assert.throws(() => decodeProtobuf(broken));
  });
});
