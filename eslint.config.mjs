// Lint: type-checked typescript-eslint, no floating promises, the layering rules between folders, and zod/mini in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Product code loads zod/mini: full zod (or mini's `z` namespace object, which keeps all of zod's core and locales)
// adds ~600 KB to each bundle and ~60 ms to each process start. test/unit/bundles.test.ts checks the built bundles.
const ZOD = [{ regex: '^zod(/v4(/classic)?|/v3)?$', message: "src/ uses zod/mini (`import * as z from 'zod/mini'`): full zod is ~600 KB per bundle." }];
const ZOD_NAMESPACE = {
  selector: "ImportDeclaration[source.value=/^zod.(v4.)?mini$/] > ImportSpecifier[imported.name='z']",
  message: 'Import zod/mini as a namespace (`import * as z`): its `z` object keeps all of zod in the bundle.',
};
// SQL lives in the store (src/runtime/store): no statement text or prepared statement anywhere else.
const SQL_MESSAGE = 'SQL lives only in the store (src/runtime/store): add a domain operation there and call it.';
const NO_SQL = [
  { selector: "CallExpression[callee.property.name='prepare']", message: SQL_MESSAGE },
  { selector: 'Literal[value=/^\\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|LISTEN|NOTIFY|BEGIN|COMMIT|SET)\\s/]', message: SQL_MESSAGE },
  {
    selector: 'TemplateElement[value.raw=/^\\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|LISTEN|NOTIFY|BEGIN|COMMIT|SET)\\s/]',
    message: SQL_MESSAGE,
  },
];
// Flat config replaces (does not merge) a rule set again by a later block, so every src/ block carries ZOD.
// Every src/ folder. Import patterns match the specifier as written, so each folder's rules are stated once, as a
// function of `under` (folder names → the relative specifiers that reach them), and repeated per file depth: from
// src/extension/tree/, '../cli' is extension/cli.ts, not src/cli.
const LAYERS = ['adapter', 'runner', 'link', 'runtime', 'loader', 'plan', 'reader', 'cli', 'rehearse', 'extension', 'manifest', 'shared'];
const layer = (folder, rules) =>
  [1, 2, 3].map((depth) => {
    const up = '../'.repeat(depth);
    const under = (...dirs) => dirs.flatMap((d) => [`${up}${d}`, `${up}${d}/**`]);
    return { files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`], rules: restrict(rules(under, up)) };
  });
// The store's modules other than its interface are its own: outside src/runtime/store, code imports the store's index
// (openStore, the JournalStore interface, the types its operations take) and, as data, store/rows, store/storageError
// and store/journalStore. Nothing outside can reach a Db, a Dialect, an engine's kind or store/pg. Specifiers as
// written from any depth ('./store/x' in src/runtime, '../runtime/store/x' one folder down, …); no module of the store
// imports through a path with `store/` in it, so the patterns never match inside it.
const STORE_PREFIXES = ['./store/', '../store/', '../../store/', ...[1, 2, 3].map((d) => `${'../'.repeat(d)}runtime/store/`)];
const STORE_INTERNALS = [
  {
    group: STORE_PREFIXES.flatMap((p) => [`${p}*`, `${p}**`, `!${p}journalStore`, `!${p}rows`, `!${p}storageError`]),
    message:
      'Outside src/runtime/store, reach the journal through its interface: import from runtime/store (JournalStore, openStore), not its internals (Db, dialects, pg/, SQL modules).',
  },
];
const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, ...ZOD, ...STORE_INTERNALS] }] });

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'out/**',
      '.tmp/**',
      'node_modules/**',
      '.e2e-tools/**',
      '.vscode-test/**',
      'media/**',
      'bench/peers/**',
      'test/fixtures/**',
      '**/*.mjs',
      '**/*.js',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  { files: ['src/**/*.ts'], rules: { ...restrict([]), 'no-restricted-syntax': ['error', ZOD_NAMESPACE] } },
  { files: ['src/**/*.ts'], ignores: ['src/runtime/store/**'], rules: { 'no-restricted-syntax': ['error', ZOD_NAMESPACE, ...NO_SQL] } },
  // The layers, bottom up: shared → runtime (with its store) → loader, plan, reader → runner, link, adapter, cli,
  // rehearse → extension. Each folder lists what it must not import; scripts/import-cycles.mjs forbids cycles.
  ...layer('shared', (under) => [
    {
      group: [...under(...LAYERS.filter((l) => l !== 'shared')), 'vscode', '@vscode/*'],
      message: 'shared/ is the bottom layer: every layer may import it, it imports none.',
    },
  ]),
  ...layer('runtime', (under) => [
    { group: ['vscode'], message: 'The runtime knows nothing of its host: no vscode here.' },
    { group: ['@vscode/*'], message: 'The runtime knows nothing of DAP: the adapter translates runtime events.' },
    {
      group: under('adapter', 'runner', 'link', 'extension', 'cli', 'reader', 'loader', 'plan', 'rehearse', 'manifest'),
      message: 'The runtime is the bottom layer; it imports no host code.',
    },
  ]),
  ...layer('loader', (under) => [
    {
      group: [...under('adapter', 'runner', 'link', 'extension', 'cli', 'reader', 'rehearse', 'manifest'), 'vscode', '@vscode/*'],
      message: 'loader/ and plan/ sit just above the runtime and import only it (and shared/).',
    },
  ]),
  ...layer('plan', (under) => [
    {
      group: [...under('adapter', 'runner', 'link', 'extension', 'cli', 'reader', 'rehearse', 'manifest'), 'vscode', '@vscode/*'],
      message: 'loader/ and plan/ sit just above the runtime and import only it (and shared/).',
    },
  ]),
  ...layer('link', (under, up) => [
    {
      group: [...under('adapter', 'runner', 'runtime', 'extension', 'cli', 'reader', 'loader', 'plan', 'rehearse'), 'vscode', '@vscode/*'],
      message: 'link/ is what the adapter and the runner share: it imports neither side, nor the runtime.',
    },
    {
      group: [`${up}manifest/*`, `!${up}manifest/commandTable`],
      message: 'link/ may take command titles from manifest/commandTable (data), nothing else of the manifest.',
    },
  ]),
  ...layer('runner', (under) => [
    { group: ['vscode', '@vscode/*'], message: 'The runner knows nothing of DAP or VS Code: it speaks link/runnerProtocol to the adapter.' },
    {
      group: under('adapter', 'extension', 'cli', 'reader', 'rehearse', 'plan', 'manifest'),
      message: 'The runner child imports the runtime and link/ only: adapter code runs in another process.',
    },
  ]),
  ...layer('adapter', (under) => [
    { group: ['vscode'], message: 'Only the extension (UI layer) may import vscode.' },
    {
      group: ['better-sqlite3', ...under('runtime/store', 'runtime/engine', 'runtime/session', 'runtime/compensate', 'loader')],
      message: 'The adapter never opens the journal or loads the script: the runner child does, over link/runnerProtocol.',
    },
    {
      group: under('runner', 'extension', 'cli', 'reader', 'rehearse', 'plan', 'manifest'),
      message: 'The adapter talks to the runner through link/ only; runner code runs in another process.',
    },
  ]),
  ...layer('reader', (under) => [
    {
      group: [...under('adapter', 'runner', 'link', 'extension', 'cli', 'rehearse', 'plan', 'loader', 'manifest'), 'vscode', '@vscode/*'],
      message: "The reader process serves the journal to the extension; it imports the runtime's store only.",
    },
  ]),
  ...layer('cli', (under) => [
    {
      group: [...under('adapter', 'runner', 'link', 'extension', 'reader', 'manifest'), 'vscode', '@vscode/*'],
      message: 'The CLI drives the runtime directly; debugger and editor code is not its business.',
    },
  ]),
  ...layer('rehearse', (under) => [
    {
      group: [...under('adapter', 'runner', 'link', 'extension', 'reader', 'plan', 'manifest'), 'vscode', '@vscode/*'],
      message: 'rehearse/ drives the CLI and reads journals; debugger and editor code is not its business.',
    },
    {
      group: under('cli'),
      message:
        'rehearse/ is a command module, not part of the CLI: its shape and output helpers are shared/terminal, so no folder but cli/ depends on the CLI.',
    },
  ]),
  ...layer('extension', (under, up) => [
    {
      group: ['better-sqlite3', 'pg', 'pg/*'],
      message: 'The extension host never loads better-sqlite3 or pg: ask the reader process, or the CLI as a child process.',
    },
    {
      group: under('runtime', 'loader', 'plan', 'runner', 'link', 'rehearse'),
      message: 'The extension host never opens the journal or runs a script: use the reader process (reader/readerProtocol) or the CLI as a child process.',
    },
    {
      group: [...under('cli'), `${up}adapter/*`, `!${up}adapter/envFile`],
      message:
        'The extension starts the CLI and the adapter as processes; code both need goes in shared/ (adapter/envFile is the one exception: the .env reader both must read alike).',
    },
    { group: [`${up}reader/*`, `!${up}reader/readerProtocol`], message: 'The extension speaks to the reader process through reader/readerProtocol only.' },
  ]),
  {
    // agent-logbook/ai is built on the runtime's public API only, as any integration outside this repository would be.
    files: ['src/ai/**/*.ts'],
    rules: restrict([
      {
        group: ['../*', '../**', '**/runtime', '**/runtime/**', 'better-sqlite3'],
        message: "src/ai uses the runtime's public API only: import from 'agent-logbook'.",
      },
      { group: ['vscode', '@vscode/*'], message: 'The AI integration runs in the agent process: no vscode or DAP here.' },
    ]),
  },
  {
    // agent-logbook/langgraph reaches the runtime (and the journal its saver opens) through 'agent-logbook' only, so its
    // bundle carries no second copy of the runtime or the store.
    files: ['src/langgraph/**/*.ts'],
    rules: restrict([
      {
        group: ['../*', '../**', '**/runtime', '**/runtime/**', 'better-sqlite3', 'pg'],
        message: "src/langgraph uses the runtime through 'agent-logbook' only (its saver opens the journal with __journal).",
      },
      { group: ['vscode', '@vscode/*'], message: 'The LangGraph integration runs in the agent process: no vscode or DAP here.' },
    ]),
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
