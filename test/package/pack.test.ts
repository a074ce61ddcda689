// The npm package as a user gets it: `npm pack`, installed into a scratch project outside the repository with zod
// from the registry; an agent importing 'agent-logbook' runs, crashes and resumes through `npx logbook`, a host
// script uses the API from ESM and CommonJS, and `tsc` checks it all with skipLibCheck: false in both module modes.

import { strict as assert } from 'node:assert';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers';

/** The size the package must stay under: a tripwire for what should not ship (source maps would more than double it,
 *  a bundled dependency). It is ~670 KB packed, ~2.6 MB unpacked: each of the five bundles carries the runtime (with
 *  secret masking; agent-logbook/langgraph's saver opens the journal through the runtime's entry, so its bundle
 *  carries no store: ~45 KB), traces add ~15 KB (dist/traces.js, loaded only when tracing is on, and its loader in
 *  each bundle), agent-logbook/openai-agents ~80 KB, and run.sleep, run.waitFor, run.child and cancel ~75 KB in
 *  each bundle that carries the runtime. */
const MAX_PACKED_BYTES = 720 * 1024;
const MAX_UNPACKED_BYTES = 2.8 * 1024 * 1024;

/** Exactly what the package ships: the bundles that run, the public declarations, and the documents. */
const EXPECTED_FILES = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'dist/ai.js',
  'dist/campaignChild.js',
  'dist/cli.js',
  'dist/debugAdapter.js',
  'dist/langgraph.js',
  'dist/langgraph.mjs',
  'dist/openai-agents.js',
  'dist/pgThread.js',
  'dist/runner.js',
  'dist/runtime.js',
  'dist/traces.js',
  'dist/types/ai/attemptState.d.ts',
  'dist/types/ai/calls.d.ts',
  'dist/types/ai/codec.d.ts',
  'dist/types/ai/fingerprint.d.ts',
  'dist/types/ai/index.d.ts',
  'dist/types/ai/mcp.d.ts',
  'dist/types/ai/model.d.ts',
  'dist/types/ai/replay.d.ts',
  'dist/types/ai/tools.d.ts',
  'dist/types/langgraph/index.d.mts',
  'dist/types/langgraph/index.d.ts',
  'dist/types/langgraph/run.d.mts',
  'dist/types/langgraph/run.d.ts',
  'dist/types/langgraph/saver.d.mts',
  'dist/types/langgraph/saver.d.ts',
  'dist/types/openaiAgents/driving.d.ts',
  'dist/types/openaiAgents/index.d.ts',
  'dist/types/openaiAgents/model.d.ts',
  'dist/types/openaiAgents/runAgent.d.ts',
  'dist/types/openaiAgents/tools.d.ts',
  'dist/types/runtime/cancelOptions.d.ts',
  'dist/types/runtime/decisions.d.ts',
  'dist/types/runtime/define.d.ts',
  'dist/types/runtime/errors.d.ts',
  'dist/types/runtime/hooks.d.ts',
  'dist/types/runtime/journal.d.ts',
  'dist/types/runtime/location.d.ts',
  'dist/types/runtime/outcomes.d.ts',
  'dist/types/runtime/policy.d.ts',
  'dist/types/runtime/public.d.ts',
  'dist/types/runtime/schema.d.ts',
  'dist/types/runtime/sendReport.d.ts',
  'dist/types/runtime/trace/options.d.ts',
  'dist/types/runtime/trace/pending.d.ts',
  'dist/types/runtime/types.d.ts',
  'package.json',
];

const version = (name: string): string =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** Without the outer `npm test`'s lifecycle variables, which would make a nested npm act for this repository. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE_OPTIONS'));
  return { ...env, NO_COLOR: '1', ...extra };
}

function sh(cmd: string, args: string[], opts: SpawnSyncOptions & { expect?: number } = {}): { stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20, env: cleanEnv(), ...opts });
  const got = r.signal ?? r.status;
  const want = opts.expect ?? 0;
  if (r.error || got !== want) {
    throw new Error(
      `${cmd} ${args.join(' ')}: expected ${want}, got ${got}${r.error ? ` (${r.error.message})` : ''}\n${String(r.stdout)}\n${String(r.stderr)}`,
    );
  }
  return { stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The README's "Use it in your project" section (its agent and CLI transcript) and docs/api.md's server, as written. */
function readmeSection(): { agent: string; host: string; transcript: Map<string, string[]> } {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Use it in your project');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const firstTs = (text: string): string => /```ts\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const agent = firstTs(section);
  const host = firstTs(fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8'));
  const transcript = new Map<string, string[]>();
  for (const block of section.matchAll(/```\n(\$ npx logbook[\s\S]*?)```/g)) {
    let current: string[] | undefined;
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.startsWith('$ ')) transcript.set(line.slice(2), (current = []));
      else current?.push(line);
    }
  }
  for (const out of transcript.values()) while (out.length && out[out.length - 1] === '') out.pop();
  return { agent, host, transcript };
}

/** Output as the README shows it: the absolute script path is the reader's own. */
const comparable = (lines: string[]): string[] =>
  lines.map((l) => l.replace(/^( {2}script {2}).*$/, '$1<path>')).filter((l, i, all) => l !== '' || all[i + 1] !== undefined);

const HOST = `// A user's host: the programmatic API, typed.
import { openJournal, LogbookError, type RunSummary } from 'agent-logbook';
import welcome from './welcome.js';

export async function main(): Promise<RunSummary[]> {
  const journal = openJournal({ journal: '.logbook/journal.db', agents: [welcome] });
  try {
    const out = await journal.start(welcome, {}, { runId: 'typed-1' });
    if (out.status !== 'completed') throw new LogbookError('LB_USAGE', 'not completed', 'look at it');
    // @ts-expect-error the input schema wants a number: the types must catch this
    await journal.start(welcome, { people: 'three' });
    await journal.recoverInterrupted();
    return journal.runs();
  } finally {
    journal.close();
  }
}
`;

/** Plain JavaScript hosts, to prove the bundle loads by import (ESM named exports of a CommonJS bundle) and by require. */
const HOST_MJS = `import { openJournal } from 'agent-logbook';
const journal = openJournal({ journal: '.logbook/journal.db' });
console.log(JSON.stringify(journal.runs().map((r) => [r.id, r.status, r.attempt])));
journal.close();
`;
const HOST_CJS = `const { openJournal, defineAgent, ErrorCodes } = require('agent-logbook');
const journal = openJournal({ journal: '.logbook/journal.db' });
console.log(JSON.stringify({ interrupted: journal.interrupted().length, defineAgent: typeof defineAgent, code: ErrorCodes.USAGE }));
journal.close();
`;

const TSCONFIG_BASE = { strict: true, noEmit: true, skipLibCheck: false, types: ['node'], target: 'ES2022', lib: ['ES2022'], noUncheckedIndexedAccess: true };

describe('the npm package, installed into a scratch project', function () {
  this.timeout(600_000);
  let scratch: string;
  let packed: { size: number; unpackedSize: number; files: Array<{ path: string }>; filename: string };

  before(() => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'types', 'runtime', 'public.d.ts')), 'dist/ is built (npm test builds it first)');
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-scratch-'));
    assert.ok(!path.relative(ROOT, scratch).match(/^[^.]/), 'the scratch project is outside the repository');
    // --ignore-scripts: dist/ is already built; `prepare` would only build it again.
    const out = sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], { cwd: ROOT }).stdout;
    packed = (JSON.parse(out) as Array<typeof packed>)[0]!;
  });

  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('ships only the bundles, the public declarations and the documents, within the size budget', () => {
    assert.deepEqual(packed.files.map((f) => f.path).sort(), EXPECTED_FILES);
    assert.ok(packed.size < MAX_PACKED_BYTES, `packed ${packed.size} bytes, budget ${MAX_PACKED_BYTES}`);
    assert.ok(packed.unpackedSize < MAX_UNPACKED_BYTES, `unpacked ${packed.unpackedSize} bytes, budget ${MAX_UNPACKED_BYTES}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.private, undefined, 'publishable');
    assert.equal(manifest.license, 'MIT');
  });

  it('installs with zod from the registry; an agent runs, is killed by --crash-at and resumes with npx logbook', () => {
    fs.writeFileSync(
      path.join(scratch, 'package.json'),
      `${JSON.stringify({ name: 'scratch-agents', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
    );
    // Everything from the registry as a user gets it (--prefer-offline: npm's cache answers for what an earlier run
    // downloaded), with better-sqlite3 pinned to the version this repository built. --ignore-scripts: better-sqlite3's
    // install script would fetch a prebuilt binary from GitHub (unreachable here) and then compile SQLite for minutes;
    // instead its binary for this very version and this Node is copied from the repository's install, which is what
    // prebuild-install would have placed.
    const bs = version('better-sqlite3');
    sh(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--ignore-scripts',
        '--loglevel=error',
        path.join(scratch, packed.filename),
        `better-sqlite3@${bs}`,
        'zod@^4',
        `typescript@${version('typescript')}`,
        '@types/node@^20',
      ],
      { cwd: scratch },
    );
    const release = path.join(scratch, 'node_modules', 'better-sqlite3', 'build', 'Release');
    fs.mkdirSync(release, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), path.join(release, 'better_sqlite3.node'));
    assert.ok(!fs.existsSync(path.join(scratch, 'node_modules', '@types', 'better-sqlite3')), 'no @types/better-sqlite3 in the consumer');
    const { agent, transcript } = readmeSection();
    assert.match(agent, /defineAgent\(/, 'the README shows an agent');
    fs.writeFileSync(path.join(scratch, 'welcome.ts'), agent);
    const env = cleanEnv({ LOGBOOK_STATE_DIR: path.join(scratch, '.logbook') });
    const npx = (command: string, expect = 0): { stdout: string; stderr: string } => {
      const args = (command.match(/'[^']*'|\S+/g) ?? []).map((a) => a.replace(/^'(.*)'$/, '$1'));
      assert.equal(args.shift(), 'npx');
      return sh('npx', ['--no-install', ...args], { cwd: scratch, env, expect });
    };
    const commands = [...transcript.keys()];
    assert.deepEqual(commands, [
      'npx logbook run welcome.ts --run-id w-1 --crash-at email.send#2@after-execute',
      'npx logbook show w-1',
      'npx logbook resume w-1',
      `npx logbook run welcome.ts --input '{"peeple": 5}'`,
    ]);

    // npx runs the bin through a shell, which reports the SIGKILL as 128 + 9.
    const crashed = npx(commands[0]!, 137);
    assert.equal(crashed.stdout, '', 'killed before it could report');
    const shownJson = JSON.parse(sh('npx', ['--no-install', 'logbook', 'show', 'w-1', '--json'], { cwd: scratch, env }).stdout) as {
      run: { status: string };
      actions: Array<{ status: string; inDoubt: boolean }>;
    };
    assert.equal(shownJson.run.status, 'interrupted');
    assert.deepEqual(
      shownJson.actions.map((a) => [a.status, a.inDoubt]),
      [
        ['committed', false],
        ['started', true],
      ],
    );
    assert.deepEqual(
      comparable(npx(commands[1]!).stdout.trimEnd().split('\n')),
      comparable(transcript.get(commands[1]!)!),
      'logbook show prints what the README shows',
    );
    assert.deepEqual(npx(commands[2]!).stdout.trimEnd().split('\n'), transcript.get(commands[2]!), 'logbook resume prints what the README shows');
    const sent = JSON.parse(fs.readFileSync(path.join(scratch, '.logbook', 'sent.json'), 'utf8')) as string[];
    assert.deepEqual(sent, ['email:w-1:p1@example.com', 'email:w-1:p2@example.com', 'email:w-1:p3@example.com'], 'each email once');
    // A strict input schema refuses a typo'd key, as the README says.
    assert.deepEqual(npx(commands[3]!, 2).stderr.trimEnd().split('\n'), transcript.get(commands[3]!));

    // The host API from plain JavaScript: ESM import of named exports, and require.
    fs.writeFileSync(path.join(scratch, 'host.mjs'), HOST_MJS);
    fs.writeFileSync(path.join(scratch, 'host.cjs'), HOST_CJS);
    assert.deepEqual(JSON.parse(sh(process.execPath, ['host.mjs'], { cwd: scratch }).stdout), [['w-1', 'completed', 2]]);
    assert.deepEqual(JSON.parse(sh(process.execPath, ['host.cjs'], { cwd: scratch }).stdout), { interrupted: 0, defineAgent: 'function', code: 'LB_USAGE' });
  });

  it('type-checks with tsc in ESM (nodenext) and CommonJS (commonjs, node10 resolution) modes, skipLibCheck: false', () => {
    fs.writeFileSync(path.join(scratch, 'host.ts'), HOST);
    // docs/api.md's server snippet (top-level await: an ES module), checked as written.
    const { host } = readmeSection();
    assert.match(host, /openJournal\(/);
    fs.writeFileSync(path.join(scratch, 'server.ts'), host);
    // A deliberate type error in user code, so a check that passes is known to be real.
    fs.writeFileSync(
      path.join(scratch, 'broken.ts'),
      `import { defineAgent } from 'agent-logbook';\nimport { z } from 'zod';\nexport default defineAgent({ name: 'b', input: z.object({ n: z.number() }), run: (_run, input) => input.n.toUpperCase() });\n`,
    );
    const tsc = path.join(scratch, 'node_modules', 'typescript', 'bin', 'tsc');
    const configs = {
      'tsconfig.esm.json': {
        compilerOptions: { ...TSCONFIG_BASE, module: 'nodenext', moduleResolution: 'nodenext' },
        files: ['welcome.ts', 'host.ts', 'server.ts', 'broken.ts'],
      },
      'tsconfig.cjs.json': {
        compilerOptions: { ...TSCONFIG_BASE, module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true },
        files: ['welcome.ts', 'host.ts'],
      },
    };
    for (const [name, config] of Object.entries(configs)) {
      fs.writeFileSync(path.join(scratch, name), JSON.stringify(config, null, 2));
      const withBroken = config.files.includes('broken.ts');
      // --listFiles: the package's declarations are part of the program that was checked.
      const out = sh(process.execPath, [tsc, '-p', name, '--listFiles'], { cwd: scratch, expect: withBroken ? 2 : 0 }).stdout;
      assert.match(out, /node_modules\/agent-logbook\/dist\/types\/runtime\/journal\.d\.ts/, name);
      const errors = out.split('\n').filter((l) => /error TS\d+/.test(l));
      if (withBroken) {
        assert.equal(errors.length, 1, errors.join('\n'));
        assert.match(errors[0] ?? '', /^broken\.ts\(3,\d+\): error TS2339: Property 'toUpperCase' does not exist on type 'number'/);
      } else assert.deepEqual(errors, []);
    }
  });
});
