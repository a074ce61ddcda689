// Rehearsal in the Test Explorer: agents and their kill points found, runs that pass and fail at the right line, cancel, a failing baseline.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Rehearsals } from '../../src/extension/rehearsal';
import { ROOT, api, until, workspace } from './helpers';

const dir = (): string => path.join(workspace(), 'rehearse');
const email = (): string => path.join(dir(), 'email-campaign.ts');
const emailMany = (): string => path.join(dir(), 'email-many.ts');
const noVerify = (): string => path.join(dir(), 'no-verify.ts');
const fails = (): string => path.join(dir(), 'fails.ts');

/** The 0-based line of the first occurrence of `needle` in a file. */
function lineOf(file: string, needle: string): number {
  const i = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `${needle} in ${file}`);
  return i;
}

/** The pids in a process group (the rehearsal runs as one: its campaign children and their `logbook` runs). */
function group(pgid: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '-g', String(pgid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

async function item(r: Rehearsals, file: string): Promise<vscode.TestItem> {
  const i = await r.itemFor(file);
  assert.ok(i, `a test item for ${file}`);
  return i;
}

function children(i: vscode.TestItem): vscode.TestItem[] {
  const out: vscode.TestItem[] = [];
  i.children.forEach((c) => out.push(c));
  return out;
}

async function run(r: Rehearsals, i: vscode.TestItem, token = new vscode.CancellationTokenSource().token): Promise<void> {
  await r.allProfile.runHandler(new vscode.TestRunRequest([i], undefined, r.allProfile), token);
}

describe('rehearsal in the Test Explorer', function () {
  this.timeout(600_000);

  before(async () => {
    // Agents as a project has them: the email example with its providers, a send without verify, one that fails.
    fs.rmSync(dir(), { recursive: true, force: true });
    fs.cpSync(path.join(ROOT, 'examples'), dir(), { recursive: true });
    const withProviders = (f: string): string =>
      fs.readFileSync(path.join(ROOT, 'test', 'fixtures', f), 'utf8').replace('../../examples/providers/', './providers/');
    fs.writeFileSync(noVerify(), withProviders('control-no-verify.ts'));
    fs.writeFileSync(fails(), withProviders('fails-uncrashed.ts'));
    fs.copyFileSync(email(), emailMany());
    const folder = vscode.workspace.workspaceFolders?.[0];
    // The input comes from each agent's launch configuration.
    await vscode.workspace.getConfiguration('launch', folder?.uri).update(
      'configurations',
      [
        { type: 'logbook', request: 'launch', name: 'email', program: '${workspaceFolder}/rehearse/email-campaign.ts', input: { recipients: 2 } },
        { type: 'logbook', request: 'launch', name: 'email many', program: '${workspaceFolder}/rehearse/email-many.ts', input: { recipients: 40 } },
        { type: 'logbook', request: 'launch', name: 'no verify', program: '${workspaceFolder}/rehearse/no-verify.ts', input: { recipients: 1 } },
      ],
      vscode.ConfigurationTarget.WorkspaceFolder,
    );
    await vscode.workspace.getConfiguration('logbook', folder?.uri).update('rehearse', { jobs: 2 }, vscode.ConfigurationTarget.WorkspaceFolder);
  });

  after(async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    await vscode.workspace.getConfiguration('launch', folder?.uri).update('configurations', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('logbook', folder?.uri).update('rehearse', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('logbook', folder?.uri).update('env', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
  });

  it('finds the agents of the workspace and, from an uncrashed run, their kill points at their lines', async () => {
    const r = (await api()).rehearsals;
    await r.discover();
    const ids: string[] = [];
    r.controller.items.forEach((i) => ids.push(i.uri?.fsPath ?? ''));
    for (const f of [path.join(workspace(), 'agent.ts'), email(), noVerify(), fails()]) assert.ok(ids.includes(f), `${f} in ${ids.join(', ')}`);
    assert.ok(!ids.some((f) => f.includes(`${path.sep}providers${path.sep}`)), 'a provider module defines no agent');
    const e = await item(r, email());
    assert.equal(e.range?.start.line, lineOf(email(), 'defineAgent({'));
    await r.controller.resolveHandler?.(e);
    const points = children(e);
    // 3 steps × 2 step points + 2 sends × 5 action points, as `logbook rehearse --points all` enumerates them.
    assert.equal(points.length, 16, points.map((p) => p.description).join(', '));
    const send = points.find((p) => p.description === 'email.send#2@after-execute');
    assert.ok(send, points.map((p) => p.description).join(', '));
    assert.equal(send.range?.start.line, lineOf(email(), 'run.do(sendEmail'));
    const load = points.find((p) => p.description === 'load recipients#1@after-checkpoint');
    assert.equal(load?.range?.start.line, lineOf(email(), "run.step('load recipients'"));
  });

  it('a run of the email example passes every point', async () => {
    const r = (await api()).rehearsals;
    const e = await item(r, email());
    await run(r, e);
    assert.equal(r.outcomes.get(e.id)?.state, 'passed', JSON.stringify(r.outcomes.get(e.id)));
    const points = children(e);
    assert.equal(points.length, 16);
    assert.deepEqual(
      points.filter((p) => r.outcomes.get(p.id)?.state !== 'passed').map((p) => `${p.description}: ${JSON.stringify(r.outcomes.get(p.id))}`),
      [],
    );
    assert.equal(r.active.size, 0);
  });

  it('a non-idempotent send without verify fails at its after-execute point, with the invariant, at its run.do line', async () => {
    const a = await api();
    const r = a.rehearsals;
    await vscode.workspace
      .getConfiguration('logbook', vscode.workspace.workspaceFolders?.[0]?.uri)
      .update('env', { OUTBOX_IGNORE_KEYS: '1' }, vscode.ConfigurationTarget.WorkspaceFolder);
    const n = await item(r, noVerify());
    await run(r, n);
    assert.equal(r.outcomes.get(n.id)?.state, 'failed');
    const byDesc = new Map(children(n).map((c) => [c.description ?? '', r.outcomes.get(c.id)]));
    const bad = byDesc.get('email.send#1@after-execute');
    assert.equal(bad?.state, 'failed', JSON.stringify([...byDesc]));
    const [m] = bad.messages;
    assert.match(m?.text ?? '', /^effect twice: email\.send `email:rehearsal:user1@example\.com` ×2/);
    assert.match(m?.text ?? '', /needs a decision: no verify/);
    assert.match(
      m?.text ?? '',
      /logbook run rehearse\/no-verify\.ts --input '\{"recipients":1\}' --run-id rehearsal --crash-at email\.send#1@after-execute --journal /,
    );
    const line = lineOf(noVerify(), 'run.do(send');
    assert.equal(m?.line, line);
    assert.equal(m?.file, noVerify());
    assert.equal(byDesc.get('email.send#1@after-commit')?.state, 'passed');
    assert.equal(byDesc.get('email.send#1@before-start')?.state, 'passed');
    // Until the next rehearsal, the editor marks the line.
    assert.ok(
      r.failing
        .get(noVerify())
        ?.get(line)
        ?.some((t) => t.startsWith('email.send#1@after-execute: effect twice')),
      JSON.stringify([...(r.failing.get(noVerify()) ?? [])]),
    );
  });

  it('cancel stops the rehearsal: its processes, campaign children and runs alike, none left', async () => {
    const r = (await api()).rehearsals;
    const e = await item(r, emailMany());
    const cts = new vscode.CancellationTokenSource();
    const done = run(r, e, cts.token);
    await until('a first point rehearsed', () => children(e).some((c) => r.outcomes.get(c.id)?.state === 'passed'), 120_000);
    const pgid = [...r.active][0]?.pid;
    assert.ok(pgid, 'a rehearsal process');
    assert.ok(group(pgid).length >= 3, `the rehearsal, its campaign children and their runs: ${group(pgid).join(' ')}`);
    cts.cancel();
    await done;
    await until('no process of the rehearsal left', () => group(pgid).length === 0, 10_000);
    assert.equal(r.active.size, 0);
    assert.equal(r.outcomes.get(e.id)?.state, 'skipped');
    const states = children(e).map((c) => r.outcomes.get(c.id)?.state);
    assert.ok(states.includes('skipped') && !states.includes('started') && !states.includes('enqueued'), states.join(' '));
    assert.ok(states.length >= 100, 'the cancelled campaign was long');
  });

  it('an agent whose uncrashed run fails fails the item with its error', async () => {
    const r = (await api()).rehearsals;
    const f = await item(r, fails());
    await run(r, f);
    const o = r.outcomes.get(f.id);
    assert.equal(o?.state, 'failed', JSON.stringify(o));
    assert.match(o.messages[0]?.text ?? '', /The uncrashed run of .*fails\.ts ended failed: .*the warehouse API said 503/);
    assert.equal(o.messages[0]?.line, lineOf(fails(), 'defineAgent({'));
  });
});
