// Tool entries as users write them: execute gets verify's context (key, lease signal); unjournaled tools are warned of.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText, stepCountIs, tool, type ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import { ErrorCodes, defineAgent, openStore, startRun, type Store } from '../../src/runtime';
import { logbookModel, logbookTools, toolContext } from '../../src/ai';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const charge = tool({ description: 'Charge.', inputSchema: z.object({ amount: z.number() }), execute: ({ amount }) => ({ charged: amount }) });

/** Answers with one call of each named tool, then with text once the tools answered. */
function callsEach(...names: string[]) {
  return scriptedModel((c, i) =>
    c.prompt.some((m) => m.role === 'tool') ? [text('done')] : names.map((n, j) => toolCall(n, n === 'note' ? { what: 'x' } : { amount: 5 }, `c${i}-${j}`)),
  );
}

describe('ai: the context of a tool execution', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore(path.join(tmpDir(), 'journal.db'));
  });
  afterEach(() => store.close());

  it("gives an entry's execute, and the tool's own through toolContext(options), the journaled key and the lease signal", async () => {
    const seen: Array<{ who: string; key: string; signal: boolean; toolCallId: string; attempt: number }> = [];
    const own = tool({
      description: 'Charge, reading its key from the options.',
      inputSchema: z.object({ amount: z.number() }),
      execute: (input, options: ToolExecutionOptions) => {
        const ctx = toolContext(options);
        seen.push({ who: 'own', key: ctx.idempotencyKey, signal: ctx.signal instanceof AbortSignal, toolCallId: ctx.toolCallId, attempt: ctx.attempt });
        return { charged: input.amount };
      },
    });
    const { model } = callsEach('entry', 'own');
    const agent = defineAgent({
      name: 'ctx',
      input: z.object({}),
      run: (run) =>
        run.step('pay', async () => {
          const tools = logbookTools(run, {
            entry: {
              tool: charge,
              effect: 'non-idempotent',
              key: (a) => `charge:${run.id}:${a.amount}`,
              execute: (a, ctx) => {
                seen.push({
                  who: 'entry',
                  key: ctx.idempotencyKey,
                  signal: ctx.signal instanceof AbortSignal,
                  toolCallId: ctx.toolCallId,
                  attempt: ctx.attempt,
                });
                ctx.assertLease();
                return { charged: a.amount };
              },
            },
            own: { tool: own, effect: 'idempotent' },
          });
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false }),
            tools,
            prompt: 'pay',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
          return r.text;
        }),
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'k', log: () => undefined });
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    const ids = store.reader.actions('k').map((a) => a.id);
    assert.deepEqual(
      seen.map((s) => s.who),
      ['entry', 'own'],
    );
    const [entry, mine] = seen;
    assert.equal(entry?.key, 'charge:k:5', 'the business key the entry declared');
    assert.ok(ids.includes(entry.key), `the key execute got is the journaled action id (${ids.join(', ')})`);
    assert.ok(mine && ids.includes(mine.key) && mine.key.startsWith('tool:k:model:1.1:'), `the default key reaches the tool's own execute (${mine?.key})`);
    assert.ok(entry.signal && mine.signal, 'both got the abort signal');
    assert.equal(entry.toolCallId, 'c0-0');
    assert.equal(mine.attempt, 1);
  });

  it('refuses toolContext on options that no Logbook tool built', () => {
    assert.throws(
      () => toolContext({ toolCallId: 'x', messages: [] }),
      (e: unknown) => (e as { code?: string }).code === ErrorCodes.INVALID_ARGS,
    );
  });

  it('warns once per tool name when a model call offers a tool Logbook does not journal, and not for wrapped or declared ones', async () => {
    const lines: string[] = [];
    const { model } = callsEach('note');
    let noted = 0;
    const plain = tool({ description: 'Note.', inputSchema: z.object({ what: z.string() }), execute: () => String(++noted) });
    const client = tool({ description: 'Ask.', inputSchema: z.object({ q: z.string() }), outputSchema: z.string() });
    const agent = defineAgent({
      name: 'plain',
      input: z.object({}),
      run: (run) =>
        run.step('talk', async () => {
          const tools = { ...logbookTools(run, { charge: { tool: charge, effect: 'idempotent' } }), note: plain, ask: client };
          const r = await generateText({
            model: logbookModel(run, model, { reportReplays: false, unjournaledTools: ['ask'] }),
            tools,
            prompt: 'note it',
            stopWhen: stepCountIs(3),
            maxRetries: 0,
          });
          return r.text;
        }),
    });
    const out = await startRun(store, agent, { script: 'inline', input: {}, runId: 'p', log: (l) => lines.push(l) });
    assert.equal(out.status, 'completed', JSON.stringify(out.error));
    const warned = lines.filter((l) => l.includes('does not journal'));
    assert.equal(warned.length, 1, `one warning over two model calls: ${JSON.stringify(lines)}`);
    assert.match(warned[0] ?? '', /"note"/);
    assert.match(warned[0] ?? '', /model:1\.1/);
    assert.ok(!lines.some((l) => l.includes('"charge"') || l.includes('"ask"')), 'no warning for the wrapped tool nor the declared client tool');
  });
});
