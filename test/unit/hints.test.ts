// Messages that send a person to a command name it by its manifest title, and no source file retypes a title.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crashMessage } from '../../src/adapter/crashReport';
import { approveHint, decideHint, resumeHint } from '../../src/link/hints';
import { COMMANDS, COMMAND_CATEGORY, paletteName } from '../../src/manifest/commandTable';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: Array<{ command: string; title: string; category: string }> };
};
const palette = new Set(pkg.contributes.commands.map((c) => `${c.category}: ${c.title}`));

describe('messages that name commands', () => {
  it('name commands exactly as the Command Palette lists them', () => {
    assert.ok(palette.has(paletteName('resumeRun')));
    assert.equal(paletteName('resumeRun'), 'Agent Logbook: Resume Run');
    const report = crashMessage({
      pid: 1,
      cause: 'kill',
      pausedAt: undefined,
      report: { runId: 'r1', lastStep: null, inDoubt: [], compensationInDoubt: [] } as never,
      reportError: undefined,
    });
    assert.match(report, /"Agent Logbook: Resume Run" in the Command Palette/);
    for (const text of [resumeHint('r1'), approveHint('r1', 'a1'), decideHint()]) {
      for (const m of text.matchAll(/"([^"]+)"/g)) {
        const quoted = m[1]!;
        if (quoted === 'resume' || quoted === 'r1') continue;
        const isTitle = Object.values(COMMANDS).some((c) => c.title === quoted) || palette.has(quoted);
        assert.ok(isTitle, `"${quoted}" in "${text}" is no command title`);
      }
    }
  });

  it('are never retyped: no source file outside the manifest spells "Logbook: <Title>"', () => {
    const offenders: string[] = [];
    const titles = Object.values(COMMANDS).map((c) => c.title.toLowerCase());
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.includes(`${path.sep}manifest${path.sep}`)) {
          for (const m of fs.readFileSync(p, 'utf8').matchAll(/(?:Agent )?Logbook: ([A-Z][A-Za-z :]+)/g)) {
            if (titles.some((t) => m[1]!.toLowerCase().startsWith(t))) offenders.push(`${path.relative(ROOT, p)}: ${m[0]}`);
          }
        }
      }
    };
    walk(path.join(ROOT, 'src'));
    assert.deepEqual(offenders, []);
    assert.equal(COMMAND_CATEGORY, pkg.contributes.commands[0]!.category);
  });
});
