// The OpenAI Agents SDK support agent under a real SIGKILL inside model calls and tool calls: resume does nothing twice.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, cli, cliJson, show, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'openai-agents-support.ts');
// Offline whatever the developer's shell holds: the scripted model, never a paid one.
const OFFLINE = { OPENAI_API_KEY: '' };

interface World {
  refunds: string[];
  emails: string[];
  billed: string[];
}

function world(dir: string): World {
  const read = (f: string): any => (fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {});
  return {
    refunds: (read('shop.json').refunds ?? []).map((r: { reference: string }) => r.reference),
    emails: (read('email-outbox.json').sent ?? []).map((s: { key: string }) => s.key),
    billed: read('agents-model.json').billed ?? [],
  };
}

/** The model calls of the journal, by id and status: each committed one exactly once. */
function modelCalls(dir: string, runId: string): Array<{ id: string; status: string; executions: number }> {
  return (show(dir, runId).actions as Array<{ id: string; type: string; status: string; executions: number }>).filter((a) => a.type.startsWith('model.'));
}

describe('openai-agents: the support agent under real SIGKILL', function () {
  this.timeout(240_000);
  let baseline: { output: unknown; world: World };

  before(() => {
    const dir = tmpDir('logbook-agents-');
    const r = cliJson(dir, ['run', SCRIPT, '--run-id', 'sup'], OFFLINE);
    assert.equal(r.status, 0, r.stderr);
    baseline = { output: r.json.output, world: world(dir) };
    assert.deepEqual(baseline.world.billed, ['generate', 'generate', 'generate', 'generate', 'stream'], 'four calls resolve the case, one streams the reply');
    assert.deepEqual(baseline.world.refunds, ['refund:sup:A-1001']);
    assert.equal(baseline.world.emails.length, 1);
  });

  /** Kills the run (by a crash point or from inside the example), resumes it, and checks nothing happened twice. */
  function crashAndResume(args: string[], env: Record<string, string>, extraBilled: number): void {
    const dir = tmpDir('logbook-agents-');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'sup', ...args], { ...OFFLINE, ...env });
    assert.equal(killed.signal, 'SIGKILL', `${killed.stdout}\n${killed.stderr}`);
    const committedBefore = modelCalls(dir, 'sup')
      .filter((c) => c.status === 'committed')
      .map((c) => c.id);
    const resumed = cliJson(dir, ['resume', 'sup'], OFFLINE);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(resumed.json.output, baseline.output);
    const after = world(dir);
    assert.deepEqual(after.refunds, baseline.world.refunds, 'refunded exactly once');
    assert.deepEqual(after.emails, baseline.world.emails, 'one email');
    // A call the kill caught in flight was paid and never committed: it is made once more; nothing committed is.
    assert.equal(after.billed.length, baseline.world.billed.length + extraBilled, `billed ${JSON.stringify(after.billed)}`);
    const calls = modelCalls(dir, 'sup');
    for (const id of committedBefore)
      assert.ok(
        calls.some((c) => c.id === id && c.status === 'committed' && c.executions === 1),
        `${id} was not made again`,
      );
    for (const a of show(dir, 'sup').actions as Array<{ effect: string; executions: number; id: string }>) {
      if (a.effect === 'non-idempotent') assert.ok(a.executions <= 1, `${a.id} executed ${a.executions} times`);
    }
  }

  for (const [point, extra] of [
    ['model.generate#3@after-start', 0],
    ['model.generate#3@after-execute', 1],
    ['model.stream#1@after-execute', 1],
    ['tool.refund#1@after-start', 0],
    ['tool.refund#1@after-execute', 0],
    ['tool.sendEmail#1@after-execute', 0],
  ] as const) {
    it(`killed at ${point}: the resume finishes with the same output and nothing twice`, () => crashAndResume(['--crash-at', point], {}, extra));
  }

  it('killed by SIGKILL in the middle of the refund (the processor refunded, the journal not told): verify finds it', () =>
    crashAndResume([], { AGENTS_DIE_IN: 'refund' }, 0));

  it('killed by SIGKILL in the middle of a model call: the call in flight is made again, the committed ones are not', () =>
    crashAndResume([], { AGENTS_DIE_IN: 'model' }, 1));

  it('killed by SIGKILL in the middle of the streamed reply: only the reply is bought again', () => crashAndResume([], { AGENTS_DIE_IN: 'stream' }, 1));

  it('a refund over 100 waits for `logbook approve`, then the run finishes with one refund', () => {
    const dir = tmpDir('logbook-agents-');
    const first = cliJson(dir, ['run', SCRIPT, '--run-id', 'big', '--input', '{"orderId":"A-1002"}'], OFFLINE);
    assert.equal(first.json.status, 'awaiting-approval', first.stderr);
    assert.deepEqual(world(dir).refunds, [], 'nothing refunded before the approval');
    const billedBefore = world(dir).billed.length;
    const approved = cliJson(dir, ['approve', 'big', 'approval:refund:big:A-1002'], OFFLINE);
    assert.equal(approved.status, 0, approved.stderr);
    assert.equal(approved.json.status ?? approved.json.run?.status, 'completed', JSON.stringify(approved.json));
    assert.deepEqual(world(dir).refunds, ['refund:big:A-1002']);
    // The resume starts from the SDK's paused state: the two calls before the pause are neither bought nor replayed.
    assert.equal(world(dir).billed.length, billedBefore + 3);
  });
});
