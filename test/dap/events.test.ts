// run.waitFor under the debugger: the event-wait filter stops there like an approval gate, the sendEvent request
// delivers an event (and the run goes on with it), a waitFor line takes a breakpoint, and with the filter off the run
// stops waiting (exit 3) and says how to send it.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURES } from '../helpers';
import { Session, lineOf, sessionsPerTest } from './harness';

const REPLIER = path.join(FIXTURES, 'events', 'replier.ts');

const ledger = (dir: string): string[] => {
  const f = path.join(dir, 'ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean) : [];
};

function inbox(db: string, runId: string): Array<{ name: string; status: string; sent_by: string }> {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT name, status, sent_by FROM inbox WHERE run_id = ? ORDER BY seq').all(runId) as never;
  } finally {
    d.close();
  }
}

describe('dap: run.waitFor and sending events', function () {
  this.timeout(120_000);
  const session = sessionsPerTest();
  let s: Session;
  beforeEach(async () => {
    s = await session();
  });

  it('the event-wait filter stops at the wait with no event; sendEvent delivers one and the run completes with it', async () => {
    await s.launch({ program: REPLIER, runId: 'ev-send' }, { filters: ['eventWait'] });
    const stop = await s.stopped();
    assert.equal(stop.reason, 'exception');
    assert.equal(stop.text, 'Event wait');
    assert.match(stop.description, /^run\.waitFor\("reply"\) has no event yet: send one now/);
    assert.equal(stop.frames[0]?.line, lineOf(REPLIER, 'run.waitFor('));
    // A bad request changes nothing: a reserved name is refused by the runtime's own check.
    await assert.rejects(s.dc.customRequest('sendEvent', { name: 'logbook:approval:x', then: 'stay' }), /event names that start with "logbook:"/);
    await assert.rejects(s.dc.customRequest('sendEvent', { data: {} }), /Bad arguments for sendEvent: name/);
    const exited = s.exitCode();
    const r = await s.dc.customRequest('sendEvent', { name: 'reply', data: { text: 'from the debugger' }, id: 'dbg-1' });
    assert.equal(
      r.body.message,
      'sent event "reply" (id dbg-1) to run ev-send: it is running, and its session takes the event when it reaches run.waitFor("reply") (at once if it waits there now)',
    );
    assert.equal(await exited, 0);
    assert.match(s.text(), /run ev-send completed .*"replies":\["from the debugger"\]/);
    assert.deepEqual(ledger(s.dir), ['answer:ev-send from the debugger']);
    const rows = inbox(s.db, 'ev-send');
    assert.deepEqual(
      rows.map((e) => [e.name, e.status]),
      [['reply', 'delivered']],
    );
    assert.match(rows[0]?.sent_by ?? '', /debugger/);
  });

  it('a line breakpoint on run.waitFor is verified and stops before the wait, as at a step', async () => {
    const line = lineOf(REPLIER, 'run.waitFor(');
    await s.launch({ program: REPLIER, runId: 'ev-line' }, { lines: [{ file: REPLIER, line }], filters: [] });
    assert.equal(s.setBreakpointResults[0]?.verified, true);
    const stop = await s.stopped();
    assert.equal(stop.reason, 'breakpoint');
    assert.equal(stop.description, 'breakpoint: step "reply" is about to run');
    assert.equal(stop.frames[0]?.line, line);
    // Sent while stopped before the wait: it is kept, and the wait takes it at once.
    const r = await s.dc.customRequest('sendEvent', { name: 'reply', data: { text: 'early' }, then: 'stay' });
    assert.match(r.body.message, /sent event "reply" .* to run ev-line/);
    assert.equal(await s.runToEnd(), 0);
    assert.deepEqual(ledger(s.dir), ['answer:ev-line early']);
  });

  it('with the filter off the run stops waiting (exit 3), released, and says how to send the event', async () => {
    await s.launch({ program: REPLIER, runId: 'ev-off' }, { filters: [] });
    assert.equal(await s.exitCode(), 3);
    assert.match(
      s.text('important'),
      /run ev-off waits for event "reply", released \(no process holds it\)\. Send it \("Send Event…" on the run in the Agent Logbook Runs view, or `logbook send ev-off reply --data JSON`\)/,
    );
    assert.deepEqual(inbox(s.db, 'ev-off'), []);
  });
});
