// Issue 19 case 6: one contract for text PostgreSQL cannot hold (U+0000) on both journals, a SQLite file and a real
// PostgreSQL server: refused in names, keys and notes before anything is journaled; JSON-escaped in args, results,
// input and output, where it reads back exactly.

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent } from '../../src/runtime/define';
import { recordApproval, resumeRun, startRun } from '../../src/runtime/engine';
import { ErrorCodes, LogbookError } from '../../src/runtime/errors';
import { openStore, type Store } from '../../src/runtime/store';
import { tmpDir } from '../helpers';
import { usePgServer } from '../pg/server';

const quiet = { log: () => undefined, script: 'inline' };
const NUL = '\u0000';

const echo = defineAction({
  type: 'nul.echo',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ text: z.string() }),
  key: (a, run) => `echo:${run.id}:${a.text}`,
  execute: (a) => ({ back: a.text }),
});

const keyed = defineAction({
  type: 'nul.keyed',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ text: z.string() }),
  key: (_a, run) => `keyed:${run.id}`,
  execute: (a) => ({ back: a.text, [a.text]: 1 }),
});

const gated = defineAction({
  type: 'nul.gated',
  version: 1,
  effect: 'idempotent',
  approval: true,
  args: z.object({}),
  key: (_a, run) => `gated:${run.id}`,
  execute: () => 1,
});

function cases(target: () => string): void {
  let store: Store;
  beforeEach(() => {
    store = openStore(target());
  });
  afterEach(() => store.close());

  const refused = (code: string | undefined, message: string | undefined, what: RegExp): void => {
    assert.equal(code, ErrorCodes.NUL_CHARACTER, message);
    assert.match(message ?? '', what);
    assert.match(message ?? '', /holds a NUL character \(\\u0000 at index \d+\).*Nothing was journaled/);
    assert.doesNotMatch(message ?? '', /PgError|22021|internal error/);
  };

  it('a NUL in a step name: LB_NUL_CHARACTER, no step journaled, the run failed as a script bug, the same on resume', async () => {
    const agent = defineAgent({ name: 'nul-step', input: z.object({}), onFailure: 'compensate', run: (run) => run.step(`label ${NUL} x`, () => 1) });
    const o = await startRun(store, agent, { ...quiet, input: {}, runId: 'ns' });
    assert.equal(o.status, 'failed');
    refused(o.error?.code, o.error?.message, /The name of step #1 \("label \\u0000 x"\)/);
    assert.equal(store.reader.stepCount('ns'), 0, 'no step row');
    assert.equal(store.reader.run('ns')?.status, 'failed', 'not compensated: a script bug');
    const again = await resumeRun(store, agent, 'ns', quiet);
    assert.equal(again.status, 'failed');
    assert.equal(again.error?.code, ErrorCodes.NUL_CHARACTER);
    assert.equal(store.reader.stepCount('ns'), 0);
  });

  it('a NUL in a key: LB_NUL_CHARACTER before `started`, no action journaled', async () => {
    const agent = defineAgent({ name: 'nul-key', input: z.object({}), run: (run) => run.step('send', () => run.do(echo, { text: `a${NUL}b` })) });
    const o = await startRun(store, agent, { ...quiet, input: {}, runId: 'nk' });
    assert.equal(o.status, 'failed');
    refused(o.error?.code, o.error?.message, /The key of nul\.echo \("echo:nk:a\\u0000b"\)/);
    assert.equal(store.reader.actionCount('nk'), 0, 'refused before started');
    assert.equal(store.reader.run('nk')?.status, 'failed');
  });

  it('a NUL in an action type, an agent name, a note kind or an approval note is refused too', async () => {
    const is = (e: unknown): boolean => e instanceof LogbookError && e.code === ErrorCodes.NUL_CHARACTER;
    assert.throws(() => defineAction({ type: `bad${NUL}`, version: 1, effect: 'idempotent', args: z.object({}), key: () => 'k', execute: () => 1 }), is);
    assert.throws(() => defineAgent({ name: `bad${NUL}`, input: z.object({}), run: () => 1 }), is);
    const noting = defineAgent({ name: 'nul-note', input: z.object({}), run: (run) => run.step('s', () => run.note(`k${NUL}`, { text: NUL })) });
    const o = await startRun(store, noting, { ...quiet, input: {}, runId: 'nn' });
    assert.equal(o.error?.code, ErrorCodes.NUL_CHARACTER, o.error?.message);
    assert.equal(store.reader.events('nn', 0, 1000).filter((e) => e.kind.startsWith('k')).length, 0);

    const gate = defineAgent({ name: 'nul-gate', input: z.object({}), run: (run) => run.step('ship', () => run.do(gated, {})) });
    assert.equal((await startRun(store, gate, { ...quiet, input: {}, runId: 'ng' })).status, 'awaiting-approval');
    const events = store.reader.eventCount('ng');
    assert.throws(() => recordApproval(store, 'ng', 'gated:ng', true, `ok${NUL}`), is);
    assert.equal(store.reader.eventCount('ng'), events, 'a refused approval changes nothing');
    assert.equal(store.reader.action('ng', 'gated:ng')?.approval, 'pending');
  });

  it('a NUL inside args, results, input and output is JSON-escaped and reads back exactly, on a replay too', async () => {
    let fail = true;
    const seen: unknown[] = [];
    const agent = defineAgent({
      name: 'nul-json',
      input: z.object({ text: z.string() }),
      run: async (run, input) => {
        seen.push(await run.step('first', () => run.do(keyed, { text: input.text })));
        seen.push(await run.step('second', () => ({ [input.text]: input.text })));
        await run.step('third', () => {
          if (fail) throw new Error('not yet');
        });
        return { out: input.text };
      },
    });
    const text = `a${NUL}b${NUL}`;
    assert.equal((await startRun(store, agent, { ...quiet, input: { text }, runId: 'nj' })).status, 'failed');
    fail = false;
    const o = await resumeRun(store, agent, 'nj', quiet);
    assert.equal(o.status, 'completed', o.error?.message);
    assert.deepEqual(o.output, { out: text });
    assert.equal(seen.length, 4);
    assert.deepEqual(seen[2], seen[0], 'the replayed action result is the same string, NUL included');
    assert.deepEqual(seen[3], seen[1]);
    assert.deepEqual(seen[0], { back: text, [text]: 1 });
    assert.deepEqual(JSON.parse(store.reader.action('nj', 'keyed:nj')?.args ?? 'null'), { text });
    assert.equal(store.reader.action('nj', 'keyed:nj')?.executions, 1, 'executed once');
  });
}

describe('text PostgreSQL cannot hold (NUL), one contract on both journals (issue 19 case 6)', function () {
  this.timeout(180_000);
  describe('on SQLite', () => {
    const dir = tmpDir('logbook-nul-');
    let n = 0;
    cases(() => path.join(dir, `j${++n}.db`));
  });
  describe('on PostgreSQL', () => {
    const pg = usePgServer();
    cases(() => pg.server.createDatabase());
  });
});
