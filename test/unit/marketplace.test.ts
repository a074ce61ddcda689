// Marketplace readiness of the manifest: icon, category, keywords, documents, and a walkthrough whose every link,
// completion event and media file resolves (the packed VSIX is checked again by test/package/vsix.contents.ts).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('Marketplace readiness', () => {
  it('has a 128×128 PNG icon, the Debuggers category, keywords, a license and a changelog', () => {
    const png = fs.readFileSync(path.join(ROOT, pkg.icon));
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128], 'IHDR width and height');
    assert.ok(pkg.categories.includes('Debuggers'));
    assert.ok(pkg.keywords.length >= 5 && pkg.keywords.length <= 30);
    assert.equal(pkg.license, 'MIT');
    assert.match(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'), /^MIT License/);
    assert.match(fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8'), /^# Changelog/);
  });

  it('walks a new user from opening an agent to killing and resuming it, every link and media file real', () => {
    const [w, ...others] = pkg.contributes.walkthroughs;
    assert.equal(others.length, 0);
    const steps = w.steps as Array<{ id: string; description: string; media: { markdown: string }; completionEvents: string[] }>;
    assert.deepEqual(
      steps.map((s) => s.id),
      ['openAgent', 'runIt', 'watchJournal', 'killRun', 'resumeRun'],
    );
    const commands = new Set<string>(pkg.contributes.commands.map((c: { command: string }) => c.command));
    const views = new Set<string>(
      Object.values(pkg.contributes.views as Record<string, Array<{ id: string }>>)
        .flat()
        .map((v) => v.id),
    );
    const known = (id: string): boolean =>
      commands.has(id) || id.startsWith('workbench.action.') || (id.endsWith('.focus') && views.has(id.slice(0, -'.focus'.length)));
    for (const s of steps) {
      assert.ok(fs.statSync(path.join(ROOT, s.media.markdown)).size > 0, `${s.id}: ${s.media.markdown}`);
      const links = [...s.description.matchAll(/\(command:([\w.]+)\)/g)].map((m) => m[1] ?? '');
      assert.equal(links.length, 1, `${s.id} has one button`);
      for (const l of links) assert.ok(known(l), `${s.id} links ${l}`);
      for (const e of s.completionEvents) {
        const [kind, id = ''] = e.split(/:(.*)/);
        if (kind === 'onCommand') assert.ok(known(id), `${s.id} completes on ${e}`);
        else if (kind === 'onView') assert.ok(views.has(id), `${s.id} completes on ${e}`);
        else assert.fail(`${s.id}: unexpected completion event ${e}`);
      }
    }
    assert.ok(steps.find((s) => s.id === 'killRun')?.completionEvents.includes('onCommand:logbook.killRun'));
    assert.ok(steps.find((s) => s.id === 'resumeRun')?.completionEvents.includes('onCommand:logbook.resumeRun'));
  });
});
