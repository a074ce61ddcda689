// Bundles the CLI and the runtime into dist/ with esbuild, and emits the runtime's type declarations.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, existsSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  external: ['better-sqlite3', 'esbuild', 'vscode'],
  logLevel: 'warning',
  absWorkingDir: root,
};

const entries = [
  { in: 'src/cli/bin.ts', out: 'dist/cli.js', banner: '#!/usr/bin/env node' },
  { in: 'src/runtime/index.ts', out: 'dist/runtime.js' },
  // agent-logbook/ai: the SDKs are optional peers, and the runtime is the package's own (never a second copy).
  { in: 'src/ai/index.ts', out: 'dist/ai.js', external: ['agent-logbook', 'ai', 'ai/*', '@ai-sdk/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'] },
  ...['src/adapter/debugAdapter.ts', 'src/adapter/runner.ts', 'src/extension/extension.ts', 'src/reader/readerMain.ts', 'src/rehearse/worker.ts']
    .filter((f) => existsSync(join(root, f)))
    .map((f) => ({ in: f, out: `dist/${f.split('/').pop().replace(/\.ts$/, '.js')}` })),
];

mkdirSync(join(root, 'dist'), { recursive: true });
await Promise.all(
  entries.map((e) =>
    esbuild.build({ ...common, entryPoints: [e.in], outfile: e.out, ...(e.banner ? { banner: { js: e.banner } } : {}), ...(e.external ? { external: [...common.external, ...e.external] } : {}) }),
  ),
);
chmodSync(join(root, 'dist/cli.js'), 0o755);
if (!process.argv.includes('--no-types')) {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.types.json'], { cwd: root, stdio: 'inherit' });
}
if (watch) console.log('watch mode is not supported; rerun the build');
