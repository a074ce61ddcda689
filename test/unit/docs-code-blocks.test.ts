// Every code block of README.md and docs/*.md that a test can run is run: TypeScript is type-checked against the
// package's declarations, shell commands and transcripts are checked against the CLI's commands and options.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMMAND_MODULES } from '../../src/cli/commandModules';
import { main } from '../../src/cli/cliMain';
import { ROOT, blocksOf, cliOptions, commandProblems, commandsOf, docFiles, planOf, shellSyntax, typecheck, type Block } from './docsBlocks';

async function usage(): Promise<string> {
  const out: string[] = [];
  await main(['--help'], { out: (l) => out.push(l), err: () => undefined });
  return out.join('\n');
}

const scripts = new Set(Object.keys((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts));

/** The problems of the command blocks among `blocks`, by `file:line`. */
async function commandBlockProblems(blocks: readonly Block[]): Promise<string[]> {
  const cli = cliOptions(await usage());
  const problems: string[] = [];
  for (const b of blocks) {
    const plan = planOf(b);
    if (plan.kind !== 'commands') continue;
    const found = [...(plan.transcript ? [] : shellSyntax(b.body)), ...commandsOf(b.body, plan.transcript).flatMap((c) => commandProblems(c, cli, scripts))];
    problems.push(...found.map((p) => `${b.file}:${b.line}: ${p}`));
  }
  return problems;
}

function typeProblems(blocks: readonly Block[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-docs-blocks-'));
  try {
    const byBlock = typecheck(
      blocks.filter((b) => planOf(b).kind === 'typecheck'),
      dir,
    );
    return [...byBlock].flatMap(([b, list]) => list.map((p) => `${b.file}:${b.line}: ${p}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('README and docs: code blocks', function () {
  this.timeout(60_000);
  const all = docFiles().flatMap((f) => blocksOf(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));

  it('finds the blocks, and each is run by a check or marked as not runnable', () => {
    assert.ok(all.length >= 25, String(all.length));
    const unrunnable = all.flatMap((b) => {
      const p = planOf(b);
      return p.kind === 'unrunnable' ? [`${b.file}:${b.line}: ${p.why}`] : [];
    });
    assert.deepEqual(unrunnable, []);
    assert.ok(all.filter((b) => planOf(b).kind === 'typecheck').length >= 2, 'the README agent and the host API example are type-checked');
  });

  it('TypeScript blocks that are whole files type-check against the package as a consumer sees it (dist/types)', () => {
    assert.deepEqual(typeProblems(all), []);
  });

  it("knows each command's options from its usage: the command modules' own, and main's for the others", async () => {
    const cli = cliOptions(await usage());
    for (const m of COMMAND_MODULES) {
      const own = cliOptions(`  ${m.usage}`).get(m.name);
      assert.ok(own, `${m.name}: its usage starts with \`logbook ${m.name}\``);
      assert.deepEqual([...(cli.get(m.name) ?? [])].sort(), [...own].sort(), m.name);
    }
    for (const c of ['run', 'resume', 'compensate', 'approve', 'reject', 'ls', 'show']) assert.ok(cli.has(c), c);
    assert.ok(cli.get('run')?.has('--crash-at') && cli.get('worker')?.has('--concurrency'));
  });

  it('shell blocks parse, and each `logbook` command, option and `npm run` script they name exists', async () => {
    assert.deepEqual(await commandBlockProblems(all), []);
  });

  describe('the checks reject a broken block (negative controls)', () => {
    const planted = (info: string, body: string, before = ''): Block[] => blocksOf('planted.md', `${before}\n\`\`\`${info}\n${body}\n\`\`\`\n`);

    it('a misspelt option, an unknown command, a missing npm script, a shell syntax error', async () => {
      const problems = await commandBlockProblems([
        ...planted('sh', 'npx logbook run agent.ts --crash-when email.send#1@after-start'),
        ...planted('', '$ logbook restart run-1\nrestarted'),
        ...planted('sh', 'npm run docs:everything'),
        ...planted('sh', 'logbook ls && (logbook show run-1'),
        ...planted('sh', "logbook run examples/email-campaign.ts --input '{recipients: 2}' --crash-at email.send#1@mid-flight"),
        ...planted('sh', 'logbook resume run-1 --decide email:run-1:a@b=maybe && logbook run examples/no-such-agent.ts'),
      ]);
      assert.equal(problems.length, 8, problems.join('\n'));
      assert.match(problems[0] ?? '', /logbook run: no option --crash-when/);
      assert.match(problems[1] ?? '', /logbook restart: no such command/);
      assert.match(problems[2] ?? '', /npm run docs:everything: package.json has no such script/);
      assert.match(problems[3] ?? '', /bash -n/);
      assert.match(problems[4] ?? '', /--input \{recipients: 2\}: .*JSON/);
      assert.match(problems[5] ?? '', /--crash-at email\.send#1@mid-flight: /);
      assert.match(problems[6] ?? '', /--decide email:run-1:a@b=maybe: not <action-id>=happened\|not-happened/);
      assert.match(problems[7] ?? '', /no file examples\/no-such-agent\.ts/);
      assert.deepEqual(await commandBlockProblems(planted('sh', "logbook resume run-1 --decide 'email:run-1:a@b=happened' --journal x.db # a note")), []);
    });

    it('a TypeScript block that misuses the API, or imports what the package does not export', () => {
      const problems = typeProblems([
        ...planted(
          'ts',
          "import { defineAction } from 'agent-logbook';\nexport const a = defineAction({ type: 'x', version: 1, effect: 'sometimes', key: () => 'k', execute: () => 1 });",
        ),
        ...planted('ts', "import { openJournal, resumeEverything } from 'agent-logbook';\nexport { openJournal, resumeEverything };"),
      ]);
      assert.ok(
        problems.some((p) => /planted\.md:2: line 2: TS2322 .*sometimes/.test(p)),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => /resumeEverything/.test(p)),
        problems.join('\n'),
      );
      assert.deepEqual(typeProblems(planted('ts', "import { openJournal } from 'agent-logbook';\nexport const j: typeof openJournal = openJournal;")), []);
    });

    it('an unmarked block of no checked language is refused; a marked one is skipped', () => {
      assert.equal(planOf(planted('', 'some text the docs show')[0]!).kind, 'unrunnable');
      assert.equal(planOf(planted('lua', "local dap = require('dap')")[0]!).kind, 'unrunnable');
      assert.equal(planOf(planted('lua', "local dap = require('dap')", '<!-- not-run: Neovim reads it -->')[0]!).kind, 'skipped');
      assert.equal(planOf(planted('ts fragment', 'await run.do(action, args);')[0]!).kind, 'skipped');
    });
  });
});
