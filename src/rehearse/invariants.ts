// The invariants of a rehearsed run: ends like the uncrashed run, same output and effects, nothing twice or in doubt.

import type { ProbeResult } from '../runtime/define';
import { reconciledAsHappened } from '../runtime/policy';
import type { JournalSummary } from './campaignReadout';
import type { Baseline, CampaignResult } from './reportSchema';

type Checked = Pick<CampaignResult, 'finished' | 'sameOutput' | 'sameEffects' | 'effectsDiff' | 'duplicates' | 'settled' | 'unsettled' | 'stepsRedoneMax'>;

/** JSON with sorted keys, so two equal values compare equal as text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * `uncounted`: calls of execute a kill cut off from their count (DriveResult.uncounted), added to the journal's: a call
 * is counted with the write that settles its action, so without them a send killed right after it returned is missed.
 * A reconciliation that found the effect happened has counted one such call already (policy's reconciledAsHappened).
 */
export function checkInvariants(baseline: Baseline, s: JournalSummary | undefined, world: ProbeResult | undefined, uncounted: readonly string[] = []): Checked {
  const duplicates: Checked['duplicates'] = [];
  for (const a of s?.actions ?? []) {
    const cut = uncounted.filter((id) => id === a.id).length;
    const calls = a.executions + cut - (cut > 0 && reconciledAsHappened(a.reconciliation) ? 1 : 0);
    if (a.effect === 'non-idempotent' && calls > 1) duplicates.push({ type: a.type, key: a.id, count: calls, source: 'journal' });
  }
  for (const [type, keys] of Object.entries(world ?? {})) {
    const counts = new Map<string, number>();
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    for (const [key, count] of counts) if (count > 1) duplicates.push({ type, key, count, source: 'provider' });
  }
  const effectsDiff: string[] = [];
  let sameEffects: boolean | null = null;
  if (world && baseline.probe) {
    for (const type of new Set([...Object.keys(world), ...Object.keys(baseline.probe)])) {
      const now = new Set(world[type] ?? []);
      const then = new Set(baseline.probe[type] ?? []);
      for (const k of then) if (!now.has(k)) effectsDiff.push(`${type}: ${k} is missing`);
      for (const k of now) if (!then.has(k)) effectsDiff.push(`${type}: ${k} was not in the uncrashed run`);
    }
    sameEffects = effectsDiff.length === 0;
  }
  const settled: Checked['settled'] = [];
  const unsettled: Checked['unsettled'] = [];
  for (const a of s?.actions ?? []) {
    if (a.reconciliation) settled.push({ type: a.type, id: a.id, how: a.reconciliation });
    if (a.status === 'started') unsettled.push({ type: a.type, id: a.id });
  }
  let stepsRedoneMax = 0;
  for (const [attempt, n] of s?.restartsByAttempt ?? []) if (attempt > 1) stepsRedoneMax = Math.max(stepsRedoneMax, n);
  return {
    finished: s !== undefined && s.status === baseline.status,
    sameOutput: s !== undefined && canonical(s.output) === canonical(baseline.output),
    sameEffects,
    effectsDiff,
    duplicates,
    settled,
    unsettled,
    stepsRedoneMax,
  };
}

/** A campaign broke something a person must look at. */
export function broken(c: CampaignResult): boolean {
  return (
    !c.finished ||
    !c.sameOutput ||
    c.sameEffects === false ||
    c.duplicates.length > 0 ||
    c.unsettled.length > 0 ||
    c.decisions.some((d) => d.source === 'assumed') ||
    c.error !== null
  );
}
