// Bundles the CLI and the runtime into dist/ with esbuild, and emits the runtime's type declarations.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, existsSync, chmodSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  // pg: the reader's LISTEN client and the store's worker thread load it from node_modules (staged into the VSIX).
  external: ['better-sqlite3', 'esbuild', 'vscode', 'pg', 'pg-native'],
  logLevel: 'warning',
  absWorkingDir: root,
};

/** The package's type entry points under dist/types (package.json `exports`): one line per public subpath. */
const TYPE_ENTRIES = ['runtime/public.d.ts', 'ai/index.d.ts', 'langgraph/index.d.ts', 'openaiAgents/index.d.ts'];

const entries = [
  { in: 'src/cli/bin.ts', out: 'dist/cli.js', banner: '#!/usr/bin/env node' },
  { in: 'src/runtime/public.ts', out: 'dist/runtime.js' },
  { in: 'src/runner/runnerMain.ts', out: 'dist/runner.js' },
  // agent-logbook/ai: the SDKs are optional peers, and the runtime is the package's own (never a second copy).
  {
    in: 'src/ai/index.ts',
    out: 'dist/ai.js',
    external: ['agent-logbook', 'ai', 'ai/*', '@ai-sdk/*', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
  },
  // agent-logbook/langgraph: LangGraph is an optional peer; the saver opens the journal through the runtime's entry
  // ('agent-logbook', __journal), so the store is the driving runtime's, never a second copy.
  { in: 'src/langgraph/index.ts', out: 'dist/langgraph.js', external: ['agent-logbook', '@langchain/*'] },
  // agent-logbook/openai-agents: the OpenAI Agents SDK is an optional peer; it uses agent-logbook/ai's machinery at run time.
  {
    in: 'src/openaiAgents/index.ts',
    out: 'dist/openai-agents.js',
    external: [
      'agent-logbook',
      'agent-logbook/ai',
      'ai',
      'ai/*',
      '@ai-sdk/*',
      '@openai/agents',
      '@openai/agents/*',
      '@openai/agents-core',
      '@openai/agents-core/*',
    ],
  },
  // The PostgreSQL journal's pg client runs on a worker thread; every bundle that opens a store finds it beside itself.
  // pg stays a dependency (resolved from node_modules, staged into the VSIX like better-sqlite3), not a second copy.
  { in: 'src/runtime/store/pg/pgThread.ts', out: 'dist/pgThread.js', external: ['pg', 'pg-native'] },
  // The trace exporter (mapping + OTLP encoders): loaded beside the bundle only when tracing is on (runtime/trace/load.ts).
  { in: 'src/runtime/trace/export.ts', out: 'dist/traces.js', minify: true },
  ...['src/adapter/debugAdapter.ts', 'src/extension/extension.ts', 'src/reader/readerMain.ts', 'src/rehearse/campaignChild.ts']
    .filter((f) => existsSync(join(root, f)))
    .map((f) => ({ in: f, out: `dist/${f.split('/').pop().replace(/\.ts$/, '.js')}` })),
];

mkdirSync(join(root, 'dist'), { recursive: true });
await Promise.all(
  entries.map((e) =>
    esbuild.build({
      ...common,
      entryPoints: [e.in],
      outfile: e.out,
      ...(e.banner ? { banner: { js: e.banner } } : {}),
      ...(e.minify ? { minify: true } : {}),
      ...(e.external ? { external: [...common.external, ...e.external] } : {}),
    }),
  ),
);
chmodSync(join(root, 'dist/cli.js'), 0o755);
if (!process.argv.includes('--no-types')) {
  rmSync(join(root, 'dist/types'), { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.types.json'], { cwd: root, stdio: 'inherit' });
  pruneDeclarations(join(root, 'dist/types'), TYPE_ENTRIES);
  esmTwins(join(root, 'dist/types/langgraph'));
}
// agent-logbook/langgraph for `import`: the CommonJS bundle itself (one instance of LogbookSaver for import and require).
writeFileSync(
  join(root, 'dist/langgraph.mjs'),
  "// agent-logbook/langgraph for ES modules: the CommonJS bundle's exports, one instance.\nexport * from './langgraph.js';\n",
);

/**
 * tsc emits a declaration for every module the entries import, even those no public type names (the store, which
 * names better-sqlite3). Keep only what the entries' declarations reach, so the package ships no unreachable types.
 */
function pruneDeclarations(dir, entryFiles) {
  const keep = new Set();
  const visit = (file) => {
    if (keep.has(file) || !existsSync(file)) return;
    keep.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*['"](\.[^'"]+)['"]/g)) {
      const base = resolve(dirname(file), m[1]);
      visit(existsSync(`${base}.d.ts`) ? `${base}.d.ts` : join(base, 'index.d.ts'));
    }
  };
  for (const e of entryFiles) visit(join(dir, e));
  const walk = (d) => {
    for (const f of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, f.name);
      if (f.isDirectory()) {
        walk(p);
        if (readdirSync(p).length === 0) rmSync(p, { recursive: true });
      } else if (!keep.has(p)) rmSync(p);
    }
  };
  walk(dir);
  return [...keep].map((f) => relative(dir, f));
}
/**
 * ES-module twins (.d.mts) of a folder's declarations. The package is CommonJS, so its .d.ts are read as CommonJS and
 * resolve a peer's CommonJS types: LangGraph ships both (.d.cts and .d.ts), and an ES-module project that compiles a
 * graph with `checkpointer: new LogbookSaver()` would see two copies of BaseCheckpointSaver (TS2322). The twins are
 * the same text with ESM's explicit relative specifiers, so they resolve the peer as the importing project does.
 */
function esmTwins(dir) {
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.d.ts'))) {
    const text = readFileSync(join(dir, f), 'utf8').replace(/((?:from|import\()\s*['"])(\.{1,2}\/[^'"]+)(['"])/g, (_, a, spec, b) => `${a}${spec}.mjs${b}`);
    writeFileSync(join(dir, f.replace(/\.d\.ts$/, '.d.mts')), text);
  }
}
if (watch) console.log('watch mode is not supported; rerun the build');
