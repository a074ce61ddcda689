// Secrets in a real debugger session: every DAP message and every output captured, no planted secret in any of them.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Session, lineOf } from '../dap/harness';
import { FIXTURES, tmpDir } from '../helpers';
import { API_KEY, GITHUB_TOKEN, VAULT, assertNoSecret, journalBytes, writeEnvFile } from './plant';

const REPLIER = path.join(FIXTURES, 'events', 'replier.ts');

/** Expressions a developer types in the Debug Console at a stop: values, JSON of them, and an error that quotes one. */
const EXPRESSIONS = [
  'args',
  'args.headers',
  'args.body',
  'JSON.stringify(args)',
  'JSON.stringify({ wrapped: args.body })',
  '[args.body, args.headers]',
  'action',
  'action.error',
  'action.error.message',
  'action.error.stack',
  'error',
  'input',
  'run',
  'step',
  'result',
  '(() => { throw new Error(String(args.body)) })()',
  '(() => { throw new Error(JSON.stringify(args.headers)) })()',
  'action.idempotencyKey',
];

interface Captured {
  /** Every byte the adapter sent: responses, events, error messages. */
  readonly wire: Buffer[];
  /** Every variable shown, at every scope of every frame of every stop. */
  readonly variables: DebugProtocol.Variable[];
}

/** A session whose adapter holds OPENAI_API_KEY in its environment (as VS Code's does) and records every byte it sends. */
async function openSession(dir: string, captured: Captured): Promise<Session> {
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = API_KEY;
  let s: Session;
  try {
    s = new Session(dir);
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  }
  const client = s.dc as unknown as { handleData(data: Buffer): void };
  const handle = client.handleData.bind(client);
  client.handleData = (data: Buffer): void => {
    captured.wire.push(Buffer.from(data));
    handle(data);
  };
  return s.start();
}

async function expand(s: Session, captured: Captured, ref: number, indexed: number | undefined, depth: number): Promise<void> {
  if (!ref || depth > 6) return;
  const r = await s.dc.variablesRequest({ variablesReference: ref, ...(indexed ? { start: 0, count: Math.min(indexed, 100) } : {}) });
  for (const v of r.body.variables) {
    captured.variables.push(v);
    await expand(s, captured, v.variablesReference, v.indexedVariables, depth + 1);
  }
}

/** Looks at everything a stop offers: frames, every scope expanded, exception info, and the Debug Console. */
async function explore(s: Session, captured: Captured): Promise<void> {
  const threadId = s.threadId();
  const st = await s.dc.stackTraceRequest({ threadId });
  for (const frame of st.body.stackFrames) {
    const scopes = await s.dc.scopesRequest({ frameId: frame.id });
    for (const scope of scopes.body.scopes) await expand(s, captured, scope.variablesReference, scope.indexedVariables, 0);
  }
  await s.dc.exceptionInfoRequest({ threadId });
  for (const expression of EXPRESSIONS) {
    for (const context of ['repl', 'hover', 'watch']) {
      const r = await s.dc.evaluateRequest({ expression, context, frameId: st.body.stackFrames[0]?.id }).catch(() => undefined);
      if (r?.body.variablesReference) await expand(s, captured, r.body.variablesReference, r.body.indexedVariables, 1);
    }
  }
}

/** Explores every stop and continues, until the session ends; returns the exit code and the stops' descriptions. */
async function driveToEnd(
  s: Session,
  captured: Captured,
  atStop: (description: string) => 'stepIn' | void = () => undefined,
): Promise<{ code: number | undefined; stops: string[] }> {
  const stops: string[] = [];
  const exited = s.exitCode();
  for (;;) {
    const next = await Promise.race([s.next('stopped').then((e) => e as DebugProtocol.StoppedEvent), exited.then(() => undefined)]);
    if (!next) break;
    stops.push(next.body.description ?? next.body.reason);
    await explore(s, captured);
    if (atStop(next.body.description ?? '') === 'stepIn') await s.dc.stepInRequest({ threadId: s.threadId() });
    else await s.dc.continueRequest({ threadId: s.threadId() });
  }
  return { code: await exited, stops };
}

/** The DAP messages in the bytes the adapter sent (Content-Length framed). */
function parseWire(bytes: Buffer): DebugProtocol.ProtocolMessage[] {
  const out: DebugProtocol.ProtocolMessage[] = [];
  let at = 0;
  while (at < bytes.length) {
    const header = bytes.indexOf('\r\n\r\n', at);
    if (header < 0) break;
    const length = Number(/Content-Length: (\d+)/.exec(bytes.subarray(at, header).toString('latin1'))?.[1]);
    const body = header + 4;
    out.push(JSON.parse(bytes.subarray(body, body + length).toString('utf8')) as DebugProtocol.ProtocolMessage);
    at = body + length;
  }
  return out;
}

describe('secrets: a debugger session', function () {
  this.timeout(120_000);
  const opened: Session[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) {
      await s.close();
      s.assertNothingRunning();
    }
  });

  async function session(captured: Captured): Promise<Session> {
    const dir = tmpDir('logbook-secrets-dap-');
    writeEnvFile(path.join(dir, 'agent.env'));
    const s = await openSession(dir, captured);
    opened.push(s);
    return s;
  }

  describe("a careless run (secrets in args, results and the script's output), explored at every stop", () => {
    const captured: Captured = { wire: [], variables: [] };
    let s: Session;
    let stops: string[] = [];
    let messages: DebugProtocol.ProtocolMessage[] = [];

    before(async () => {
      s = await session(captured);
      await s.launch(
        { program: VAULT, runId: 'vault-dap', input: { careless: true }, envFile: 'agent.env', env: { GITHUB_TOKEN } },
        { lines: [{ file: VAULT, line: lineOf(VAULT, 'answers.push(await run.step(') }], functions: [{ name: 'model.ask' }], filters: ['actionFailed'] },
      );
      const end = await driveToEnd(s, captured);
      assert.equal(end.code, 0, s.text());
      stops = end.stops;
      messages = parseWire(Buffer.concat(captured.wire));
    });

    it("stopped at the failed action (its error quotes every secret), at the step's line and at each model.ask", () => {
      assert.ok(
        stops.some((d) => d.includes('quota.check') && d.includes('failed')),
        stops.join('\n'),
      );
      assert.ok(stops.filter((d) => d.includes('model.ask')).length >= 2, stops.join('\n'));
      assert.ok(
        captured.variables.length > 500 && messages.length > 500,
        `little was captured: ${captured.variables.length} variables, ${messages.length} messages`,
      );
    });

    it('shows no planted secret in Variables, at any scope of any frame, however long or quoted the secret is', () => {
      const answers = messages.filter((m) => m.type === 'response' && (m as DebugProtocol.Response).command === 'variables');
      assert.ok(answers.length > 50);
      assertNoSecret(JSON.stringify(answers), 'Variables');
    });

    it("shows no planted secret in the Debug Console's evaluations, hovers, watches and their errors", () => {
      const answers = messages.filter((m) => m.type === 'response' && (m as DebugProtocol.Response).command === 'evaluate');
      assert.ok(
        answers.some((a) => !(a as DebugProtocol.Response).success),
        'no evaluation failed: the thrown errors were not tried',
      );
      assertNoSecret(JSON.stringify(answers), 'an evaluation');
    });

    it('shows no planted secret in stack frames, stops, exception info, or the output (console.log, a logged error, the outcome)', () => {
      const rest = messages.filter((m) => !(m.type === 'response' && ['variables', 'evaluate'].includes((m as DebugProtocol.Response).command)));
      assertNoSecret(JSON.stringify(rest), 'a DAP message');
      assertNoSecret(Buffer.concat(captured.wire), 'the bytes the adapter sent');
      assertNoSecret(s.text(), 'the Debug Console');
      assert.match(s.text('stdout'), /calling the model with «secret»/);
      assert.match(s.text(), /run vault-dap completed/);
    });

    it('hides nothing useful: the idempotency key, and fields whose names merely contain KEY or AUTH, are shown', () => {
      const shown = (name: string): string[] => captured.variables.filter((v) => v.name === name).map((v) => v.value);
      assert.ok(shown('idempotencyKey').includes("'ask:vault-dap:hello'"), `idempotencyKey shown as ${shown('idempotencyKey').join(', ')}`);
      assert.ok(shown('author').includes("'ada'"), `author shown as ${shown('author').join(', ')}`);
      assert.ok(shown('monkey').includes("'banana'"), `monkey shown as ${shown('monkey').join(', ')}`);
      // A secret-named field is masked because its value is a secret, and only the secret part of it.
      assert.ok(shown('authorization').includes("'Bearer «secret»'"), `authorization shown as ${shown('authorization').join(', ')}`);
    });
  });

  it("journals none of a careful run's secrets (file and WAL, read mid-run), and shows none", async () => {
    const captured: Captured = { wire: [], variables: [] };
    const s = await session(captured);
    await s.launch(
      { program: VAULT, runId: 'vault-careful', envFile: 'agent.env', env: { GITHUB_TOKEN } },
      { functions: [{ name: 'model.ask' }], filters: ['actionFailed'] },
    );
    let midRun: Buffer | undefined;
    const { code, stops } = await driveToEnd(s, captured, (description) => {
      if (description.includes('model.ask') && description.includes('about to start')) return 'stepIn';
      // started is durable here, and so is all written before it: the WAL holds the failed action's error.
      if (description.includes('started is durable')) {
        assert.ok(fs.existsSync(`${s.db}-wal`), 'no WAL while the run holds the journal');
        midRun = journalBytes(s.db);
      }
      return undefined;
    });
    assert.equal(code, 0, s.text());
    assert.ok(midRun, `never stopped after model.ask started: ${stops.join('; ')}`);
    assert.ok(midRun.includes('401 Unauthorized: Incorrect API key provided: «secret»'), "the journal bytes do not hold the failed action's error");
    assertNoSecret(midRun, 'the journal (file and WAL, mid-run)');
    assertNoSecret(journalBytes(s.db), 'the journal (after the run)');
    assertNoSecret(Buffer.concat(captured.wire), 'a DAP message');
    assertNoSecret(s.text(), 'the Debug Console');
  });

  it('an event whose data holds a secret, sent from the debugger while the run waits: no stop, variable, evaluation or output shows it', async () => {
    const captured: Captured = { wire: [], variables: [] };
    const s = await session(captured);
    await s.launch(
      { program: REPLIER, runId: 'ev-secret', envFile: 'agent.env' },
      { lines: [{ file: REPLIER, line: lineOf(REPLIER, "run.step('answer'") }], filters: ['eventWait'] },
    );
    const wait = await s.stopped();
    assert.equal(wait.text, 'Event wait');
    await explore(s, captured);
    const sent = await s.dc.customRequest('sendEvent', { name: 'reply', data: { text: `key ${API_KEY}` }, id: `id-${API_KEY}`, then: 'stay' });
    assert.match(String(sent.body.message), /sent event "reply" \(id id-«secret»\) to run ev-secret/);
    await s.dc.continueRequest({ threadId: s.threadId() });
    const { code, stops } = await driveToEnd(s, captured);
    assert.equal(code, 0, s.text());
    assert.ok(
      stops.some((d) => d.includes('answer')),
      stops.join('\n'),
    );
    const shown = captured.variables.map((v) => v.value).join('\n');
    assert.match(shown, /key «secret»/, 'the reply is shown, its secret masked');
    // The script itself got the live value: masking is the debugger's view, not the run's data.
    assert.ok(fs.readFileSync(path.join(s.dir, 'ledger.log'), 'utf8').includes(API_KEY));
    assertNoSecret(Buffer.concat(captured.wire), 'a DAP message');
    assertNoSecret(s.text(), 'the Debug Console');
  });

  it('refuses a YAML-style line of an envFile naming the file, the line and the variable, never the key', async () => {
    const captured: Captured = { wire: [], variables: [] };
    const s = await session(captured);
    fs.writeFileSync(path.join(s.dir, 'yaml.env'), `# pasted from a YAML config\nREGION=eu\nOPENAI_API_KEY: ${API_KEY}\n`);
    const message = await s.launchFails({ program: VAULT, envFile: 'yaml.env' });
    assert.match(message, /yaml\.env:3: the line of OPENAI_API_KEY is not KEY=VALUE \(its value is not shown\)/);
    // The adapter started with the key in its environment; the file's own copy of it must not show either.
    assertNoSecret(Buffer.concat(captured.wire), 'a DAP message');
    assertNoSecret(message, 'the launch error');
    assert.deepEqual(s.runnerPids, []);
  });
});
