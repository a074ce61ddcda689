// docs/api-reference is TypeDoc's output for the package's entry points: regenerated here, it must equal the committed one.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const REFERENCE = path.join(ROOT, 'docs', 'api-reference');
/** Each public subpath (package.json `exports`), its TypeDoc entry and the page the reference gives it. */
/** `fewest`: the fewest names the entry must export (a check that the program saw it at all). */
const MODULES: ReadonlyArray<{ subpath: string; entry: string; page: string; fewest?: number }> = [
  { subpath: '.', entry: 'scripts/api-entries/agent-logbook.ts', page: 'agent-logbook.md' },
  { subpath: './ai', entry: 'scripts/api-entries/agent-logbook-ai.ts', page: 'agent-logbook/ai.md' },
  { subpath: './langgraph', entry: 'scripts/api-entries/agent-logbook-langgraph.ts', page: 'agent-logbook/langgraph.md', fewest: 2 },
  { subpath: './openai-agents', entry: 'scripts/api-entries/agent-logbook-openai-agents.ts', page: 'agent-logbook/openai-agents.md', fewest: 8 },
];

/** Every file under `dir`, relative to it, sorted: two trees compare as lists. */
export function filesOf(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

let program: ts.Program | undefined;

/** The names an entry exports, as TypeScript sees them (re-exports followed); one program serves every entry. */
function exportedNames(entry: string): string[] {
  if (!program) {
    const config = ts.getParsedCommandLineOfConfigFile(
      path.join(ROOT, 'scripts/api-entries/tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')) },
    );
    assert.ok(config);
    program = ts.createProgram(
      MODULES.map((m) => path.join(ROOT, m.entry)),
      config.options,
    );
  }
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path.join(ROOT, entry));
  assert.ok(source, entry);
  const symbol = checker.getSymbolAtLocation(source);
  assert.ok(symbol, `${entry} is not a module`);
  // An @internal export (agent-logbook's __journal) is stripped from the shipped declarations and left out by TypeDoc.
  const internal = (s: ts.Symbol): boolean => {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    return (target.declarations ?? []).some((d) => ts.getJSDocTags(d).some((t) => t.tagName.text === 'internal'));
  };
  return checker
    .getExportsOfModule(symbol)
    .filter((s) => !internal(s))
    .map((s) => s.name)
    .sort();
}

/** The names a reference page documents: its `### Name` headings (one per export with outputFileStrategy modules;
 *  TypeDoc writes functions as `name()` and escapes markdown, `_` as `\_`). */
export function documentedNames(page: string): string[] {
  return [...page.matchAll(/^### (\S+?)(?:\(\))?$/gm)].map((m) => (m[1] ?? '').replace(/\\_/g, '_')).sort();
}

describe('docs/api-reference: generated from the public declarations', function () {
  this.timeout(60_000);

  it('names every public subpath of package.json `exports` (but ./package.json)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    assert.deepEqual(
      Object.keys(pkg.exports)
        .filter((k) => k !== './package.json')
        .sort(),
      MODULES.map((m) => m.subpath).sort(),
    );
  });

  it('is what `npm run docs:api` writes now (regenerate it after changing a public declaration)', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-api-'));
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typedoc/bin/typedoc'), '--out', out], { cwd: ROOT, stdio: 'pipe' });
      const fresh = filesOf(out);
      assert.deepEqual(
        filesOf(REFERENCE),
        fresh,
        'docs/api-reference has other files than TypeDoc writes: run `npm run docs:api` and commit docs/api-reference',
      );
      for (const f of fresh)
        assert.equal(
          fs.readFileSync(path.join(REFERENCE, f), 'utf8'),
          fs.readFileSync(path.join(out, f), 'utf8'),
          `docs/api-reference/${f} is stale: run \`npm run docs:api\` and commit docs/api-reference`,
        );
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  for (const m of MODULES) {
    it(`documents every name ${m.subpath === '.' ? 'agent-logbook' : `agent-logbook/${m.subpath.slice(2)}`} exports, and nothing else`, () => {
      const names = exportedNames(m.entry);
      // The check that the program found the entry's exports (agent-logbook/langgraph has only a few).
      assert.ok(names.length >= (m.fewest ?? 11), names.join(' '));
      assert.deepEqual(documentedNames(fs.readFileSync(path.join(REFERENCE, m.page), 'utf8')), names);
    });
  }

  it('would see a missing export (negative control)', () => {
    const page = '## Functions\n\n### defineAgent()\n\n#### Parameters\n\n### openJournal()\n\n##### options\n';
    assert.deepEqual(documentedNames(page), ['defineAgent', 'openJournal']);
    assert.notDeepEqual(documentedNames(page.replace('### defineAgent()', '')), ['defineAgent', 'openJournal']);
  });
});
