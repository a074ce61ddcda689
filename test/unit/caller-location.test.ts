// The user's line of each run.step / run.do call, as the debugger shows it: the call itself, however the script makes it.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineAction, defineAgent, openStore, startRun, type PauseEvent, type RunApi } from '../../src/runtime';
import { tmpDir } from '../helpers';

const echo = defineAction({
  type: 'test.echo',
  version: 1,
  effect: 'idempotent',
  args: z.object({ n: z.number() }),
  key: (a) => `echo-${a.n}`,
  execute: (a) => a.n,
});

/** The line of this file that ends with `text` (a marker comment, say), once. */
function lineOf(text: string): number {
  const lines = fs.readFileSync(__filename, 'utf8').split('\n');
  const at = lines.flatMap((l, i) => (l.trimEnd().endsWith(text) ? [i + 1] : []));
  assert.equal(at.length, 1, text);
  return at[0]!;
}

function viaHelper(run: RunApi, n: number): Promise<number> {
  return run.do(echo, { n }); // HELPER
}

/**
 * A library's helper that calls run.do for the script (its frames are not the user's): written into a node_modules
 * folder, so the frame below run.do is a library's and the search goes on to the script's line that called it.
 */
const library = ((): { send: (run: RunApi, n: number) => Promise<number> } => {
  const dir = path.join(tmpDir('locations-lib'), 'node_modules', 'sender');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.js'), 'exports.send = (run, action, n) => run.do(action, { n });\n');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a library written at run time, loaded as one
  const lib = require(path.join(dir, 'index.js')) as { send: (run: RunApi, action: typeof echo, n: number) => Promise<number> };
  return { send: (run, n) => lib.send(run, echo, n) }; // LIBRARY
})();

const agent = defineAgent({
  name: 'locations',
  input: z.object({}),
  async run(run) {
    await run.step('direct', () => run.do(echo, { n: 1 })); // DIRECT
    await run.step('helper', () => viaHelper(run, 2)); // VIA
    await run.step('all', () => Promise.all([3, 4].map((n) => run.do(echo, { n })))); // ALL
    await run.step('library', () => library.send(run, 6)); // VIA-LIBRARY
    const act = run.do.bind(run);
    await run.step('detached', async () => {
      await act(echo, { n: 5 }); // DETACHED
    });
  },
});

describe('the source line of each step and action (captureLocations)', () => {
  it('is the line of the call in the script: direct, through a helper, inside map, through a library, through run.do bound', async () => {
    const store = openStore(path.join(tmpDir('locations'), 'j.db'));
    const seen: string[] = [];
    const at = (loc: { file: string; line: number } | undefined): string => (loc ? `${path.basename(loc.file)}:${loc.line}` : 'none');
    try {
      const outcome = await startRun(store, agent, {
        script: __filename,
        input: {},
        log: () => undefined,
        hooks: {
          captureLocations: true,
          pause: (ev: PauseEvent) => {
            if (ev.kind === 'step:before') seen.push(`step ${ev.step?.name ?? '?'} ${at(ev.step?.location)}`);
            if (ev.kind === 'action:before-start') seen.push(`action ${ev.action?.id ?? '?'} ${at(ev.action?.location)}`);
          },
        },
      });
      assert.equal(outcome.status, 'completed');
    } finally {
      store.close();
    }
    const file = path.basename(__filename);
    assert.deepEqual(seen, [
      `step direct ${file}:${lineOf('// DIRECT')}`,
      `action echo-1 ${file}:${lineOf('// DIRECT')}`,
      `step helper ${file}:${lineOf('// VIA')}`,
      `action echo-2 ${file}:${lineOf('// HELPER')}`,
      `step all ${file}:${lineOf('// ALL')}`,
      `action echo-3 ${file}:${lineOf('// ALL')}`,
      `action echo-4 ${file}:${lineOf('// ALL')}`,
      `step library ${file}:${lineOf('// VIA-LIBRARY')}`,
      `action echo-6 ${file}:${lineOf('// LIBRARY')}`,
      `step detached ${file}:${lineOf("run.step('detached', async () => {")}`,
      `action echo-5 ${file}:${lineOf('// DETACHED')}`,
    ]);
  });
});
