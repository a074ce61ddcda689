// A run waiting in run.waitFor, in the sidebar: it shows as waiting (which event), offers "Send Event…", and the command
// sends the event through the CLI, which continues the run to completion.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXT_ID, ROOT, api, cli, runItem, until, workspace } from './helpers';

describe('events: Send Event… on a waiting run', () => {
  it('a waiting run shows which event it waits for and offers Send Event…, which delivers it and the run completes', async () => {
    const a = await api();
    const script = path.join(workspace(), 'replier.ts');
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'events', 'replier.ts'), script);
    const r = cli(['run', script, '--run-id', 'ev-side']);
    assert.equal(r.status, 3, r.stdout + r.stderr);
    const run = await until('the run shown waiting', async () => {
      const x = await runItem(a, 'ev-side');
      return x && /^waiting/.test(String(x.item.description)) ? x : undefined;
    });
    assert.match(run.item.contextValue ?? '', /\bwaiting\b/);
    const tip = run.item.tooltip instanceof vscode.MarkdownString ? run.item.tooltip.value : String(run.item.tooltip);
    assert.match(tip, /Waits for event `reply`/);
    // The manifest offers the command on exactly such an item.
    const menus = (vscode.extensions.getExtension(EXT_ID)?.packageJSON as { contributes: { menus: Record<string, Array<{ command: string; when?: string }>> } })
      .contributes.menus['view/item/context'];
    assert.ok(
      menus?.some((m) => m.command === 'logbook.sendEvent' && (m.when ?? '').includes('viewItem =~ /\\bwaiting\\b/')),
      JSON.stringify(menus?.filter((m) => m.command === 'logbook.sendEvent')),
    );

    const sent = await vscode.commands.executeCommand<{
      code: number;
      json: { expect: string; outcome: { status: string; output: unknown } };
      stdout: string;
      stderr: string;
    }>('logbook.sendEvent', run.node, { name: 'reply', data: '{"text":"from the sidebar"}' });
    assert.equal(sent.code, 0, `${sent.stdout}\n${sent.stderr}`);
    assert.equal(sent.json.expect, 'waiting-now');
    assert.equal(sent.json.outcome.status, 'completed');
    assert.deepEqual(sent.json.outcome.output, { replies: ['from the sidebar'], sent: { answered: 'from the sidebar' } });
    const done = await until('the run shown completed', async () => {
      const x = await runItem(a, 'ev-side');
      return x && /^completed/.test(String(x.item.description)) ? x : undefined;
    });
    assert.doesNotMatch(done.item.contextValue ?? '', /\bwaiting\b/, 'Send Event… is offered on waiting runs only');
    const shown = JSON.parse(cli(['show', 'ev-side', '--json']).stdout) as { inbox: Array<{ name: string; status: string; sentBy: string }> };
    assert.deepEqual(
      shown.inbox.map((e) => [e.name, e.status]),
      [['reply', 'delivered']],
    );
  });
});
