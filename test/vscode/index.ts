// Mocha entry run inside the VS Code extension host: loads every compiled *.test.js / *.scene.js beside it.

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

type MochaCtor = new (o: { ui: string; color: boolean; timeout: number; reporter?: string }) => {
  addFile(f: string): void;
  run(cb: (failures: number) => void): void;
};

function loadMocha(): MochaCtor {
  const root = process.env.LOGBOOK_REPO_ROOT;
  if (!root) throw new Error('LOGBOOK_REPO_ROOT is not set: run this suite with `npm run test:vscode`.');
  return createRequire(path.join(root, 'package.json'))('mocha') as MochaCtor;
}

export function run(): Promise<void> {
  const Mocha = loadMocha();
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 90_000, reporter: 'spec' });
  const only = process.env.LOGBOOK_VSCODE_TESTS;
  for (const f of fs.readdirSync(__dirname).filter((n) => n.endsWith('.test.js') || n.endsWith('.scene.js')).sort()) {
    if (!only || only.split(',').some((o) => f.startsWith(o))) mocha.addFile(path.join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures ? reject(new Error(`${failures} extension-host test(s) failed`)) : resolve()));
  });
}
