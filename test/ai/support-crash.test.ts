// The support agent (AI SDK + MCP) killed by a real SIGKILL inside model calls and tool calls: resume does nothing twice.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { cli, cliJson, EXAMPLES, foldRows, show, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'support-agent.ts');

interface World {
  refunds: string[];
  emails: string[];
  tickets: string[];
  billed: string[];
  modelCacheHits: number;
}

function world(dir: string): World {
  const read = (f: string): any => (fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {});
  return {
    refunds: (read('shop.json').refunds ?? []).map((r: { reference: string }) => r.reference),
    emails: (read('email-outbox.json').sent ?? []).map((s: { key: string }) => s.key),
    tickets: (read('helpdesk.json').tickets ?? []).map((t: { key: string }) => t.key),
    billed: (read('support-model.json').billed ?? []).map((b: { key: string }) => b.key),
    modelCacheHits: read('support-model.json').cacheHits ?? 0,
  };
}

describe('ai: the support agent under real SIGKILL', function () {
  this.timeout(240_000);
  let baseline: { output: unknown; world: World };

  before(() => {
    const dir = tmpDir('logbook-ai-');
    const r = cliJson(dir, ['run', SCRIPT, '--run-id', 'sup']);
    assert.equal(r.status, 0, r.stderr);
    baseline = { output: r.json.output, world: world(dir) };
    assert.equal(baseline.world.billed.length, 5, 'four model calls resolve the case, one streams the reply');
    assert.deepEqual(baseline.world.refunds, ['refund:sup:A-1001']);
  });

  const points = [
    'model.generate#2@after-start',
    'model.generate#2@after-execute',
    'model.stream#1@after-start',
    'model.stream#1@after-execute',
    'tool.lookupOrder#1@after-execute',
    'tool.refund#1@after-start',
    'tool.refund#1@after-execute',
    'tool.sendEmail#1@after-execute',
    'mcp.helpdesk.open_ticket#1@after-execute',
  ];
  for (const point of points) {
    it(`killed at ${point}: the resume finishes with the same reply and nothing twice`, () => {
      const dir = tmpDir('logbook-ai-');
      const killed = cli(dir, ['run', SCRIPT, '--run-id', 'sup', '--crash-at', point]);
      assert.equal(killed.signal, 'SIGKILL', `${killed.stdout}\n${killed.stderr}`);
      const before = world(dir);
      const resumed = cliJson(dir, ['resume', 'sup']);
      assert.equal(resumed.status, 0, resumed.stderr);
      assert.deepEqual(resumed.json.output, baseline.output);
      const after = world(dir);
      assert.deepEqual(after.refunds, baseline.world.refunds, 'refunded exactly once');
      assert.deepEqual(after.emails, baseline.world.emails, 'one email');
      assert.deepEqual(after.tickets, baseline.world.tickets, 'one ticket');
      assert.deepEqual(after.billed, baseline.world.billed, 'no model call bought twice');
      const journal = show(dir, 'sup');
      for (const a of journal.actions as Array<{ effect: string; executions: number; id: string }>) {
        if (a.effect === 'non-idempotent') assert.ok(a.executions <= 1, `${a.id} executed ${a.executions} times`);
      }
      // The step killed in the middle is redone: its model calls committed before the kill are answered from the
      // journal (the reply step's stream is its first call, so a kill there has nothing of it to replay).
      if (!point.startsWith('model.stream')) {
        assert.match(resumed.stderr, /logbook\/ai: model:1\.1 \(support-scripted-1\) answered from the journal: \d+ tokens not bought again, \d+\.\d{4} saved/);
        assert.match(resumed.stderr, /answered \d+ model call\(s\) from the journal: \d+ tokens, \$\d+\.\d{4} not spent again/);
      }
      assert.ok(before.billed.length <= after.billed.length);
    });
  }

  it('killed mid-stream: what the model had said is in the journal, and the resume does not pay for the reply twice', () => {
    const dir = tmpDir('logbook-ai-');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'sup'], { SUPPORT_MODEL_DIE_AFTER_DELTAS: '4', SUPPORT_MODEL_CHUNK_DELAY_MS: '120' });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    foldRows(path.join(dir, 'journal.db'));
    const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
    const notes = db.prepare("SELECT data FROM events WHERE run_id = 'sup' AND kind = 'model.partial' ORDER BY seq").all() as Array<{ data: string }>;
    const stream = db.prepare("SELECT status FROM actions WHERE run_id = 'sup' AND id = 'model:2.1'").get() as { status: string } | undefined;
    db.close();
    assert.equal(stream?.status, 'started', 'the streamed call is in doubt');
    assert.ok(notes.length > 0, 'partial output was noted');
    const last = JSON.parse(notes[notes.length - 1]!.data) as { call: string; text: string };
    assert.equal(last.call, 'model:2.1');
    assert.ok(last.text.startsWith('Hi! Refunded'), last.text);
    const resumed = cliJson(dir, ['resume', 'sup']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(resumed.json.output, baseline.output);
    assert.deepEqual(world(dir).billed, baseline.world.billed, 'the re-made stream was answered from the gateway by its key, unbilled');
  });

  it('a changed system prompt stops the resume with a diff, before any new effect', () => {
    const dir = tmpDir('logbook-ai-');
    const killed = cli(dir, ['run', SCRIPT, '--run-id', 'sup', '--crash-at', 'tool.sendEmail#1@after-start']);
    assert.equal(killed.signal, 'SIGKILL');
    const before = world(dir);
    const drift = cli(dir, ['resume', 'sup'], { SUPPORT_AGENT_SYSTEM: 'You are a terse support agent.' });
    assert.equal(drift.status, 1, drift.stdout + drift.stderr);
    const out = drift.stdout + drift.stderr;
    assert.match(out, /LB_MODEL_DRIFT/);
    assert.match(out, /Model call model:1\.1 \(call 1 of step "resolve"\) no longer matches the journal/);
    assert.match(out, /prompt\[0\] was +system: You are a support agent for a small shop/);
    assert.match(out, /prompt\[0\] is now +system: You are a terse support agent\./);
    assert.deepEqual(world(dir), before, 'nothing new reached any provider');
    const resumed = cliJson(dir, ['resume', 'sup']);
    assert.equal(resumed.status, 0, 'with the prompt restored the run finishes');
    assert.deepEqual(resumed.json.output, baseline.output);
  });
});
