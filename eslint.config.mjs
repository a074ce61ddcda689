// Lint: type-checked typescript-eslint, no floating promises, the layering rules between folders, and zod/mini in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Product code loads zod/mini: full zod (or mini's `z` namespace object, which keeps all of zod's core and locales)
// adds ~600 KB to each bundle and ~60 ms to each process start. test/unit/bundles.test.ts checks the built bundles.
const ZOD = [{ regex: '^zod(/v4(/classic)?|/v3)?$', message: 'src/ uses zod/mini (`import * as z from \'zod/mini\'`): full zod is ~600 KB per bundle.' }];
const ZOD_NAMESPACE = {
  selector: "ImportDeclaration[source.value=/^zod.(v4.)?mini$/] > ImportSpecifier[imported.name='z']",
  message: 'Import zod/mini as a namespace (`import * as z`): its `z` object keeps all of zod in the bundle.',
};
// Flat config replaces (does not merge) a rule set again by a later block, so every src/ block carries ZOD.
const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, ...ZOD] }] });

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', '.tmp/**', 'node_modules/**', '.e2e-tools/**', '.vscode-test/**', 'media/**', 'bench/peers/**', 'test/fixtures/**', '**/*.mjs', '**/*.js'] },
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
  {
    files: ['src/runtime/**/*.ts'],
    rules: restrict([
      { group: ['vscode'], message: 'The runtime knows nothing of its host: no vscode here.' },
      { group: ['@vscode/*'], message: 'The runtime knows nothing of DAP: the adapter translates runtime events.' },
      { group: ['**/adapter/**', '**/extension/**', '**/cli/**', '**/reader/**', '**/loader/**'], message: 'The runtime is the bottom layer; it imports no host code.' },
    ]),
  },
  {
    files: ['src/adapter/**/*.ts', 'src/cli/**/*.ts', 'src/loader/**/*.ts', 'src/rehearse/**/*.ts', 'src/reader/**/*.ts'],
    rules: restrict([
      { group: ['vscode'], message: 'Only the extension (UI layer) may import vscode.' },
      { group: ['**/extension/**'], message: 'The extension sits above; nothing below imports it.' },
    ]),
  },
  {
    // agent-logbook/ai is built on the runtime's public API only, as any integration outside this repository would be.
    files: ['src/ai/**/*.ts'],
    rules: restrict([
      { group: ['../*', '../**', '**/runtime', '**/runtime/**', 'better-sqlite3'], message: "src/ai uses the runtime's public API only: import from 'agent-logbook'." },
      { group: ['vscode', '@vscode/*'], message: 'The AI integration runs in the agent process: no vscode or DAP here.' },
    ]),
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: restrict([
      { group: ['better-sqlite3'], message: 'The extension host never loads better-sqlite3: ask the reader process.' },
      { group: ['**/runtime/store', '**/runtime/store/**', '**/runtime/engine', '**/runtime/session', '**/loader/**'], message: 'The extension host never opens the journal itself: use the reader process.' },
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
