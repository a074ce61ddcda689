// The adapter's pure parts: launch configuration, framing, wire values and previews, source scanning, stop policy.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { ZodMiniObject } from 'zod/mini';
import { Channel, FrameDecoder, encodeFrame } from '../../src/link/channel';
import { Evaluator } from '../../src/runner/evaluator';
import { parseHitCondition } from '../../src/link/hitCondition';
import { LaunchConfig, launchJsonSchema, parseLaunchConfig, resolveLaunch } from '../../src/adapter/launchConfig';
import { FromRunner } from '../../src/link/runnerProtocol';
import { actionLines, breakableLines, runFunctionLine } from '../../src/link/sourceScan';
import { StopPolicy, type Boundary, type BoundaryKind } from '../../src/runner/stopPolicy';
import { scopeEntries, scopeRoot } from '../../src/adapter/stopView';
import { children, preview } from '../../src/adapter/values';
import { toWire } from '../../src/link/wire';
import { EXAMPLES, FIXTURES, ROOT, tmpDir } from '../helpers';

describe('adapter: launch configuration', () => {
  it('generates a JSON Schema with every attribute, program required', () => {
    const js = launchJsonSchema();
    assert.deepEqual(js.required, ['program']);
    assert.deepEqual(Object.keys(js.properties).sort(), Object.keys(LaunchConfig.shape).sort());
    assert.deepEqual(js.properties.stopOnEntry, {
      default: false,
      description: 'Stop before the first step (for a resume: before the replay starts, with what it will do).',
      type: 'boolean',
    });
    assert.match(JSON.stringify(js.properties.decide), /"enum":\["happened","not-happened"\]/);
  });

  it('names the bad attribute and what it expected', () => {
    assert.throws(() => parseLaunchConfig({ program: 'a.ts', stopOnReplay: 1 }), /attribute "stopOnReplay": Invalid input: expected boolean, received number/);
    assert.throws(
      () => parseLaunchConfig({ program: 'a.ts', decide: { x: 'perhaps' } }),
      /attribute "decide\.x": Invalid option: expected one of "happened"\|"not-happened"/,
    );
    assert.throws(() => parseLaunchConfig({ program: 'a.ts', runId: 'has space' }), /attribute "runId": a run id uses letters/);
  });

  it('resolves paths against cwd and turns attributes into a job', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'agent.ts'), '');
    fs.writeFileSync(path.join(dir, 'in.json'), '{"recipients": 3}');
    const launch = resolveLaunch(parseLaunchConfig({ program: 'agent.ts', inputFile: 'in.json', cwd: dir, crashAt: 'email.send#2@after-start' }), '/', {});
    assert.equal(launch.runner.program, path.join(dir, 'agent.ts'));
    assert.equal(launch.runner.journal, path.join(dir, '.logbook', 'journal.db'));
    assert.deepEqual(launch.runner.job, { kind: 'launch', input: { recipients: 3 } });
    assert.deepEqual(launch.runner.crashAt, ['email.send#2@after-start']);
    assert.equal(launch.runtimeExecutable, 'node');
    const resume = resolveLaunch(parseLaunchConfig({ program: 'agent.ts', resume: 'latest', decide: { k: 'happened' } }), dir, { LOGBOOK_JOURNAL: 'other.db' });
    assert.deepEqual(resume.runner.job, { kind: 'resume', runId: 'latest' });
    assert.equal(resume.runner.journal, path.join(dir, 'other.db'));
    assert.deepEqual(resolveLaunch(parseLaunchConfig({ program: 'agent.ts', compensate: true, runId: 'r9' }), dir, {}).runner.job, {
      kind: 'compensate',
      runId: 'r9',
    });
    assert.throws(() => resolveLaunch(parseLaunchConfig({ program: 'agent.ts', compensate: true }), dir, {}), /"compensate" is true but no run is named/);
    assert.throws(() => resolveLaunch(parseLaunchConfig({ program: 'agent.ts', decide: { k: 'happened' } }), dir, {}), /"decide" is set for a new run/);
    assert.throws(() => resolveLaunch(parseLaunchConfig({ program: 'agent.ts', inputFile: 'nope.json' }), dir, {}), /attribute "inputFile": cannot read/);
  });
});

describe('adapter: framing', () => {
  it('splits frames across arbitrary chunk boundaries', () => {
    const bytes = Buffer.concat([encodeFrame({ a: 1 }), encodeFrame({ b: 'é'.repeat(1000) }), encodeFrame([])]);
    const dec = new FrameDecoder();
    const got: string[] = [];
    for (let i = 0; i < bytes.length; i += 7) got.push(...dec.push(bytes.subarray(i, i + 7)));
    assert.deepEqual(
      got.map((t) => JSON.parse(t)),
      [{ a: 1 }, { b: 'é'.repeat(1000) }, []],
    );
  });

  it('validates every message on receipt and reports the ones that do not match', async () => {
    const stream = new PassThrough();
    const got: unknown[] = [];
    const errors: string[] = [];
    new Channel(
      stream,
      FromRunner,
      (m) => got.push(m),
      (e) => errors.push(e.message),
      () => undefined,
    );
    stream.write(encodeFrame({ type: 'ready', pid: 1, node: 'v20', abi: '115', execPath: '/n' }));
    stream.write(encodeFrame({ type: 'stopped', reason: 3 }));
    stream.write(Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.from('{x')]));
    await new Promise((r) => setImmediate(r));
    assert.equal(got.length, 1);
    assert.match(errors[0] ?? '', /does not match the protocol \(reason: Invalid input: expected string, received number/);
    assert.match(errors[1] ?? '', /not JSON/);
  });
});

describe('adapter: values', () => {
  it('carries what JSON cannot across the process boundary and previews it like the JS debugger', () => {
    const cyc: Record<string, unknown> = { n: 1 };
    cyc.self = cyc;
    const w = toWire({
      u: undefined,
      big: 10n,
      nan: NaN,
      d: new Date(0),
      m: new Map([['k', 1]]),
      s: new Set([1]),
      e: new TypeError('bad'),
      f: function named() {},
      cyc,
    });
    const round = JSON.parse(JSON.stringify(w));
    const kids = Object.fromEntries(children(round)!.named);
    assert.equal(preview(kids.u), 'undefined');
    assert.equal(preview(kids.big), '10n');
    assert.equal(preview(kids.nan), 'NaN');
    assert.equal(preview(kids.d), '1970-01-01T00:00:00.000Z');
    assert.equal(preview(kids.m), "Map(1) {'k' => 1}");
    assert.equal(preview(kids.s), 'Set(1) {1}');
    assert.equal(preview(kids.e), 'TypeError: bad');
    assert.equal(preview(kids.f), 'ƒ named');
    assert.equal(preview(kids.cyc), '{n: 1, self: [Circular]}');
    assert.equal(children(Object.fromEntries(children(kids.cyc)!.named).self), undefined);
    assert.equal(preview(['a', [1], { x: 1 }]), "(3) ['a', Array(1), {…}]");
    assert.equal(preview("it's\n"), "'it\\'s\\n'");
  });
});

describe('adapter: source scanning', () => {
  const email = fs.readFileSync(path.join(EXAMPLES, 'email-campaign.ts'), 'utf8');
  it('finds run.step / run.do lines, the run function and action definitions', () => {
    assert.deepEqual(
      [...breakableLines(email)],
      [
        [25, 'step'],
        [27, 'both'],
      ],
    );
    assert.equal(runFunctionLine(email), 24);
    const order = fs.readFileSync(path.join(FIXTURES, 'dap', 'order.ts'), 'utf8');
    const charge = actionLines(order, 'card.charge');
    assert.ok(charge?.compensateLine && charge.compensateLine > charge.typeLine);
    assert.equal(actionLines(order, 'email.confirm')?.compensateLine, undefined);
    assert.deepEqual([...breakableLines('async run(r, input) {\n  await r.step("a", () => 1);\n  // run.step("no")\n  x.step(1)\n}')], [[2, 'step']]);
  });
});

describe('adapter: stop policy', () => {
  const evaluator = new Evaluator();
  const loc = (line: number) => ({ file: '/a.ts', line, column: 1 });
  const step = (idx: number, name = `s${idx}`, replayed = false): Boundary['step'] => ({ idx, name, replayed, redone: false, location: loc(10) });
  const action = (type: string, effect: 'non-idempotent' | 'idempotent' = 'idempotent'): NonNullable<Boundary['action']> => ({
    id: `${type}:1`,
    type,
    version: 1,
    effect,
    args: { to: 'x@example.com' },
    phase: 'before-start',
    status: 'new',
    executions: 0,
    stepIdx: 0,
    hasVerify: false,
    hasCompensate: false,
    approval: false,
    location: loc(11),
  });
  function policy(over: Partial<ConstructorParameters<typeof StopPolicy>[0]> = {}): StopPolicy {
    return new StopPolicy({
      stopOnEntry: false,
      stopOnReplay: false,
      sameFile: (a, b) => a === b,
      evaluate: (e, at) => evaluator.evaluate(e, { args: at.action?.args }),
      warn: () => undefined,
      ...over,
    });
  }

  it('calls a boundary quiet only where deciding it could not stop, whatever is armed or asked', () => {
    // Every kind, so a new one cannot be left out of the policy's arming.
    const everyKind: Record<BoundaryKind, true> = {
      'run:entry': true,
      'step:before': true,
      'step:after': true,
      'action:before-start': true,
      'action:after-start': true,
      'action:after-execute': true,
      'action:committed': true,
      'action:failed': true,
      'action:skipped': true,
      'action:reconcile': true,
      'action:reconciled': true,
      'action:approval': true,
      'action:decision': true,
      'event:wait': true,
      'compensate:before': true,
      'compensate:after-start': true,
      'compensate:after-execute': true,
      'compensate:committed': true,
      'child:start': true,
      'child:end': true,
      'run:end': true,
      'sleep:waiting': true,
      decision: true,
      'compensate:entry': true,
    };
    const kinds = Object.keys(everyKind) as BoundaryKind[];
    const at = (kind: BoundaryKind): Boundary => ({ kind, detail: 'd', step: step(0), action: { ...action('t', 'non-idempotent'), location: loc(10) } });
    const none = { lines: [], functions: [], filters: [] };
    const setups: Record<string, (p: StopPolicy) => void> = {
      'the default filters': () => undefined,
      'nothing armed': (p) => p.setBreakpoints(none),
      'every filter': (p) =>
        p.setBreakpoints({ ...none, filters: ['actionFailed', 'inDoubt', 'nonIdempotent', 'approval', 'compensation', 'sleep', 'eventWait'] }),
      'a line breakpoint': (p) => p.setBreakpoints({ ...none, lines: [{ id: 1, file: '/a.ts', line: 10 }] }),
      'a function breakpoint': (p) => p.setBreakpoints({ ...none, functions: [{ id: 1, name: '*' }] }),
      'a pause asked': (p) => {
        p.setBreakpoints(none);
        p.pauseRequested = true;
      },
      'stepping over': (p) => p.resumed('next', at('step:before')),
      'stepping in': (p) => p.resumed('stepIn', at('step:before')),
      'stepping out': (p) => p.resumed('stepOut', { ...at('action:after-start'), step: step(4) }),
      'a restart': (p) => p.stopAtNextNewStep(),
    };
    let quiet = 0;
    for (const [name, setup] of Object.entries(setups)) {
      for (const stopOnEntry of [false, true]) {
        for (const kind of kinds) {
          const p = policy({ stopOnEntry });
          setup(p);
          if (!p.quietAt(kind)) continue;
          quiet++;
          assert.equal(p.decide(at(kind)), undefined, `${name}, stopOnEntry ${stopOnEntry}: ${kind} was called quiet, and stops`);
        }
      }
    }
    // Not vacuous: with nothing armed most kinds are quiet, and where anything can stop none is.
    const bare = policy();
    bare.setBreakpoints(none);
    assert.ok(kinds.filter((k) => bare.quietAt(k)).length >= kinds.length - 2);
    assert.ok(quiet > 100);
    const paused = policy();
    paused.pauseRequested = true;
    assert.deepEqual(
      kinds.filter((k) => paused.quietAt(k)),
      [],
    );
  });

  it('counts hits only where the condition holds and stops on the nth', () => {
    const p = policy();
    p.setBreakpoints({
      lines: [{ id: 1, file: '/a.ts', line: 11, hitCondition: '3', condition: "args.to.endsWith('@example.com')" }],
      functions: [],
      filters: [],
    });
    const at: Boundary = { kind: 'action:before-start', detail: 'd', step: step(0), action: action('t') };
    assert.equal(p.decide(at), undefined);
    assert.equal(p.decide(at), undefined);
    assert.deepEqual(p.decide(at)?.hitBreakpointIds, [1]);
    assert.equal(p.decide(at), undefined);
  });

  it('a line holding both a step and its action stops once, at the step', () => {
    const p = policy();
    p.setBreakpoints({ lines: [{ id: 1, file: '/a.ts', line: 10 }], functions: [], filters: [] });
    assert.equal(p.decide({ kind: 'step:before', detail: 'd', step: step(0) })?.reason, 'breakpoint');
    assert.equal(p.decide({ kind: 'action:before-start', detail: 'd', step: step(0), action: { ...action('t'), location: loc(10) } }), undefined);
  });

  it('replayed steps never stop unless stopOnReplay; stepOut waits for the end of the step', () => {
    const p = policy();
    p.setBreakpoints({ lines: [{ id: 1, file: '/a.ts', line: 10 }], functions: [{ id: 2, name: 's*' }], filters: [] });
    assert.equal(p.decide({ kind: 'step:before', detail: 'd', step: step(0, 's0', true) }), undefined);
    const p2 = policy({ stopOnReplay: true });
    p2.setBreakpoints({ lines: [{ id: 1, file: '/a.ts', line: 10 }], functions: [], filters: [] });
    assert.equal(p2.decide({ kind: 'step:before', detail: 'd', step: step(0, 's0', true) })?.reason, 'breakpoint');
    const at: Boundary = { kind: 'action:after-start', detail: 'd', step: step(4), action: action('t') };
    p.resumed('stepOut', at);
    assert.equal(p.decide({ kind: 'action:committed', detail: 'd', step: step(4), action: action('t') }), undefined);
    assert.equal(p.decide({ kind: 'step:after', detail: 'done', step: step(4) })?.description, 'done');
  });

  it('exception filters take precedence and the non-idempotent one ignores idempotent actions', () => {
    const p = policy();
    p.setBreakpoints({ lines: [], functions: [{ id: 1, name: 't' }], filters: ['nonIdempotent'] });
    assert.equal(p.decide({ kind: 'action:before-start', detail: 'd', step: step(0), action: action('t', 'idempotent') })?.reason, 'function breakpoint');
    const stop = p.decide({ kind: 'action:before-start', detail: 'd', step: step(0), action: action('t', 'non-idempotent') });
    assert.equal(stop?.reason, 'exception');
    assert.equal(stop?.exceptionId, 'nonIdempotent');
  });

  it('function breakpoints match an action by its id too: model:* stops before every journaled model call', () => {
    const p = policy();
    p.setBreakpoints({ lines: [], functions: [{ id: 1, name: 'model:*' }], filters: [] });
    const call = { ...action('model.generate'), id: 'model:2.1' };
    assert.deepEqual(p.decide({ kind: 'action:before-start', detail: 'd', step: step(1), action: call })?.hitBreakpointIds, [1]);
    assert.equal(p.decide({ kind: 'action:before-start', detail: 'd', step: step(1), action: { ...action('tool.refund'), id: 'refund:r:A-1' } }), undefined);
  });

  it('shows a journaled model call in a few lines above its raw args and result', () => {
    const prompt = [
      { role: 'system', content: 'You are support.' },
      { role: 'user', content: [{ type: 'text', text: 'My kettle arrived broken.' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookupOrder', input: { orderId: 'A-1' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookupOrder', output: { type: 'json', value: { total: 42 } } }] },
    ];
    const a = {
      ...action('model.stream'),
      id: 'model:1.2',
      args: { call: 'model:1.2', model: 'openai/gpt-4.1', params: { prompt } },
      result: {
        parts: [
          { type: 'text-delta', id: 't', delta: 'Refunding ' },
          { type: 'text-delta', id: 't', delta: 'now.' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'refund', input: '{"orderId":"A-1"}' },
          { type: 'finish', usage: { inputTokens: { total: 120 }, outputTokens: { total: 9 } }, finishReason: { unified: 'tool-calls' } },
        ],
      },
    };
    const entries = scopeEntries('Action', { action: a } as never);
    assert.equal(entries[0]?.[0], 'model call');
    assert.deepEqual(entries[0]?.[1], {
      model: 'openai/gpt-4.1',
      lastMessages: [
        'user: My kettle arrived broken.',
        'assistant: lookupOrder({"orderId":"A-1"})',
        'tool: lookupOrder → {"type":"json","value":{"total":42}}',
      ],
      text: 'Refunding now.',
      toolCalls: ['refund({"orderId":"A-1"})'],
      tokens: { input: 120, output: 9 },
      finishReason: 'tool-calls',
    });
    assert.ok(
      entries.some(([k, v]) => k === 'args' && v === a.args),
      'the whole prompt stays in args',
    );
    assert.equal(scopeRoot('Action', 'model call'), undefined);
    assert.equal(scopeEntries('Action', { action: action('email.send') } as never)[0]?.[0], 'type');
  });

  it('reads hit conditions the way the JavaScript debugger writes them', () => {
    assert.equal(parseHitCondition('31')?.(31), true);
    assert.equal(parseHitCondition('31')?.(32), false);
    assert.equal(parseHitCondition('>= 2')?.(5), true);
    assert.equal(parseHitCondition('%10')?.(20), true);
    assert.equal(parseHitCondition('%10')?.(21), false);
    assert.equal(parseHitCondition('often'), undefined);
    assert.equal(parseHitCondition('%0'), undefined);
  });
});

// The schema module must stay importable without the runtime's store (the extension embeds it in package.json).
describe('adapter: launch schema module', () => {
  it('is plain zod/mini', () => {
    assert.ok(LaunchConfig instanceof ZodMiniObject);
  });

  it('loads no journal code: neither the runtime store nor better-sqlite3 (asked of a fresh process)', () => {
    const script = "require('./src/adapter/launchConfig'); process.stdout.write(JSON.stringify(Object.keys(require.cache)))";
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const loaded = JSON.parse(r.stdout) as string[];
    assert.ok(
      loaded.some((f) => f.endsWith(path.join('adapter', 'launchConfig.ts'))),
      'the module itself was loaded',
    );
    const journal = loaded.filter((f) => /better-sqlite3|[\\/]runtime[\\/]store[\\/]/.test(f));
    assert.deepEqual(journal, []);
  });
});
