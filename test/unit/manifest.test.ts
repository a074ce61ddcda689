// package.json's contributions are generated: they must match the generator, and commands, menus and code must agree.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { contributions } from '../../src/manifest/contributions';
import { COMMANDS } from '../../src/extension/ids';
import { LaunchConfig } from '../../src/adapter/launchConfig';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('package.json contributions', () => {
  it('are exactly what src/manifest/contributions.ts generates (run `npm run gen:manifest` after changing it)', () => {
    const g = contributions();
    assert.deepEqual(pkg.contributes, JSON.parse(JSON.stringify(g.contributes)));
    assert.deepEqual(pkg.activationEvents, g.activationEvents);
    assert.deepEqual(pkg.capabilities, JSON.parse(JSON.stringify(g.capabilities)));
  });

  it('give the launch attributes of the adapter zod schema, every one of them', () => {
    const launch = pkg.contributes.debuggers[0].configurationAttributes.launch;
    assert.deepEqual(Object.keys(launch.properties).sort(), Object.keys(LaunchConfig.shape).sort());
    assert.deepEqual(launch.required, ['program']);
    assert.equal(launch.properties.stopOnEntry.type, 'boolean');
  });

  it('contribute every command the code knows and no other, each menu entry naming a contributed command', () => {
    const contributed: string[] = (pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command).sort();
    const ids: string[] = Object.values(COMMANDS).map((c) => c.id);
    assert.deepEqual(contributed, ids.sort());
    for (const [menu, entries] of Object.entries(pkg.contributes.menus as Record<string, Array<{ command: string }>>)) {
      for (const e of entries) assert.ok(contributed.includes(e.command), `${menu} names ${e.command}`);
    }
    for (const w of pkg.contributes.viewsWelcome as Array<{ contents: string }>) {
      for (const m of w.contents.matchAll(/command:([\w.]+)/g)) assert.ok(contributed.includes(m[1]!), `welcome view links ${m[1]}`);
    }
  });

  it('register commands in one place only, from the ids table', () => {
    const dir = path.join(ROOT, 'src', 'extension');
    const calls: string[] = [];
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts'))
          for (const m of fs.readFileSync(p, 'utf8').matchAll(/registerCommand\(([^,]+),/g)) calls.push(`${path.basename(p)}: ${m[1]}`);
      }
    };
    walk(dir);
    assert.deepEqual(calls, ['commandHandlers.ts: COMMANDS[key].id']);
  });

  it('point at media files that exist and activate only on use', () => {
    for (const c of pkg.contributes.viewsContainers.activitybar) assert.ok(fs.existsSync(path.join(ROOT, c.icon)), c.icon);
    assert.ok(!pkg.activationEvents.includes('*') && !pkg.activationEvents.includes('onStartupFinished'));
  });
});
