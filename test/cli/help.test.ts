// Every command answers --help and -h with its own usage and exit 0, and writes nothing.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/cliMain';
import { COMMAND_MODULES } from '../../src/cli/commandModules';

async function cli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('CLI: --help on every command', () => {
  let commands: string[] = [];
  let cwd = '';
  let dir = '';
  before(async () => {
    const all = await cli(['--help']);
    commands = [
      ...new Set(
        all.out
          .join('\n')
          .split('\n')
          .flatMap((l) => /^ {2}logbook ([a-z-]+)/.exec(l)?.[1] ?? []),
      ),
    ];
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-help-'));
    cwd = process.cwd();
    process.chdir(dir);
  });
  after(() => {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the commands, worker among them', () => {
    assert.ok(commands.length >= 12, commands.join(' '));
    for (const c of ['run', 'resume', 'worker', 'rehearse', 'fork', 'plan', 'delete']) assert.ok(commands.includes(c), c);
  });

  for (const flag of ['--help', '-h']) {
    it(`\`logbook <command> ${flag}\` prints that command's usage, exits 0 and creates no journal`, async () => {
      for (const c of commands) {
        // After other arguments too: the user typed the command, then asked.
        for (const argv of [
          [c, flag],
          [c, 'some-run', flag],
        ]) {
          const r = await cli(argv);
          assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err.join('\n')}`);
          assert.equal(r.out[0], 'Usage:', argv.join(' '));
          assert.ok(
            r.out.slice(1).some((l) => l.startsWith(`  logbook ${c}`)),
            `${argv.join(' ')} shows its usage:\n${r.out.join('\n')}`,
          );
          assert.ok(!r.out.some((l) => /^ {2}logbook /.test(l) && !l.startsWith(`  logbook ${c}`)), `${argv.join(' ')} shows only its own`);
        }
      }
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written');
    });
  }

  it('every command module refuses an unknown flag or a flag without its value with LB_USAGE and a remedy, and writes nothing', async () => {
    for (const m of COMMAND_MODULES) {
      // The worker takes no positional argument (one is refused as such); the others take a run id or a script.
      const first = m.name === 'worker' ? [m.name] : [m.name, 'some-run'];
      for (const argv of [
        [...first, '--no-such-flag'],
        [...first, '--journal'],
      ]) {
        const r = await cli(argv);
        assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err.join('\n')}`);
        const line = r.err.join('\n');
        assert.match(line, /\[LB_USAGE\]/, argv.join(' '));
        assert.match(line, /--no-such-flag|--journal/, `${argv.join(' ')} names the flag: ${line}`);
        assert.match(line, /logbook/, `${argv.join(' ')} says what to run instead: ${line}`);
      }
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written');
  });

  it('a --help after `--` is an argument, and an unknown command with --help is still refused', async () => {
    assert.equal((await cli(['nope', '--help'])).code, 2);
    const r = await cli(['show', '--', '--help']);
    assert.notEqual(r.out[0], 'Usage:');
  });
});

describe('docs/cli.md: the CLI reference', () => {
  it('shows exactly the usage lines of `logbook --help`, in its order', async () => {
    const printed = (await cli(['--help'])).out.filter((l) => l.startsWith('  logbook ')).map((l) => l.slice(2));
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8');
    const block = /```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    assert.deepEqual(block.trimEnd().split('\n'), printed);
  });
});
