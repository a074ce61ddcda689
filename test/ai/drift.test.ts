// The LB_MODEL_DRIFT diff shows the changed part of both sides, wherever the change sits in a prompt of any length.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText } from 'ai';
import { z } from 'zod';
import { ErrorCodes, defineAgent, openStore, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookModel } from '../../src/ai';
import { changedParts, diffCalls, type ModelCallArgs } from '../../src/ai/fingerprint';
import { show, tmpDir } from '../helpers';
import { lastMessage, scriptedModel, text } from './mock';

const quiet = { log: () => undefined };

const call = (system: string, extra: Record<string, unknown> = {}): ModelCallArgs => ({
  call: 'model:1.1',
  model: 'mock/m',
  params: {
    prompt: [
      { role: 'system', content: system },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ],
    ...extra,
  },
});

/** The text of a "was" / "is now" line after its label, without the ellipses of its cut ends. */
const shown = (line: string | undefined): string => (line ?? '').replace(/^prompt\[\d+\] (was|is now) +system: /, '').replace(/…/g, '');

describe('ai: the drift diff', () => {
  it('shows an edit at character 120 of a 135-character system prompt on both sides', () => {
    const before =
      `You are a support agent for a small shop. Be brief, be kind, and never promise a refund you cannot make. Refunds over $${'500'} need approval now.`.slice(
        0,
        135,
      );
    const now = `${before.slice(0, 120)}X${before.slice(121)}`;
    assert.equal(before.length, 135);
    const [was, is] = diffCalls(call(before), call(now));
    assert.notEqual(was?.replace(/^prompt\[0\] was +/, ''), is?.replace(/^prompt\[0\] is now +/, ''), 'the two lines differ');
    assert.ok(shown(was).includes(before.slice(110, 135)), was);
    assert.ok(shown(is).includes(now.slice(110, 135)), is);
    assert.match(was ?? '', /^prompt\[0\] was +system: …/);
  });

  it('windows the first difference at the start, the middle and the end of a 10 KB prompt, each side at most 100 characters plus ellipses', () => {
    const base = Array.from({ length: 10_240 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz '[i % 27]).join('');
    for (const at of [0, 5_000, 10_239]) {
      const now = `${base.slice(0, at)}#CHANGED#${base.slice(at + 1)}`;
      const [was, is] = diffCalls(call(base), call(now));
      const [b, n] = [shown(was), shown(is)];
      assert.ok(n.includes('#CHANGED#'), `at ${at}: ${is}`);
      assert.ok(b.includes(base.slice(Math.max(0, at - 10), at + 1)), `at ${at}: ${was}`);
      assert.ok(b.length <= 100 && n.length <= 100, `at ${at}: ${b.length}, ${n.length}`);
      assert.equal((was ?? '').includes('system: …'), at > 30, `at ${at}: an ellipsis marks a cut start`);
    }
  });

  it('shows a change in line breaks, a settings change deep in a long value, and never cuts a surrogate pair', () => {
    const [was, is] = diffCalls(call('line one\nline two'), call('line one\n\nline two'));
    assert.match(was ?? '', /line one\\nline two/);
    assert.match(is ?? '', /line one\\n\\nline two/);
    const long = (v: string) => ({ providerOptions: { gateway: { note: `${'n'.repeat(400)}${v}` } } });
    const [line] = diffCalls(call('s', long('old')), call('s', long('new')));
    assert.match(line ?? '', /^providerOptions: …n+old"}}.* → …n+new"}}/);
    const emoji = '😀'.repeat(80);
    for (const [x, y] of [changedParts(`${emoji}a`, `${emoji}b`), changedParts(`${'x'.repeat(29)}${emoji}`, `${'x'.repeat(29)}${emoji}!`)]) {
      for (const s of [x, y]) assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s), `no lone surrogate in ${s}`);
    }
  });

  describe('through a resume', () => {
    let store: Store;
    let dir: string;
    beforeEach(() => {
      dir = tmpDir('logbook-drift-');
      store = openStore(path.join(dir, 'journal.db'));
    });
    afterEach(() => store.close());

    it('puts the changed part in the error and in `show --json` details.changes', async () => {
      const { model } = scriptedModel((c) => [text(`echo: ${lastMessage(c)}`)]);
      const long = `You are a support agent. ${'Answer in one short paragraph. '.repeat(300)}The shop closes at 6pm.`;
      let system = long;
      let crash = true;
      const agent = defineAgent({
        name: 'drift-long',
        input: z.object({}),
        run: (run) =>
          run.step('answer', async () => {
            const r = await generateText({ model: logbookModel(run, model, { reportReplays: false }), system, prompt: 'When do you close?', maxRetries: 0 });
            if (crash) throw new Error('crash');
            return r.text;
          }),
      });
      await startRun(store, agent, { script: 'inline', input: {}, runId: 'dl', ...quiet });
      crash = false;
      system = long.replace('6pm', '8pm');
      const stopped = await resumeRun(store, agent, 'dl', quiet);
      assert.equal(stopped.error?.code, ErrorCodes.MODEL_DRIFT);
      assert.match(stopped.error?.message ?? '', /prompt\[0\] was +system: ….*closes at 6pm\.\n +prompt\[0\] is now +system: ….*closes at 8pm\./);
      const journal = show(dir, 'dl');
      const changes = journal.run.error.details.changes as string[];
      assert.ok(
        changes.some((l) => /^prompt\[0\] was .*6pm/.test(l)),
        JSON.stringify(changes),
      );
      assert.ok(
        changes.some((l) => /^prompt\[0\] is now .*8pm/.test(l)),
        JSON.stringify(changes),
      );
    });
  });
});
