// The what-if fork: the support agent's run forked at its second model call with the answer edited ("no refund"):
// the fork replays what came before without buying it again, and does what the agent does with the other answer.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EXAMPLES, cli, cliJson, tmpDir } from '../helpers';

const SCRIPT = path.join(EXAMPLES, 'support-agent.ts');
const NO_REFUND = 'Order A-1001 is past its return window, so there is no refund; a replacement kettle is on its way instead.';

function world(dir: string): { refunds: string[]; emails: string[]; tickets: string[]; billed: string[] } {
  const read = (f: string): any => (fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {});
  return {
    refunds: (read('shop.json').refunds ?? []).map((r: { reference: string }) => r.reference),
    emails: (read('email-outbox.json').sent ?? []).map((s: { key: string }) => s.key),
    tickets: (read('helpdesk.json').tickets ?? []).map((t: { key: string }) => t.key),
    billed: (read('support-model.json').billed ?? []).map((b: { key: string }) => b.key),
  };
}

describe('ai: the what-if fork (logbook fork --edit-model-answer)', function () {
  this.timeout(180_000);
  let dir: string;
  let original: ReturnType<typeof world>;

  before(() => {
    dir = tmpDir('logbook-ai-fork-');
    const r = cliJson(dir, ['run', SCRIPT, '--run-id', 'orig']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.json.output.toolCalls, ['lookupOrder', 'search_faq', 'refund', 'sendEmail', 'open_ticket']);
    original = world(dir);
    assert.deepEqual(original.refunds, ['refund:orig:A-1001']);
    assert.equal(original.billed.length, 5);
  });

  it('answers model:1.2 with the edited answer: no refund, nothing of the original bought or done again', () => {
    const answer = path.join(dir, 'no-refund.json');
    fs.writeFileSync(answer, JSON.stringify({ content: [{ type: 'text', text: NO_REFUND }] }));
    const r = cliJson(dir, ['fork', 'orig', '--step', 'resolve', '--call', 'model:1.2', '--edit-model-answer', answer, '--run-id', 'whatif']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'completed');
    assert.deepEqual(r.json.forkedFrom, { runId: 'orig', step: 1, stepName: 'resolve', editedCall: 'model:1.2' });
    // The agent did something else with the other answer: no refund, no email, no ticket; its reply says so.
    assert.deepEqual(r.json.output.toolCalls, ['lookupOrder', 'search_faq']);
    assert.ok(r.json.output.reply.includes(NO_REFUND), r.json.output.reply);
    const after = world(dir);
    assert.deepEqual(after.refunds, original.refunds, 'the fork refunded nothing');
    assert.deepEqual(after.emails, original.emails);
    assert.deepEqual(after.tickets, original.tickets);
    // Bought anew: only the reply's call, in the fork's name; model:1.1 and the edited model:1.2 came from the journal.
    assert.deepEqual(after.billed, [...original.billed, 'whatif:model:2.1']);
    assert.match(r.stderr, /model:1\.1 \(support-scripted-1\) answered from the journal/);

    const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
    try {
      const rows = db.prepare("SELECT id, type, status, attempt, result FROM actions WHERE run_id = 'whatif' ORDER BY seq").all() as Array<{
        id: string;
        type: string;
        status: string;
        attempt: number;
        result: string;
      }>;
      assert.deepEqual(
        rows.map((a) => a.id),
        ['mcp:helpdesk:tools/list@1', 'model:1.1', 'tool:whatif:model:1.1:call_1_1', 'tool:whatif:model:1.1:call_1_2', 'model:1.2', 'model:2.1'],
      );
      const edited = rows.find((a) => a.id === 'model:1.2')!;
      assert.equal(edited.attempt, 0, "inherited, in the past of the fork's first attempt");
      assert.deepEqual(JSON.parse(edited.result).content, [{ type: 'text', text: NO_REFUND }]);
      assert.deepEqual(JSON.parse(edited.result).finishReason, { unified: 'stop' });
      const origCall = db.prepare("SELECT result FROM actions WHERE run_id = 'orig' AND id = 'model:1.2'").get() as { result: string };
      assert.equal(JSON.parse(origCall.result).content[0].toolName, 'refund', 'the origin keeps its own answer');
      const forkRow = db.prepare("SELECT forked_from, forked_at_step FROM runs WHERE id = 'whatif'").get();
      assert.deepEqual(forkRow, { forked_from: 'orig', forked_at_step: 0 });
    } finally {
      db.close();
    }
  });

  it("edits a streamed call: the fork's streamText reads the edited answer, and no model call is bought at all", () => {
    const before = world(dir);
    const reply = 'Hello Ann, your refund is on its way, and a voucher too.';
    const file = path.join(dir, 'reply.json');
    fs.writeFileSync(file, JSON.stringify([{ type: 'text', text: reply }]));
    const r = cliJson(dir, ['fork', 'orig', '--step', 'reply', '--edit-model-answer', file, '--run-id', 'stream-if']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.forkedFrom.editedCall, 'model:2.1');
    assert.equal(r.json.output.reply, reply);
    assert.deepEqual(r.json.output.toolCalls, ['lookupOrder', 'search_faq', 'refund', 'sendEmail', 'open_ticket'], 'step 1 replayed from its checkpoint');
    assert.deepEqual(world(dir), before, 'nothing bought, refunded, emailed or opened');
  });

  it('refuses an answer that does not fit the call, saying where, and writes nothing', () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(
      bad,
      JSON.stringify({ content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'wire_money', input: { amount: 1e6 } }, { type: 'image' }] }),
    );
    const r = cli(dir, ['fork', 'orig', '--step', '1', '--call', 'model:1.2', '--edit-model-answer', bad, '--run-id', 'bad']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /LB_INVALID_INPUT/);
    assert.match(r.stderr, /content\.0\.toolName: the model was offered no tool "wire_money" in this call \(it had .*refund/);
    assert.match(r.stderr, /content\.1\.type: "image" is not a part an answer can be edited to/);
    assert.equal(cli(dir, ['show', 'bad']).status, 2, 'no run was created');
  });

  it('refuses to edit a call that comes after an effect of its step, which the fork would do again', () => {
    const answer = path.join(dir, 'text.json');
    fs.writeFileSync(answer, JSON.stringify([{ type: 'text', text: 'done' }]));
    const r = cli(dir, ['fork', 'orig', '--step', 'resolve', '--call', 'model:1.3', '--edit-model-answer', answer]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /model:1\.3 comes after tool\.refund refund:orig:A-1001 in step "resolve"/);
    assert.match(r.stderr, /Edit an earlier model call of the step \(model:1\.1, model:1\.2\)/);
  });
});
