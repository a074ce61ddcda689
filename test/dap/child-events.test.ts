// The debugger on a parent whose child run waits for an event: the event-wait filter stops in the child, sendEvent
// delivers there and both runs complete; with the filter off the session ends waiting and names the child to send to;
// Kill Run while the child holds, then a resume session completes both with every effect once.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURES } from '../helpers';
import { sessionsPerTest } from './harness';

const INQUIRER = path.join(FIXTURES, 'child', 'inquirer.ts');

const ledger = (dir: string): string[] => {
  const f = path.join(dir, 'ledger.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).sort() : [];
};

function rows(db: string, sql: string, ...args: unknown[]): unknown[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(sql).all(...args);
  } finally {
    d.close();
  }
}

const notes = (id: string): string[] =>
  [`note.send note:${id}.child-2:heard`, `note.send note:${id}.child-2:ready`, `note.send note:${id}:close`, `note.send note:${id}:open`].sort();

describe('dap: a child run that waits for an event', function () {
  this.timeout(120_000);
  const session = sessionsPerTest();

  it('the event-wait filter stops in the child; sendEvent goes to the child, and both runs complete with it once', async () => {
    const s = await session();
    await s.launch({ program: INQUIRER, runId: 'dw' }, { filters: ['eventWait'] });
    const stop = await s.stopped();
    assert.equal(stop.text, 'Event wait');
    assert.match(stop.frames[1]?.name ?? '', /child run dw\.child-2/);
    const exited = s.exitCode();
    const r = await s.dc.customRequest('sendEvent', { name: 'reply', data: { text: 'from the debugger' } });
    assert.match(r.body.message, /to run dw\.child-2/);
    assert.equal(await exited, 0);
    assert.deepEqual(rows(s.db, 'SELECT id, status FROM runs ORDER BY id'), [
      { id: 'dw', status: 'completed' },
      { id: 'dw.child-2', status: 'completed' },
    ]);
    assert.deepEqual(rows(s.db, 'SELECT run_id, status FROM inbox'), [{ run_id: 'dw.child-2', status: 'delivered' }]);
    assert.deepEqual(ledger(s.dir), notes('dw'));
  });

  it('with the filter off the session ends waiting (exit 3), naming the child to send the event to', async () => {
    const s = await session();
    await s.launch({ program: INQUIRER, runId: 'dx' }, { filters: [] });
    assert.equal(await s.exitCode(), 3);
    assert.match(s.text('important'), /run dx waits for event "reply" in its child run dx\.child-2.*logbook send dx\.child-2 reply/);
    assert.deepEqual(rows(s.db, 'SELECT id, status FROM runs ORDER BY id'), [
      { id: 'dx', status: 'waiting' },
      { id: 'dx.child-2', status: 'waiting' },
    ]);
  });

  it('Kill Run while the child holds after its event; a resume session completes both, every effect once', async () => {
    const first = await session();
    await first.launch({ program: INQUIRER, runId: 'dk', input: { holdMs: 60_000 } }, { filters: ['eventWait'] });
    await first.stopped();
    await first.dc.customRequest('sendEvent', { name: 'reply', data: { text: 'k' } });
    for (let i = 0; i < 300 && !fs.existsSync(path.join(first.dir, 'listener-holding')); i++) await new Promise((r) => setTimeout(r, 100));
    const exited = first.exitCode();
    const killed = await first.dc.customRequest('kill');
    assert.equal(killed.body.signal, 'SIGKILL');
    assert.equal(await exited, 137);
    await first.disconnect();
    fs.rmSync(path.join(first.dir, 'listener-holding'));
    const second = await session(first.dir);
    await second.launch({ program: INQUIRER, resume: 'dk' }, { filters: [] });
    // The child's hold step is redone (its process died in it); the fixture holds in the child's first attempt only.
    assert.equal(await second.exitCode(), 0, second.text());
    assert.deepEqual(rows(second.db, 'SELECT id, status FROM runs ORDER BY id'), [
      { id: 'dk', status: 'completed' },
      { id: 'dk.child-2', status: 'completed' },
    ]);
    assert.deepEqual(rows(second.db, 'SELECT status FROM inbox'), [{ status: 'delivered' }]);
    assert.deepEqual(ledger(second.dir), notes('dk'));
  });
});
