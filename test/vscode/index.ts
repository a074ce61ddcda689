// Mocha entry run inside the VS Code extension host: loads every compiled *.test.js / *.scene.js beside it.

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

type MochaCtor = new (o: { ui: string; color: boolean; timeout: number; reporter?: string; forbidOnly?: boolean }) => {
  addFile(f: string): void;
  run(cb: (failures: number) => void): { total: number };
};

function loadMocha(): MochaCtor {
  const root = process.env.LOGBOOK_REPO_ROOT;
  if (!root) throw new Error('LOGBOOK_REPO_ROOT is not set: run this suite with `npm run test:vscode`.');
  return createRequire(path.join(root, 'package.json'))('mocha') as MochaCtor;
}

export function run(): Promise<void> {
  const Mocha = loadMocha();
  // forbidOnly: an `it.only` left in a test must fail the suite, not quietly skip the rest of it.
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 90_000, reporter: 'spec', forbidOnly: true });
  const only = process.env.LOGBOOK_VSCODE_TESTS;
  for (const f of fs
    .readdirSync(__dirname)
    .filter((n) => n.endsWith('.test.js') || n.endsWith('.scene.js'))
    .sort()) {
    if (!only || only.split(',').some((o) => f.startsWith(o))) mocha.addFile(path.join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      if (failures) reject(new Error(`${failures} extension-host test(s) failed`));
      // A suite that ran nothing proves nothing: a broken build, or a LOGBOOK_VSCODE_TESTS filter matching no file.
      else if (runner.total === 0) reject(new Error(`no extension-host test was loaded from ${__dirname}${only ? ` (LOGBOOK_VSCODE_TESTS=${only})` : ''}`));
      else resolve();
    });
  });
}
