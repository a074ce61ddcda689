// Checks one rebuilt cut: it opens through the store, passes integrity_check, keeps what was promised, and resumes without repeating an effect.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime/store';
import { resumeRun } from '../../src/runtime/engine';
import { sqliteOf } from '../../src/runtime/store/sqlite';
import type { Op } from './log';
import { RUN_ID } from './record';
import { journalOf, provider, type Scenario } from './scenarios';

export interface Promises {
  /** Effects that began before the cut: key → effect class. */
  readonly effects: Map<string, string>;
  /** Commits acknowledged to the script, and whether a power loss may still take them (lazy, no WAL sync since). */
  readonly commits: Map<string, boolean>;
  readonly steps: Set<number>;
}

/** What the markers before `cut` say the journal owes. */
export function promisesAt(ops: readonly Op[], cut: number, s: Scenario): Promises {
  const effects = new Map<string, string>();
  const commits = new Map<string, boolean>();
  const steps = new Set<number>();
  for (let i = 0; i < cut; i++) {
    const op = ops[i]!;
    if (op.kind === 'sync' && op.file.endsWith('-wal')) for (const k of commits.keys()) commits.set(k, false);
    if (op.kind !== 'mark') continue;
    const [what, a, b] = op.text.split(' ');
    if (what === 'effect' && a && b) effects.set(b, a);
    else if (what === 'acked' && a === 'commit' && b) commits.set(b, s.lazyCommits);
    else if (what === 'acked' && a === 'step' && b) steps.add(Number(b));
  }
  return { effects, commits, steps };
}

/** Writes the rebuilt files into `dir` (emptied first). */
export function materialize(dir: string, files: Map<string, Buffer | undefined>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of files) if (bytes) fs.writeFileSync(path.join(dir, name), bytes);
}

/** The invariants' failures at this cut (empty: it holds). With `resume`, the run is also resumed to its end. */
export async function checkCut(dir: string, s: Scenario, owed: Promises, resume: boolean): Promise<string[]> {
  const bad: string[] = [];
  let store;
  try {
    store = openStore(journalOf(dir));
  } catch (err) {
    return [`the journal does not open: ${(err as { code?: string }).code ?? ''} ${String(err)}`];
  }
  try {
    const ic = sqliteOf(store.db).pragma('integrity_check', { simple: true });
    if (ic !== 'ok') bad.push(`integrity_check: ${String(ic)}`);
    const run = store.reader.run(RUN_ID);
    for (const [key, cls] of owed.effects) {
      if (cls === 'non-idempotent' && !store.reader.action(RUN_ID, key)) bad.push(`effect ${key} ran, its durable started is gone`);
    }
    for (const [key, losable] of owed.commits) {
      if (!losable && store.reader.action(RUN_ID, key)?.status !== 'committed')
        bad.push(`acknowledged commit ${key} is lost (${store.reader.action(RUN_ID, key)?.status ?? 'no row'})`);
    }
    for (const idx of owed.steps) {
      if (store.reader.step(RUN_ID, idx)?.status !== 'completed') bad.push(`acknowledged checkpoint of step ${idx} is lost`);
    }
    if (!resume || !run || run.status === 'completed' || run.status === 'queued') return bad;
    provider.reset(owed.effects.keys());
    for (const [key, cls] of owed.effects) if (cls === 'non-idempotent') provider.once.add(key);
    let decisions: Record<string, 'happened' | 'not-happened'> = {};
    for (let attempt = 0; attempt < 3; attempt++) {
      const out = await resumeRun(store, s.agent, RUN_ID, { role: 'powerloss', durability: s.durability, decisions, log: () => undefined });
      if (out.status === 'completed') break;
      const waiting = out.status === 'needs-decision' ? out.waitingOn?.actionId : undefined;
      if (!waiting) {
        bad.push(`the resume ended ${out.status}${out.error ? `: ${out.error.message}` : ''}`);
        break;
      }
      decisions = { [waiting]: provider.seen.has(waiting) ? 'happened' : 'not-happened' };
    }
    for (const [key, n] of provider.seen) {
      if (n > 1 && provider.once.has(key)) bad.push(`effect ${key} ran ${n} times`);
    }
  } catch (err) {
    bad.push(`checking the cut threw: ${(err as { code?: string }).code ?? ''} ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    store.close();
  }
  return bad;
}
