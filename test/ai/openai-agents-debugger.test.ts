// The OpenAI Agents SDK example under the debug adapter: its paused run stops at the approval gate, shown at the
// user's logbookRunAgent line, and approving it there resumes the SDK's run from the kept state.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES } from '../helpers';
import { lineOf, sessionsPerTest } from '../dap/harness';

const AGENTS = path.join(EXAMPLES, 'openai-agents-support.ts');

function refunds(dir: string): string[] {
  const f = path.join(dir, 'shop.json');
  return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as { refunds: Array<{ reference: string }> }).refunds.map((r) => r.reference) : [];
}

describe('openai-agents: a paused Agents SDK run in the debugger', function () {
  this.timeout(180_000);
  const session = sessionsPerTest();

  it('stops at the gate of the refund the SDK paused at, at the logbookRunAgent line; approve resumes from the kept state', async () => {
    const s = await session();
    await s.launch({ program: AGENTS, input: { orderId: 'A-1002' }, runId: 'dbg-oai', env: { OPENAI_API_KEY: '' } }, { filters: ['approval'] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Approval gate');
    assert.equal(stop.description, 'approval gate: agents.approval approval:refund:dbg-oai:A-1002 waits for a person to approve or reject');
    assert.equal(stop.frames[0]?.line, lineOf(AGENTS, 'await logbookRunAgent(run'));
    const action = await s.scope('Action');
    assert.equal(action.type?.value, "'agents.approval'");
    const args = await s.vars(action.args!.ref);
    assert.equal(args.tool?.value, "'refund'");
    assert.deepEqual(refunds(s.dir), [], 'nothing refunded while it waits');
    const exited = s.exitCode();
    const r = await s.dc.customRequest('approve', {});
    assert.match(r.body.message, /approved: agents\.approval approval:refund:dbg-oai:A-1002/);
    assert.equal(await exited, 0);
    assert.deepEqual(refunds(s.dir), ['refund:dbg-oai:A-1002']);
    assert.match(s.text(), /run dbg-oai completed .*Resolved A-1002: refunded and emailed/);
  });
});
