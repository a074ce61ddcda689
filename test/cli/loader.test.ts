// A script outside the repository, with no node_modules above it, reaches `agent-logbook` only through the loader.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliJson, ROOT, show, tmpDir } from '../helpers';

const SCRIPT = `// An agent with no dependencies of its own: even its schema is a hand-written Standard Schema.
import { defineAction, defineAgent } from 'agent-logbook';

const anything = { '~standard': { version: 1, vendor: 'by-hand', validate: (value: unknown) => ({ value }) } };

const note = defineAction({
  type: 'note.write',
  version: 1,
  effect: 'idempotent',
  args: anything,
  key: (_a, run) => \`note:\${run.id}\`,
  execute: (a) => ({ wrote: (a as { text: string }).text }),
});

export default defineAgent({
  name: 'outside',
  input: anything,
  async run(run, input) {
    return run.step('write', () => run.do(note, { text: (input as { text: string }).text }));
  },
});
`;

describe('cli: a script outside the repository', function () {
  this.timeout(120_000);

  it('runs with agent-logbook resolved by the loader, not by node_modules', () => {
    const dir = tmpDir('logbook-outside-');
    assert.ok(path.relative(ROOT, dir).startsWith('..'), 'the script lives outside the repository');
    const script = path.join(dir, 'agent.ts');
    fs.writeFileSync(script, SCRIPT);
    // Asked of a plain Node (this test process resolves agent-logbook through tsconfig paths).
    const plain = spawnSync(process.execPath, ['-e', "require.resolve('agent-logbook')"], { cwd: dir, encoding: 'utf8' });
    assert.notEqual(plain.status, 0, 'Node alone cannot resolve agent-logbook from there');
    assert.match(plain.stderr, /Cannot find module 'agent-logbook'/);
    const r = cliJson(dir, ['run', script, '--run-id', 'o', '--input', '{"text":"hi"}']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json.output, { wrote: 'hi' });
    assert.equal(show(dir, 'o').actions[0].status, 'committed');
  });
});
