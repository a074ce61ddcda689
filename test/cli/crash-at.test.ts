// Issue 10 §4: tools that must not mislead. --crash-at with a target that matches nothing, a crash point never
// reached, the CLI's last words before a --crash-at kill, and rehearse with a baseline that does not complete or
// a script that reads files from its working directory.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, FIXTURES, cli, cliJson, tmpDir } from '../helpers';

const knobs = path.join(FIXTURES, 'knobs.ts');
const readsLocal = path.join(FIXTURES, 'reads-local.ts');
const done = (dir: string): string[] => {
  const f = path.join(dir, 'knobs-world.json');
  return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as { done: string[] }).done : [];
};

function rehearse(cwd: string, args: string[]) {
  return spawnSync(process.execPath, [CLI, 'rehearse', ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 300_000 });
}

describe('cli: --crash-at and rehearse do not mislead (issue 10 §4)', function () {
  this.timeout(300_000);

  it('an action phase naming no action type of the script is refused before anything runs', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', knobs, '--run-id', 'typo', '--crash-at', 'knob.akt#1@after-start']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /\[LB_CRASH_TARGET_UNKNOWN\] --crash-at knob\.akt#1@after-start: the script defines no action type "knob\.akt".*Nothing was run\. Use one of the script's action types: "knob\.act"/,
    );
    assert.deepEqual(done(dir), [], 'no effect ran');
    assert.equal(JSON.parse(cli(dir, ['ls', '--json']).stdout).length, 0, 'no run was created');

    assert.equal(cli(dir, ['run', knobs, '--run-id', 'k', '--crash-at', 'second@before']).signal, 'SIGKILL');
    const before = done(dir);
    const resumed = cli(dir, ['resume', 'k', '--crash-at', 'knob.act@compensate:after-start', '--crash-at', 'knobact#1@after-execute']);
    assert.equal(resumed.status, 2);
    assert.match(resumed.stderr, /LB_CRASH_TARGET_UNKNOWN.*"knobact"/);
    assert.deepEqual(done(dir), before, 'the resume ran nothing');
  });

  it('a crash point never reached is reported at the end (stderr, and --json)', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', knobs, '--run-id', 'miss', '--crash-at', 'secnod@before', '--crash-at', 'knob.act#5@after-start']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /warning --crash-at secnod#1@before was never reached: no step "secnod" passed step:before; the run went on without a crash/);
    assert.match(r.stderr, /warning --crash-at knob\.act#5@after-start was never reached: action knob\.act passed action:after-start only 2 time\(s\), not 5/);
    const j = cliJson(dir, ['run', knobs, '--run-id', 'miss2', '--crash-at', 'secnod@before']);
    assert.equal(j.status, 0);
    assert.deepEqual(j.json.crashAtNotReached, [
      '--crash-at secnod#1@before was never reached: no step "secnod" passed step:before; the run went on without a crash.',
    ]);
  });

  it('before a --crash-at kill the CLI says on stderr what is happening', () => {
    const dir = tmpDir();
    const r = cli(dir, ['run', knobs, '--run-id', 'said', '--crash-at', 'knob.act#2@after-execute']);
    assert.equal(r.signal, 'SIGKILL');
    assert.match(
      r.stderr,
      /--crash-at knob\.act#2@after-execute reached in run said: killing this process with SIGKILL now \(a simulated crash.*logbook show said.*logbook resume said/,
    );
  });

  it('rehearse runs campaigns in the working directory, so a script reading local files works as under run', () => {
    const cwd = tmpDir();
    fs.writeFileSync(path.join(cwd, 'agent-config.json'), JSON.stringify({ greeting: 'hello from cwd' }));
    const r = rehearse(cwd, [readsLocal, '--points', 'all', '--jobs', '1', '--json']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { ok: boolean; baseline: { status: string; output: unknown }; summary: { points: number; finished: number } };
    assert.equal(report.baseline.status, 'completed');
    assert.equal(report.baseline.output, 'hello from cwd');
    assert.ok(report.summary.points > 0);
    assert.equal(report.summary.finished, report.summary.points);
  });

  it('rehearse fails (exit 1) when the uncrashed run does not complete, and says why, in text and --json', () => {
    const cwd = tmpDir(); // no agent-config.json: the uncrashed run fails
    const r = rehearse(cwd, [readsLocal, '--points', 'all', '--jobs', '1']);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /\[LB_REHEARSAL_BASELINE\] The uncrashed run of .*reads-local\.ts ended failed: .*ENOENT.*agent-config\.json.*nothing was rehearsed\. Make `logbook run/,
    );
    assert.doesNotMatch(r.stdout, /like the uncrashed run/);
    const j = rehearse(cwd, [readsLocal, '--points', 'all', '--jobs', '1', '--json']);
    assert.equal(j.status, 1);
    const report = JSON.parse(j.stdout) as { ok: boolean; baseline: { status: string; error: { message: string } }; error: { code: string } };
    assert.equal(report.ok, false);
    assert.equal(report.baseline.status, 'failed');
    assert.match(report.baseline.error.message, /ENOENT/);
    assert.equal(report.error.code, 'LB_REHEARSAL_BASELINE');
  });
});
