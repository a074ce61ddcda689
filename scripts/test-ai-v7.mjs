// agent-logbook/ai under AI SDK 7 (which needs Node 22+), tested on Node 24 in a scratch project with ai@7 from the registry.

// It packs this package into the scratch project, type-checks the fixture agent against ai@7's types, and runs
// test/fixtures/ai-v7/v7.test.mjs on Node 24: the Node and its better-sqlite3 build come from
// scripts/package/native.mjs, cached outside the clone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFor } from './package/native.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(root, 'test', 'fixtures', 'ai-v7');
/** The AI SDK 7 the scratch project installs (the SDK, and the provider package of its "v4" spec), pinned so a CI run
 *  is reproducible; LOGBOOK_AI7="ai@7 @ai-sdk/provider@4" tests another release, e.g. the newest. */
const AI7 = (process.env.LOGBOOK_AI7 ?? 'ai@7.0.173 @ai-sdk/provider@4.0.38').split(/\s+/).filter(Boolean);
const version = (name) => JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

/** Without an outer npm's lifecycle variables, which would make the nested npm act for this repository. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE_OPTIONS'));

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, env, ...opts });
  if (r.error || r.status !== 0) {
    console.error(`[test:ai-v7] ${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})\n${r.stdout ?? ''}${r.stderr ?? ''}`);
    process.exit(1);
  }
  return r.stdout;
}

if (!fs.existsSync(path.join(root, 'dist', 'ai.js'))) {
  console.error('[test:ai-v7] dist/ is not built: run `npm run build` first.');
  process.exit(2);
}
const t0 = Date.now();
const node24 = await buildFor(24, { jobs: Math.max(1, os.availableParallelism?.() ?? 1) });
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-ai-v7-'));
try {
  fs.writeFileSync(path.join(scratch, 'package.json'), `${JSON.stringify({ name: 'ai-v7-scratch', version: '1.0.0', private: true }, null, 2)}\n`);
  // --ignore-scripts: dist/ is built (no `prepare`), and better-sqlite3 gets the Node 24 build below instead of its
  // install script (which would fetch a binary from GitHub or compile SQLite). --engine-strict=false: npm runs on this
  // Node (20 in CI), and ai@7 declares node >=22, which is the Node that runs it here.
  const tarball = JSON.parse(sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], { cwd: root }))[0].filename;
  sh(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      '--engine-strict=false',
      '--loglevel=error',
      path.join(scratch, tarball),
      `better-sqlite3@${version('better-sqlite3')}`,
      'zod@^4',
      `@modelcontextprotocol/sdk@${version('@modelcontextprotocol/sdk')}`,
      ...AI7,
    ],
    { cwd: scratch },
  );
  const release = path.join(scratch, 'node_modules', 'better-sqlite3', 'build', 'Release');
  fs.mkdirSync(release, { recursive: true });
  fs.copyFileSync(node24.file, path.join(release, 'better_sqlite3.node'));
  const installed = JSON.parse(fs.readFileSync(path.join(scratch, 'node_modules', 'ai', 'package.json'), 'utf8')).version;
  console.log(`[test:ai-v7] scratch project with ai@${installed} and agent-logbook from ${tarball}, Node ${node24.version}`);
  for (const f of ['agent.ts', 'v7.test.mjs']) fs.copyFileSync(path.join(fixture, f), path.join(scratch, f));

  // The fixture agent against ai@7's own types: logbookModel / logbookTools / generateText / streamText as a user writes them.
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      types: ['node'],
      typeRoots: [path.join(root, 'node_modules', '@types')],
    },
    files: ['agent.ts'],
  };
  fs.writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  sh(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: scratch });
  console.log('[test:ai-v7] the agent type-checks against ai@7');

  const r = spawnSync(node24.nodeBin, ['--test', '--test-reporter=spec', 'v7.test.mjs'], {
    cwd: scratch,
    stdio: 'inherit',
    env: { ...env, V7_PROJECT: scratch, V7_AI6: fs.realpathSync(path.join(root, 'node_modules', 'ai')) },
  });
  console.log(`[test:ai-v7] ${r.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  process.exitCode = r.status ?? 1;
} finally {
  // V7_KEEP=1 keeps the scratch project, to rerun a test by hand (V7_PROJECT=<it> V7_AI6=… <node 24> --test v7.test.mjs).
  if (process.env.V7_KEEP) console.log(`[test:ai-v7] kept ${scratch}`);
  else fs.rmSync(scratch, { recursive: true, force: true });
}
