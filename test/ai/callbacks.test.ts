// The AI SDK's onStepFinish after a real SIGKILL: it fires again for replayed steps, each telling it was replayed and by which call.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { streamText } from 'ai';
import { z } from 'zod';
import { defineAgent, openStore, resumeRun, startRun } from '../../src/runtime';
import { logbookModel, modelCallOf, type ModelCallInfo } from '../../src/ai';
import { FIXTURES, cli, cliJson, tmpDir } from '../helpers';
import { scriptedModel, text } from './mock';

const SCRIPT = path.join(FIXTURES, 'ai-callbacks.ts');

interface Fired {
  pid: number;
  step: number;
  call?: string;
  replayed?: boolean;
  text: string;
  tools: string[];
}

const fired = (dir: string): Fired[] =>
  fs
    .readFileSync(path.join(dir, 'callbacks.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Fired);

const CALLS = ['model:1.1', 'model:1.2', 'model:1.3', 'model:1.4', 'model:1.5'];
/** What a step said and did, without the process and replay flag that differ between attempts. */
const said = (f: Fired[]) => f.map(({ step, call, text, tools }) => ({ step, call, text, tools }));

describe('ai: onStepFinish across a real SIGKILL', function () {
  this.timeout(120_000);
  let baseline: Fired[];
  let output: unknown;

  before(() => {
    const dir = tmpDir('logbook-cb-');
    const r = cliJson(dir, ['run', SCRIPT, '--run-id', 'cb']);
    assert.equal(r.status, 0, r.stderr);
    output = r.json.output;
    baseline = fired(dir);
  });

  it('fires once per step in an uncrashed run, each step naming its journaled call, none replayed', () => {
    assert.deepEqual(
      baseline.map((f) => [f.call, f.replayed]),
      CALLS.map((c) => [c, false]),
    );
    assert.deepEqual(output, { text: 'counted to 4', steps: 5 });
  });

  it('killed before the 4th call: the resumed process fires for all five steps, the three answered from the journal marked replayed', () => {
    const dir = tmpDir('logbook-cb-');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'cb', '--crash-at', 'model.generate#4@after-start']);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const before = fired(dir);
    assert.deepEqual(
      before.map((f) => [f.call, f.replayed]),
      CALLS.slice(0, 3).map((c) => [c, false]),
    );
    const resumed = cliJson(dir, ['resume', 'cb']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(resumed.json.output, output);
    const after = fired(dir).slice(before.length);
    assert.equal(new Set(after.map((f) => f.pid)).size, 1);
    assert.notEqual(after[0]?.pid, before[0]?.pid);
    // The resumed process sees the whole conversation, as an uncrashed one does: state rebuilt in memory is complete.
    assert.deepEqual(said(after), said(baseline));
    assert.deepEqual(
      after.map((f) => f.replayed),
      [true, true, true, false, false],
    );
    // A callback that skips replayed steps saw each step once, over both processes.
    assert.deepEqual(
      [...before, ...after].filter((f) => !f.replayed).map((f) => f.call),
      CALLS,
    );
  });

  it('killed right after the 3rd call was journaled (its callback had not fired): replayed means answered from the journal, and the call key saves each step once', () => {
    const dir = tmpDir('logbook-cb-');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'cb', '--crash-at', 'model.generate#3@after-commit']);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const before = fired(dir);
    assert.deepEqual(
      before.map((f) => f.call),
      CALLS.slice(0, 2),
    );
    const resumed = cliJson(dir, ['resume', 'cb']);
    assert.equal(resumed.status, 0, resumed.stderr);
    const after = fired(dir).slice(before.length);
    assert.deepEqual(
      after.map((f) => [f.call, f.replayed]),
      CALLS.map((c, i) => [c, i < 3]),
    );
    // Step 3's answer came from the journal, though no callback saw it before the kill: skipping replayed steps would
    // lose it. Saved by its call key (an upsert), every step is saved exactly once, whichever process fired.
    const saved = new Map<string, Fired>();
    for (const f of [...before, ...after]) saved.set(f.call ?? '?', f);
    assert.deepEqual([...saved.keys()], CALLS);
    assert.deepEqual(said([...saved.values()]), said(baseline));
  });

  it('streamText: onStepFinish and onFinish tell a replayed stream by the same mark', async () => {
    const store = openStore(path.join(tmpDir('logbook-cb-'), 'journal.db'));
    const { model, calls } = scriptedModel(() => [text('your refund is on its way')]);
    const seen: Array<ModelCallInfo | undefined> = [];
    let crash = true;
    const agent = defineAgent({
      name: 'cb-stream',
      input: z.object({}),
      run: (run) =>
        run.step('reply', async () => {
          const s = streamText({
            model: logbookModel(run, model, { reportReplays: false }),
            prompt: 'reply',
            maxRetries: 0,
            onStepFinish: (st) => void seen.push(modelCallOf(st)),
            onFinish: (e) => void seen.push(modelCallOf(e)),
          });
          const t = await s.text;
          if (crash) throw new Error('crash after the stream');
          return t;
        }),
    });
    try {
      await startRun(store, agent, { script: 'inline', input: {}, runId: 's', log: () => undefined });
      crash = false;
      const out = await resumeRun(store, agent, 's', { log: () => undefined });
      assert.equal(out.output, 'your refund is on its way');
      assert.equal(calls(), 1);
      const live = { call: 'model:1.1', replayed: false };
      const replayed = { call: 'model:1.1', replayed: true };
      assert.deepEqual(seen, [live, live, replayed, replayed]);
    } finally {
      store.close();
    }
  });
});
