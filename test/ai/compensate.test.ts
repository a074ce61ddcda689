// `logbook compensate` in a fresh process on runs whose tools were built inside the run (action types made at run
// time): the journal says which had an inverse; those without are irreversible, those with one stop it, clearly.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EXAMPLES, FIXTURES, cli, cliJson, tmpDir } from '../helpers';

const SUPPORT = path.join(EXAMPLES, 'support-agent.ts');
const RUNTIME_TOOLS = path.join(FIXTURES, 'ai-runtime-tools.ts');

/** The run's row and its events, as the journal file holds them. */
function journaled(dir: string, runId: string): { run: unknown; events: unknown[] } {
  const db = new Database(path.join(dir, 'journal.db'), { readonly: true });
  try {
    return {
      run: db.prepare('SELECT * FROM runs WHERE id = ?').get(runId),
      events: db.prepare('SELECT * FROM events WHERE run_id = ? ORDER BY seq').all(runId),
    };
  } finally {
    db.close();
  }
}

describe('ai: compensating a run whose tools were made at run time', function () {
  this.timeout(120_000);

  it('the support agent: its refund is undone, its MCP ticket (made at run time, no inverse) is irreversible', () => {
    const dir = tmpDir('logbook-ai-comp-');
    assert.equal(cli(dir, ['run', SUPPORT, '--run-id', 'sc']).status, 0);
    const r = cliJson(dir, ['compensate', 'sc']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'compensated', JSON.stringify(r.json.error));
    assert.deepEqual(
      r.json.compensated.map((c: { type: string }) => c.type),
      ['tool.refund'],
    );
    assert.ok(
      r.json.irreversible.some((i: { type: string }) => i.type === 'mcp.helpdesk.open_ticket'),
      JSON.stringify(r.json.irreversible),
    );
    const shop = JSON.parse(fs.readFileSync(path.join(dir, 'shop.json'), 'utf8'));
    assert.deepEqual(shop.reversals, ['re_1']);
  });

  it('tools without an inverse: the compensation finishes and reports them irreversible', () => {
    const dir = tmpDir('logbook-ai-comp-');
    assert.equal(cli(dir, ['run', RUNTIME_TOOLS, '--run-id', 'rt']).status, 0);
    const r = cliJson(dir, ['compensate', 'rt']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'compensated');
    assert.deepEqual(r.json.irreversible.map((i: { type: string }) => i.type).sort(), ['tool.book', 'tool.hold']);
  });

  it('a tool whose inverse existed only inside the run: a clear error before any inverse runs, and nothing undone', () => {
    const dir = tmpDir('logbook-ai-comp-');
    assert.equal(cli(dir, ['run', RUNTIME_TOOLS, '--run-id', 'rti', '--input', '{"inverse":true}']).status, 0);
    const r = cli(dir, ['compensate', 'rti']);
    assert.equal(r.status, 2, r.stdout); // refused, like a script that cannot be used: nothing ran
    assert.match(
      r.stderr,
      /tool\.book book:rti:12A of run rti was made at run time \(a tool built inside the run\) with an inverse, and this process never built it/,
    );
    assert.match(r.stderr, /Define the tool's action at the top of the script with defineAction/);
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'effects.log'), 'utf8'), /unbook/);
    const show = cliJson(dir, ['show', 'rti']);
    assert.equal(show.json.actions.length, 2);
    assert.ok(
      show.json.actions.every((a: { compensation: string | null }) => a.compensation === null),
      'nothing marked irreversible or compensated',
    );
  });

  it('that refusal changes nothing: a failed run keeps its status, attempt and events, and resumes to completion', () => {
    const dir = tmpDir('logbook-ai-comp-');
    const first = cliJson(dir, ['run', RUNTIME_TOOLS, '--run-id', 'rtf', '--input', '{"inverse":true,"confirm":true}', '--json']);
    assert.equal(first.json.status, 'failed', first.stderr);
    const before = journaled(dir, 'rtf');
    const r = cli(dir, ['compensate', 'rtf']);
    assert.deepEqual(journaled(dir, 'rtf'), before, 'no attempt, no event, no status: the run is as it was');
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, /LB_UNKNOWN_ACTION_TYPE.*tool\.book book:rtf:12A of run rtf was made at run time/);
    fs.writeFileSync(path.join(dir, 'confirmed'), '');
    const resumed = cliJson(dir, ['resume', 'rtf', '--json']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal(resumed.json.status, 'completed');
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'effects.log'), 'utf8'), /unbook/);
  });
});
