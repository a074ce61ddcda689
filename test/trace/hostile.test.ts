// Attacks on the traces export: credentials in OTEL_EXPORTER_OTLP_HEADERS and in the endpoint URL never shown, a
// redirect that would carry them elsewhere not followed, an endless response body not read, malformed headers named.

import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers';
import { cliAsync, startReceiver, type Receiver } from './receiver';
import { SECRET_ENV, VAULT, assertNoSecret } from '../secrets/plant';
import * as fs from 'node:fs';

const KNOBS = path.join(FIXTURES, 'knobs.ts');
const KEY = 'sk-hny-Zq9XwZq9XwZq9Xw';

interface Hostile {
  readonly url: string;
  readonly requests: Array<{ url: string | undefined; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}

async function hostile(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Hostile> {
  const requests: Hostile['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url, headers: req.headers });
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('traces: a hostile endpoint and credentials (issue 25, attacked)', function () {
  this.timeout(120_000);
  let r: Receiver;
  beforeEach(async () => {
    r = await startReceiver();
  });
  afterEach(async () => {
    await r.close();
  });

  it('a header value fetch refuses (a line break) is named by its header, its value never shown; the run completes', async () => {
    const dir = tmpDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${encodeURIComponent(`${KEY}\nx-evil: 1`)}` };
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'nl', '--input', '{}'], env);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!run.stderr.includes('Zq9Xw'), `stderr shows the key: ${run.stderr}`);
    assert.match(run.stderr, /x-honeycomb-team/, 'the line names the header');
    const t = await cliAsync(dir, ['traces', 'nl'], env);
    assert.equal(t.status, 2);
    assert.ok(!`${t.stdout}${t.stderr}`.includes('Zq9Xw'), `logbook traces shows the key: ${t.stderr}`);
    assert.match(t.stderr, /LB_TRACE_EXPORT.*x-honeycomb-team/s);
  });

  it('an endpoint URL with user:password@ is sent as Basic authorization, and no output shows the password', async () => {
    const dir = tmpDir();
    const endpoint = r.url.replace('http://', 'http://otel:Pg5LrPg5Lr@');
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'ui', '--input', '{}'], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!run.stderr.includes('Pg5Lr'), run.stderr);
    await new Promise((res) => setTimeout(res, 50));
    assert.ok(r.spans.length > 0, `the spans were sent: ${run.stderr}`);
    assert.equal(r.requests[0]?.headers.authorization, `Basic ${Buffer.from('otel:Pg5LrPg5Lr').toString('base64')}`);
    const t = await cliAsync(dir, ['traces', 'ui', '--json', '--endpoint', `${endpoint}/v1/traces`]);
    assert.equal(t.status, 0, t.stderr);
    assert.ok(!`${t.stdout}${t.stderr}`.includes('Pg5Lr'), `logbook traces shows the password: ${t.stdout}`);
    // A failing endpoint with credentials: the error does not show them either.
    const down = await cliAsync(dir, ['traces', 'ui', '--endpoint', 'http://otel:Pg5LrPg5Lr@127.0.0.1:9/v1/traces']);
    assert.equal(down.status, 2);
    assert.ok(!`${down.stdout}${down.stderr}`.includes('Pg5Lr'), `the failure shows the password: ${down.stderr}`);
  });

  it('an endpoint that echoes the request headers back in a 500 body and in its status text: nothing of it is shown', async () => {
    const dir = tmpDir();
    const echo = await hostile((req, res) => {
      res.writeHead(500, `bad ${String(req.headers['x-honeycomb-team'])}`, { 'content-type': 'text/plain' }).end(JSON.stringify(req.headers));
    });
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: echo.url, OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${KEY}` };
      const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'echo', '--input', '{}'], env);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /HTTP 500/);
      assert.ok(!run.stderr.includes('Zq9Xw'), run.stderr);
      const t = await cliAsync(dir, ['traces', 'echo'], env);
      assert.equal(t.status, 2);
      assert.ok(!t.stderr.includes('Zq9Xw'), t.stderr);
    } finally {
      await echo.close();
    }
  });

  it('a redirect is not followed: the API key header never reaches the place it points to', async () => {
    const dir = tmpDir();
    const elsewhere = await hostile((_req, res) => res.writeHead(200).end('{}'));
    const redirecting = await hostile((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/v1/traces` }).end());
    try {
      // http/json: a string body, which fetch can send again to the redirect's target.
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: redirecting.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${KEY}`,
      };
      const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'redir', '--input', '{}'], env);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(redirecting.requests.length, 1);
      assert.deepEqual(elsewhere.requests, [], 'nothing was sent where the redirect pointed');
      assert.match(run.stderr, /HTTP 307.*redirect/);
    } finally {
      await elsewhere.close();
      await redirecting.close();
    }
  });

  it('an endpoint that answers 200 with an endless body: the run exits without reading it', async () => {
    const dir = tmpDir();
    let streaming = true;
    const endless = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = (): void => {
        while (streaming && res.write(chunk));
        if (streaming) res.once('drain', more);
      };
      res.on('close', () => (streaming = false));
      more();
    });
    try {
      // A timeout far beyond the test's: only a client that stops reading lets the run exit.
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endless.url, OTEL_EXPORTER_OTLP_TIMEOUT: '600000' };
      const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'endless', '--input', '{}'], env);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(endless.requests.length, 1);
    } finally {
      streaming = false;
      await endless.close();
    }
  });

  it('a malformed OTEL_EXPORTER_OTLP_HEADERS part (no `=`) is named without its text; the run works', async () => {
    const dir = tmpDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_HEADERS: `Bearer ${KEY}` };
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'bad', '--input', '{}'], env);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!run.stderr.includes('Zq9Xw'), run.stderr);
    assert.match(run.stderr, /OTEL_EXPORTER_OTLP_HEADERS.*part 1.*no `=`.*key=value/);
  });

  it('an endpoint that accepts the connection and never answers: the run exits after the timeout, its exit code unchanged', async () => {
    const dir = tmpDir();
    const silent = await hostile(() => undefined);
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: silent.url, OTEL_EXPORTER_OTLP_TIMEOUT: '300' };
      const ok = await cliAsync(dir, ['run', KNOBS, '--run-id', 'silent', '--input', '{}'], env);
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stderr, /traces of run silent were not sent: .*could not be reached.*logbook traces silent/);
      const failing = await cliAsync(dir, ['run', VAULT, '--run-id', 'silent-fail'], env);
      const plain = await cliAsync(tmpDir(), ['run', VAULT, '--run-id', 'silent-fail']);
      assert.equal(failing.status, plain.status, 'the exit code is the one without tracing');
    } finally {
      await silent.close();
    }
  });

  it('secrets of the environment and of OTEL_EXPORTER_OTLP_HEADERS reach no span, event or message, content captured or not', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'vault.otlp.json');
    for (const capture of ['false', 'true']) {
      const env = {
        ...SECRET_ENV,
        OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${KEY}`,
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: capture,
      };
      const run = await cliAsync(dir, ['run', VAULT, '--run-id', `vault-${capture}`, '--input', '{"careless":true}'], env);
      assertNoSecret(run.stdout + run.stderr, 'logbook run');
      const t = await cliAsync(dir, ['traces', `vault-${capture}`, '--file', file, '--json'], env);
      assert.equal(t.status, 0, t.stderr);
      assertNoSecret(t.stdout + t.stderr, 'logbook traces');
      assertNoSecret(fs.readFileSync(file), 'the OTLP JSON file');
    }
    await new Promise((res) => setTimeout(res, 50));
    assert.ok(r.spans.length > 0);
    assertNoSecret(
      JSON.stringify(r.spans, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
      'the spans sent',
    );
  });

  it('a run killed three times at different points and resumed: each span sent once, every attempt and action there', async () => {
    const dir = tmpDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    const first = await cliAsync(dir, ['run', KNOBS, '--run-id', 'k3', '--input', '{}', '--crash-at', 'knob.act#1@after-execute'], env);
    assert.equal(first.signal, 'SIGKILL', first.stderr);
    for (const spec of ['knob.act#1@after-start', 'knob.act#1@after-commit']) {
      const killed = await cliAsync(dir, ['resume', 'k3', '--crash-at', spec], env);
      assert.equal(killed.signal, 'SIGKILL', `${spec}: ${killed.stderr}`);
    }
    const done = await cliAsync(dir, ['resume', 'k3'], env);
    assert.equal(done.status, 0, done.stderr);
    await new Promise((res) => setTimeout(res, 50));
    const ids = r.spans.map((s) => s.spanId);
    assert.equal(new Set(ids).size, ids.length, `each span once: ${r.spans.map((s) => s.name).join(', ')}`);
    const attempts = r.spans.filter((s) => /^(start|resume) knobs #/.test(s.name)).map((s) => s.attributes['logbook.attempt']);
    assert.deepEqual(attempts.sort(), [1, 2, 3, 4]);
    const tools = r.spans.filter((s) => s.name === 'execute_tool knob.act');
    assert.deepEqual(
      tools.map((s) => s.attributes['logbook.action.status']),
      ['committed', 'committed'],
    );
    assert.equal(r.spans.filter((s) => s.name.startsWith('invoke_agent')).length, 1);
  });

  it('a compensation killed mid-way and run again: one compensate span per action, each span sent once', async () => {
    const dir = tmpDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    const first = await cliAsync(dir, ['run', KNOBS, '--run-id', 'comp', '--input', '{}', '--crash-at', 'knob.act#2@after-start'], env);
    assert.equal(first.signal, 'SIGKILL', first.stderr);
    const killed = await cliAsync(dir, ['compensate', 'comp', '--crash-at', 'knob.act#1@compensate:after-execute'], env);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const done = await cliAsync(dir, ['compensate', 'comp'], env);
    assert.equal(done.status, 0, done.stderr);
    await new Promise((res) => setTimeout(res, 50));
    const ids = r.spans.map((s) => s.spanId);
    assert.equal(new Set(ids).size, ids.length, `each span once: ${r.spans.map((s) => s.name).join(', ')}`);
    const comps = r.spans.filter((s) => s.name.startsWith('compensate knob.act'));
    assert.ok(comps.length >= 1, r.spans.map((s) => s.name).join(', '));
    assert.equal(new Set(comps.map((s) => s.attributes['logbook.action.key'])).size, comps.length, 'one compensate span per action');
    const sent = new Set(ids);
    const t = await cliAsync(dir, ['traces', 'comp', '--endpoint', `${r.url}/v1/traces`], env);
    assert.equal(t.status, 0, t.stderr);
    await new Promise((res) => setTimeout(res, 50));
    const again = r.spans.slice(ids.length);
    assert.deepEqual(new Set(again.map((s) => s.spanId)), sent, 'the automatic exports lost no span logbook traces has');
  });

  it('an unsupported OTEL_EXPORTER_OTLP_PROTOCOL: one line that says what to set, the run completes, nothing sent', async () => {
    const dir = tmpDir();
    const run = await cliAsync(dir, ['run', KNOBS, '--run-id', 'grpc', '--input', '{}'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported.*Set it to http\/protobuf/);
    assert.equal(r.spans.length, 0);
    const t = await cliAsync(dir, ['traces', 'grpc'], { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.equal(t.status, 2);
    assert.doesNotMatch(t.stderr, /no OTEL_EXPORTER_OTLP_ENDPOINT/, 'the endpoint is set: the protocol is what is wrong');
    assert.match(t.stderr, /LB_USAGE.*protocol.*OTEL_EXPORTER_OTLP_PROTOCOL=http\/protobuf/s);
    const fixed = await cliAsync(dir, ['traces', 'grpc', '--protocol', 'http/protobuf'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    assert.equal(fixed.status, 0, fixed.stderr);
  });
});
