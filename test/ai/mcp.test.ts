// MCP tools through agent-logbook/ai: annotations choose the effect, keys reach the server in _meta, tools/list replays.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { generateText, stepCountIs } from 'ai';
import { z } from 'zod';
import { defineAgent, openStore, recordApproval, resumeRun, startRun, type Store } from '../../src/runtime';
import { logbookMcpTools, logbookModel } from '../../src/ai';
import { connectHelpdesk, helpdesk } from '../../examples/providers/helpdesk';
import { tmpDir } from '../helpers';
import { scriptedModel, text, toolCall } from './mock';

const quiet = { log: () => undefined };

describe('ai: MCP tools', () => {
  let store: Store;
  let dir: string;
  const saved = process.env.LOGBOOK_STATE_DIR;
  beforeEach(() => {
    dir = tmpDir();
    process.env.LOGBOOK_STATE_DIR = dir;
    store = openStore(path.join(dir, 'journal.db'));
  });
  afterEach(() => {
    store.close();
    if (saved === undefined) delete process.env.LOGBOOK_STATE_DIR;
    else process.env.LOGBOOK_STATE_DIR = saved;
  });

  it('journals tools/list and each call with the effect its annotations imply, sends the key in _meta, gates destructive tools', async () => {
    const { model, calls } = scriptedModel((c, i) =>
      c.prompt.some((m) => m.role === 'tool')
        ? [text('all done')]
        : [
            toolCall('search_faq', { query: 'refund policy' }, `c${i}-1`),
            toolCall('open_ticket', { orderId: 'A-1', summary: 'broken' }, `c${i}-2`),
            toolCall('close_account', { email: 'ann@example.com' }, `c${i}-3`),
          ],
    );
    let lists = 0;
    let crash = true;
    const agent = defineAgent({
      name: 'mcp',
      input: z.object({}),
      run: async (run) => {
        const client = await connectHelpdesk();
        const listTools = client.listTools.bind(client);
        client.listTools = (...a: Parameters<typeof listTools>) => (lists++, listTools(...a));
        try {
          return await run.step('help', async () => {
            const tools = await logbookMcpTools(run, client, { tools: { open_ticket: { key: (a: { orderId: string }) => `ticket:${a.orderId}` } } });
            const r = await generateText({
              model: logbookModel(run, model, { reportReplays: false }),
              tools,
              prompt: 'help',
              stopWhen: stepCountIs(3),
              maxRetries: 0,
            });
            if (crash) throw new Error('crash');
            return r.text;
          });
        } finally {
          await client.close();
        }
      },
    });
    const first = await startRun(store, agent, { script: 'inline', input: {}, runId: 'm', ...quiet });
    assert.equal(first.status, 'awaiting-approval', JSON.stringify(first.error));
    assert.equal(first.waitingOn?.actionId, 'tool:m:model:1.1:c0-3');
    const list = store.reader.action('m', 'mcp:helpdesk:tools/list@1');
    assert.equal(list?.type, 'mcp.tools/list');
    assert.equal(list?.effect, 'read-only');
    const search = store.reader.action('m', 'tool:m:model:1.1:c0-1');
    assert.deepEqual([search?.type, search?.effect, search?.status], ['mcp.helpdesk.search_faq', 'read-only', 'committed']);
    const ticket = store.reader.action('m', 'ticket:A-1');
    assert.deepEqual([ticket?.type, ticket?.effect, ticket?.status], ['mcp.helpdesk.open_ticket', 'idempotent', 'committed']);
    assert.equal(store.reader.action('m', 'tool:m:model:1.1:c0-3')?.effect, 'non-idempotent');
    assert.equal(helpdesk.record().calls.close_account, undefined, 'the destructive tool waits for approval');
    assert.deepEqual(helpdesk.record().keys.sort(), ['ticket:A-1', 'tool:m:model:1.1:c0-1'], 'each key reached the server in _meta');

    recordApproval(store, 'm', 'tool:m:model:1.1:c0-3', true, null);
    const second = await resumeRun(store, agent, 'm', quiet);
    assert.equal(second.status, 'failed', 'crashed after the loop, on purpose');
    crash = false;
    const third = await resumeRun(store, agent, 'm', quiet);
    assert.equal(third.status, 'completed', JSON.stringify(third.error));
    assert.equal(third.output, 'all done');
    const record = helpdesk.record();
    assert.deepEqual(record.calls, { search_faq: 1, open_ticket: 1, close_account: 1 }, 'no tool called twice across three attempts');
    assert.deepEqual(record.closed, ['ann@example.com']);
    assert.equal(lists, 1, 'tools/list was answered from the journal on resume');
    assert.equal(calls(), 2, 'two model calls bought in all');
  });
});
