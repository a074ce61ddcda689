// The priced fixture (a coercion, a dollars-to-cents transform, defaults): the input every attempt must see, its logs, and the detached-run scenario run on both journals.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliSync, startWorker, stopWorker, withStore, type Env, type Worker } from './pg/workers';

export const PRICED_DIR = path.join(__dirname, 'fixtures', 'parsed-input');
export const PRICED = path.join(PRICED_DIR, 'priced.ts');
/** The raw input a user passes: dollars as text. */
export const RAW = { amount: '12.50' };
/** What the schema makes of it, once: every attempt of every kind must see exactly this. */
export const PARSED = { amount: 1250, memo: 'none', tags: ['parsed'] };
/** A completed run's output: the replayed and the new steps agree with the input. */
export const OUTPUT = { quoted: 1250, charged: 1250, amount: 1250, memo: 'none', tags: ['parsed'] };

function lines(dir: string, file: string): Array<Record<string, unknown>> {
  try {
    return fs
      .readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/** The input each attempt of `runId` got, in order, with its attempt number. */
export function inputsSeen(dir: string, runId: string): Array<{ attempt: unknown; input: unknown }> {
  return lines(dir, 'inputs.log')
    .filter((l) => l.runId === runId)
    .map((l) => ({ attempt: l.attempt, input: l.input }));
}

/** The cents each charge of `runId` was made for (the provider's side). */
export function charges(dir: string, runId: string): unknown[] {
  return lines(dir, 'charges.log')
    .filter((l) => l.key === `charge:${runId}`)
    .map((l) => l.cents);
}

export function refunds(dir: string): Array<Record<string, unknown>> {
  return lines(dir, 'refunds.log');
}

/**
 * `run --detach` then workers: the first worker is killed (SIGKILL) right after the charge committed, a second takes the
 * run over and finishes it. Both attempts get the input the detach parsed, used as it is.
 */
export async function detachedAttemptsSeeParsedInput(e: Env, runId: string): Promise<void> {
  const queued = cliSync(e, ['run', '--detach', PRICED, '--input', JSON.stringify(RAW), '--run-id', runId]);
  assert.equal(queued.status, 0, queued.stderr);
  const a = startWorker(e, `${runId}-a`, ['--crash-at', 'priced.charge#1@after-commit'], PRICED_DIR);
  let b: Worker | undefined;
  try {
    assert.equal((await a.exited).signal, 'SIGKILL', 'the first worker was killed after the charge');
    b = startWorker(e, `${runId}-b`, [], PRICED_DIR);
    await b.waitLine(new RegExp(`${runId} completed`));
    assert.equal((await stopWorker(b)).code, 0);
  } finally {
    a.child.kill('SIGKILL');
    b?.child.kill('SIGKILL');
  }
  assert.deepEqual(inputsSeen(e.dir, runId), [
    { attempt: 1, input: PARSED },
    { attempt: 2, input: PARSED },
  ]);
  assert.deepEqual(charges(e.dir, runId), [1250], 'charged once, in cents');
  const out = withStore(e, (s) => s.reader.run(runId)?.output);
  assert.deepEqual(JSON.parse(out ?? 'null'), OUTPUT);
}
