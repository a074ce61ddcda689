// `logbook compensate` in a fresh process on runs whose tools were built inside the run (action types made at run
// time): the journal says which had an inverse; those without are irreversible, those with one stop it, clearly.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES, FIXTURES, cli, cliJson, tmpDir } from '../helpers';

const SUPPORT = path.join(EXAMPLES, 'support-agent.ts');
const RUNTIME_TOOLS = path.join(FIXTURES, 'ai-runtime-tools.ts');

describe('ai: compensating a run whose tools were made at run time', function () {
  this.timeout(120_000);

  it('the support agent: its refund is undone, its MCP ticket (made at run time, no inverse) is irreversible', () => {
    const dir = tmpDir('logbook-ai-comp-');
    assert.equal(cli(dir, ['run', SUPPORT, '--run-id', 'sc']).status, 0);
    const r = cliJson(dir, ['compensate', 'sc']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json.status, 'compensated', JSON.stringify(r.json.error));
    assert.deepEqual(r.json.compensated.map((c: { type: string }) => c.type), ['tool.refund']);
    assert.ok(r.json.irreversible.some((i: { type: string }) => i.type === 'mcp.helpdesk.open_ticket'), JSON.stringify(r.json.irreversible));
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
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stdout, /tool\.book book:rti:12A of run rti was made at run time \(a tool built inside the run\) with an inverse, and this process never built it/);
    assert.match(r.stdout, /Define the tool's action at the top of the script with defineAction/);
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'effects.log'), 'utf8'), /unbook/);
    const show = cliJson(dir, ['show', 'rti']);
    assert.equal(show.json.actions.length, 2);
    assert.ok(show.json.actions.every((a: { compensation: string | null }) => a.compensation === null), 'nothing marked irreversible or compensated');
  });
});
