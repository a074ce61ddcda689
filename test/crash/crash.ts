// Crash-test helpers: fault points derived from an uncrashed run's journal, and kill-then-resume to the end.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli, cliJson, show } from '../helpers';

export interface Point {
  readonly spec: string;
  readonly target: string;
  readonly phase: string;
  readonly type?: string;
}

/** Every fault point a fresh run passes, in order: steps by name and occurrence, actions by type and occurrence. */
export function pointsOf(journal: { steps: Array<{ name: string }>; actions: Array<{ type: string; effect: string; step: number }> }): Point[] {
  const points: Point[] = [];
  const stepSeen = new Map<string, number>();
  const typeSeen = new Map<string, number>();
  journal.steps.forEach((s, idx) => {
    const n = (stepSeen.get(s.name) ?? 0) + 1;
    stepSeen.set(s.name, n);
    points.push({ spec: `${s.name}#${n}@step:before`, target: s.name, phase: 'step:before' });
    for (const a of journal.actions.filter((x) => x.step === idx)) {
      const k = (typeSeen.get(a.type) ?? 0) + 1;
      typeSeen.set(a.type, k);
      const phases =
        a.effect === 'read-only' ? ['before-start', 'after-execute', 'after-commit'] : ['before-start', 'after-start', 'after-execute', 'after-commit'];
      for (const p of phases) points.push({ spec: `${a.type}#${k}@${p}`, target: a.type, phase: `action:${p}`, type: a.type });
    }
    points.push({ spec: `${s.name}#${n}@after-checkpoint`, target: s.name, phase: 'step:after-checkpoint' });
  });
  return points;
}

export interface Rehearsed {
  readonly output: unknown;
  readonly journal: any;
  readonly decisions: string[];
  readonly resumes: number;
}

/**
 * Runs `script` killed at `spec`, then resumes until it ends. A stop for a decision is answered from the
 * provider's own record (`happened(key)`), as a person checking the provider would.
 */
export function killAndResume(dir: string, script: string, input: string, spec: string, happened: (key: string) => boolean): Rehearsed {
  const first = cli(dir, ['run', script, '--input', input, '--run-id', 'r', '--crash-at', spec]);
  assert.equal(first.signal, 'SIGKILL', `expected a kill at ${spec}: ${first.stdout}${first.stderr}`);
  const decisions: string[] = [];
  let decide: string[] = [];
  for (let resumes = 1; resumes <= 4; resumes++) {
    const r = cliJson(dir, ['resume', 'r', ...decide]);
    if (r.status === 0) return { output: r.json.output, journal: show(dir, 'r'), decisions, resumes };
    assert.equal(r.status, 3, `resume after ${spec} exited ${r.status}: ${JSON.stringify(r.json)} ${r.stderr}`);
    const id: string = r.json.waitingOn.actionId;
    const d = happened(id) ? 'happened' : 'not-happened';
    decisions.push(`${id}=${d}`);
    decide = ['--decide', `${id}=${d}`];
  }
  assert.fail(`run did not finish after ${spec}`);
}

export function readJson(dir: string, file: string): any {
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
}
