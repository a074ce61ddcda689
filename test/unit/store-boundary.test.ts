// Outside src/runtime/store, code reaches the journal through its interface only: no import resolves to a store module
// other than its index, journalStore, rows and storageError (eslint.config.mjs states the same rule for the editor).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

const STORE = path.join(ROOT, 'src', 'runtime', 'store');
const PUBLIC = new Set(['index', 'journalStore', 'rows', 'storageError'].map((m) => path.join(STORE, m)));

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p === STORE ? [] : tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The store modules other than the public ones that `source` (a file at `file`) imports, as written. */
export function storeInternalsImported(file: string, source: string): string[] {
  const specs = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)|require\(\s*'([^']+)'\s*\)/g)].map(
    (m) => m[1] ?? m[2] ?? m[3]!,
  );
  return specs.filter((spec) => {
    if (!spec.startsWith('.')) return false;
    const target = path.resolve(path.dirname(file), spec).replace(/\.(ts|js)$/, '');
    const inStore = target === STORE || target.startsWith(STORE + path.sep);
    return inStore && target !== STORE && !PUBLIC.has(target);
  });
}

describe('the store boundary', () => {
  it('no source file outside src/runtime/store imports a store internal (Db, dialects, pg/, SQL modules)', () => {
    const found = tsFiles(path.join(ROOT, 'src')).flatMap((f) =>
      storeInternalsImported(f, fs.readFileSync(f, 'utf8')).map((s) => `${path.relative(ROOT, f)}: ${s}`),
    );
    assert.deepEqual(found, []);
  });

  it('inside the store, only the engines (store/sqlite.ts, store/pg/*) ask which engine they are on, and only they and the index (which picks one) import pg/', () => {
    const shared = fs.readdirSync(STORE).filter((f) => f.endsWith('.ts') && f !== 'sqlite.ts');
    const asks = shared.filter((f) =>
      /\.kind\s*[!=]==?\s*'(sqlite|postgres)'|\bkind\s*[!=]==?\s*'(sqlite|postgres)'/.test(fs.readFileSync(path.join(STORE, f), 'utf8')),
    );
    assert.deepEqual(asks, [], 'put the difference in Dialect or Db (store/db.ts)');
    const importsPg = shared.filter((f) => f !== 'index.ts' && /from '\.\/pg\//.test(fs.readFileSync(path.join(STORE, f), 'utf8')));
    assert.deepEqual(importsPg, []);
  });

  it('flags a planted import of a store internal, and passes the interface (negative control)', () => {
    const engine = path.join(ROOT, 'src', 'runtime', 'engine.ts');
    const cli = path.join(ROOT, 'src', 'cli', 'x.ts');
    assert.deepEqual(storeInternalsImported(engine, "import type { Db } from './store/db';\nimport { openStore } from './store';"), ['./store/db']);
    assert.deepEqual(
      storeInternalsImported(cli, "import { PgDb } from '../runtime/store/pg/pgDb';\nimport type { JournalStore } from '../runtime/store/journalStore';"),
      ['../runtime/store/pg/pgDb'],
    );
    assert.deepEqual(storeInternalsImported(cli, "const m = require('../runtime/store/sqlite');"), ['../runtime/store/sqlite']);
  });
});
