// Lint: type-checked typescript-eslint, no floating promises, and the layering rules between folders.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

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
