// A real OTLP/HTTP traces receiver for the tests: decodes OTLP JSON and protobuf and refuses what a collector would,
// checking protobuf against the official trace.proto (as @opentelemetry/otlp-transformer's generated code carries it).

import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { CLI } from '../helpers';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the generated protobufjs module has no types we need
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};

interface ProtoType {
  decode(b: Uint8Array): object;
  encode(m: object): { finish(): Uint8Array };
  verify(m: object): string | null;
  fromObject(o: object): object;
  toObject(m: object, o: object): Record<string, unknown>;
}

const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, unknown>;
  readonly events: ReadonlyArray<{ name: string; timeNs: bigint; attributes: Record<string, unknown> }>;
  readonly status: { code: number; message: string };
  readonly service: string;
  readonly protocol: 'json' | 'protobuf';
}

type Obj = Record<string, unknown>;

/** A field of a decoded message as text (strings, numbers and bigint-like longs). */
const asText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : '');

function anyValue(v: Obj | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('arrayValue' in v) return ((v.arrayValue as Obj).values as Obj[] | undefined)?.map(anyValue) ?? [];
  throw new Error(`an AnyValue with no known member: ${JSON.stringify(v)}`);
}

const attrs = (list: unknown): Record<string, unknown> =>
  Object.fromEntries(((list as Obj[] | undefined) ?? []).map((kv) => [kv.key, anyValue(kv.value as Obj)]));

/** The spans of a request in protobuf-JSON object form with ids as hex. */
function spansOf(req: Obj, protocol: 'json' | 'protobuf'): Span[] {
  const out: Span[] = [];
  for (const rs of (req.resourceSpans as Obj[] | undefined) ?? []) {
    const service = String(attrs((rs.resource as Obj | undefined)?.attributes)['service.name']);
    for (const ss of (rs.scopeSpans as Obj[] | undefined) ?? []) {
      for (const s of (ss.spans as Obj[] | undefined) ?? []) {
        const status = (s.status ?? {}) as Obj;
        out.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: asText(s.parentSpanId),
          traceState: asText(s.traceState),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          startNs: BigInt(String(s.startTimeUnixNano)),
          endNs: BigInt(String(s.endTimeUnixNano)),
          attributes: attrs(s.attributes),
          events: ((s.events as Obj[] | undefined) ?? []).map((e) => ({
            name: String(e.name),
            timeNs: BigInt(String(e.timeUnixNano)),
            attributes: attrs(e.attributes),
          })),
          status: { code: Number(status.code ?? 0), message: asText(status.message) },
          service,
          protocol,
        });
      }
    }
  }
  return out;
}

const hex = (b: unknown): string => Buffer.from(b as Uint8Array).toString('hex');

export function decodeProtobuf(body: Buffer): Span[] {
  const msg = Request.decode(body);
  const problem = Request.verify(msg);
  if (problem) throw new Error(`protobuf does not verify against trace.proto: ${problem}`);
  // Byte for byte: every field written was one trace.proto knows, with its wire type (unknown ones are not re-encoded).
  const again = Buffer.from(Request.encode(msg).finish());
  if (!again.equals(body)) throw new Error('protobuf holds bytes trace.proto does not describe (the re-encoding differs)');
  const o = Request.toObject(msg, { longs: String, enums: Number, bytes: Array, defaults: false });
  for (const rs of (o.resourceSpans as Obj[] | undefined) ?? [])
    for (const ss of (rs.scopeSpans as Obj[] | undefined) ?? [])
      for (const s of (ss.spans as Obj[] | undefined) ?? []) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        if (s.parentSpanId !== undefined) s.parentSpanId = hex(s.parentSpanId);
      }
  return spansOf(o, 'protobuf');
}

/** OTLP/JSON: the protobuf JSON mapping, ids as hex; every key must be one the schema knows. */
export function decodeJson(text: string): Span[] {
  const req = JSON.parse(text) as Obj;
  const asProto = JSON.parse(text) as Obj;
  for (const rs of (asProto.resourceSpans as Obj[] | undefined) ?? [])
    for (const ss of (rs.scopeSpans as Obj[] | undefined) ?? [])
      for (const s of (ss.spans as Obj[] | undefined) ?? []) {
        for (const k of ['traceId', 'spanId', 'parentSpanId'] as const) {
          if (s[k] === undefined) continue;
          assert.match(asText(s[k]), k === 'traceId' ? /^[0-9a-f]{32}$/ : /^[0-9a-f]{16}$/, `${k} is lower-case hex`);
          s[k] = Buffer.from(asText(s[k]), 'hex').toString('base64');
        }
      }
  const msg = Request.fromObject(asProto);
  const problem = Request.verify(msg);
  if (problem) throw new Error(`JSON does not verify against trace.proto: ${problem}`);
  const back = Request.toObject(msg, { longs: String, enums: Number, bytes: String, defaults: false });
  // fromObject drops keys the schema does not have: the round trip shows any.
  assert.deepEqual(JSON.parse(JSON.stringify(back)), withoutEmptyLists(asProto), 'every key of the JSON is a field of trace.proto');
  return spansOf(req, 'json');
}

/** An empty repeated field is the same as an absent one (proto3 JSON), and toObject leaves it out. */
function withoutEmptyLists(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmptyLists);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => !(Array.isArray(x) && x.length === 0))
      .map(([k, x]) => [k, withoutEmptyLists(x)]),
  );
}

export interface Receiver {
  readonly url: string;
  readonly spans: Span[];
  readonly requests: Array<{ contentType: string; headers: http.IncomingHttpHeaders }>;
  readonly errors: string[];
  /** Resolves once `n` spans have arrived in all. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const spans: Span[] = [];
  const requests: Receiver['requests'] = [];
  const errors: string[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type'] ?? '');
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`${req.method} ${req.url}`);
        const got = contentType.startsWith('application/x-protobuf')
          ? decodeProtobuf(body)
          : contentType.startsWith('application/json')
            ? decodeJson(body.toString('utf8'))
            : (() => {
                throw new Error(`content-type ${contentType}`);
              })();
        spans.push(...got);
        requests.push({ contentType, headers: req.headers });
        res.writeHead(200, { 'content-type': contentType }).end(contentType.startsWith('application/json') ? '{}' : '');
      } catch (err) {
        errors.push((err as Error).message);
        res.writeHead(400).end(String(err));
      }
      for (const w of [...waiters]) if (spans.length >= w.n) w.resolve();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    errors,
    waitFor: (n) => (spans.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface AsyncCliResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI in a child process without blocking this one (the receiver must answer while it runs). */
export function cliAsync(
  dir: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  journal = path.join(dir, 'journal.db'),
): Promise<AsyncCliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, '--journal', journal], {
      cwd: dir,
      env: { ...process.env, LOGBOOK_STATE_DIR: dir, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}
