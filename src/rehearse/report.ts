// The rehearsal report: totals over all campaigns, findings in sentences, a summary table, and JSON for machines.

import { paint, table } from '../shared/terminal';
import { broken } from './invariants';
import { pointLabel } from './points';
import type { Baseline, CampaignResult } from './reportSchema';

export interface Summary {
  readonly points: number;
  readonly kills: number;
  readonly finished: number;
  readonly sameOutput: number;
  /** Campaigns whose provider record could be compared (the agent has a probe), and how many matched. */
  readonly sameEffects: { readonly matched: number; readonly compared: number };
  readonly withDuplicates: number;
  readonly duplicatesByType: Record<string, number>;
  readonly settled: Record<string, number>;
  readonly decisions: Array<{ type: string; phases: string[]; happened: number; notHappened: number; assumed: number; withoutResult: number }>;
  readonly approvals: Record<string, number>;
  readonly unsettled: number;
  readonly stepsRedoneMax: number;
  readonly saved: Record<string, number>;
  readonly errors: string[];
  readonly broken: number;
}

export interface RehearsalReport {
  readonly script: string;
  readonly agent: string;
  readonly input: unknown;
  readonly selection: { readonly mode: 'all' | 'random'; readonly requested: number | null; readonly seed: string; readonly available: number };
  readonly depth: number;
  readonly jobs: number;
  readonly baseline: Baseline;
  readonly campaigns: readonly CampaignResult[];
  readonly summary: Summary;
  readonly ok: boolean;
  readonly ms: number;
}

const add = (m: Record<string, number>, k: string, n = 1): void => void (m[k] = (m[k] ?? 0) + n);

const HOW: Record<string, string> = {
  verified: 'verify found it',
  'verified-absent': 'verify found nothing, executed',
  're-executed': 're-executed with its key',
  'decided-happened': "provider's record: happened",
  'decided-not-happened': "provider's record: not happened",
};

/** How one in-doubt action was settled, in words; a decision the rehearsal had to assume is called out. */
export function settledLabel(c: CampaignResult, s: CampaignResult['settled'][number]): string {
  if (c.decisions.some((d) => d.id === s.id && d.source === 'assumed')) return 'undecidable, assumed not happened';
  return HOW[s.how] ?? s.how;
}

export function summarise(campaigns: readonly CampaignResult[]): Summary {
  const duplicatesByType: Record<string, number> = {};
  const settled: Record<string, number> = {};
  const approvals: Record<string, number> = {};
  const saved: Record<string, number> = {};
  const decisions = new Map<string, { type: string; phases: Set<string>; happened: number; notHappened: number; assumed: number; withoutResult: number }>();
  const errors: string[] = [];
  let compared = 0;
  let matched = 0;
  for (const c of campaigns) {
    for (const d of c.duplicates) add(duplicatesByType, `${d.type} (${d.source})`);
    for (const s of c.settled) add(settled, settledLabel(c, s));
    for (const a of c.approvals) add(approvals, a.type);
    for (const [t, n] of Object.entries(c.saved)) add(saved, t, n);
    for (const d of c.decisions) {
      const e = decisions.get(d.type) ?? { type: d.type, phases: new Set<string>(), happened: 0, notHappened: 0, assumed: 0, withoutResult: 0 };
      e.phases.add(d.phase.replace(/^action:/, ''));
      if (d.source === 'assumed') e.assumed++;
      else if (d.decision === 'happened') {
        e.happened++;
        if (d.withResult === false) e.withoutResult++;
      } else e.notHappened++;
      decisions.set(d.type, e);
    }
    if (c.sameEffects !== null) {
      compared++;
      if (c.sameEffects) matched++;
    }
    if (c.error) errors.push(`${pointLabel(c.point)}: ${c.error}`);
  }
  return {
    points: campaigns.length,
    kills: campaigns.reduce((s, c) => s + c.kills.length, 0),
    finished: campaigns.filter((c) => c.finished).length,
    sameOutput: campaigns.filter((c) => c.sameOutput).length,
    sameEffects: { matched, compared },
    withDuplicates: campaigns.filter((c) => c.duplicates.length > 0).length,
    duplicatesByType,
    settled,
    decisions: [...decisions.values()].map((d) => ({ ...d, phases: [...d.phases] })),
    approvals,
    unsettled: campaigns.reduce((s, c) => s + c.unsettled.length, 0),
    stepsRedoneMax: Math.max(0, ...campaigns.map((c) => c.stepsRedoneMax)),
    saved,
    errors,
    broken: campaigns.filter(broken).length,
  };
}

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;
const secs = (ms: number): string => (ms >= 10_000 ? `${(ms / 1000).toFixed(0)} s` : `${(ms / 1000).toFixed(1)} s`);
const tally = (m: Record<string, number>): string =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

function check(ok: boolean, text: string, count: string): [string, string, string] {
  return [ok ? paint('green', 'ok') : paint('red', 'BROKEN'), text, count];
}

/** The summary table: one row per step or action type that was killed at. */
function byTarget(campaigns: readonly CampaignResult[]): string {
  const rows = new Map<string, CampaignResult[]>();
  for (const c of campaigns) {
    const point = c.point.point;
    const kind = point.startsWith('step:')
      ? 'step'
      : point.startsWith('compensate:')
        ? 'inverse'
        : point.startsWith('child:')
          ? 'child run'
          : point.startsWith('event:')
            ? 'event'
            : point.startsWith('sleep:')
              ? 'sleep'
              : 'action';
    const key = `${kind}\u0000${c.point.target}`;
    rows.set(key, [...(rows.get(key) ?? []), c]);
  }
  return table(
    ['KILLED IN', 'KIND', 'POINTS', 'FINISHED', 'SAME OUTPUT', 'TWICE', 'IN DOUBT, SETTLED BY'],
    [...rows.entries()].map(([key, cs]) => {
      const [kind = '', target = ''] = key.split('\u0000');
      const settled: Record<string, number> = {};
      for (const c of cs) {
        for (const s of c.settled) add(settled, settledLabel(c, s));
      }
      const finished = cs.filter((c) => c.finished).length;
      const same = cs.filter((c) => c.sameOutput).length;
      const twice = cs.filter((c) => c.duplicates.length > 0).length;
      return [
        target,
        kind,
        String(cs.length),
        finished === cs.length ? `${finished}/${cs.length}` : paint('red', `${finished}/${cs.length}`),
        same === cs.length ? `${same}/${cs.length}` : paint('red', `${same}/${cs.length}`),
        twice === 0 ? '0' : paint('red', String(twice)),
        tally(settled),
      ];
    }),
  );
}

export function renderReport(r: RehearsalReport): string {
  const s = r.summary;
  const b = r.baseline;
  const out: string[] = [];
  const approvals = b.approvals.length ? `, ${plural(b.approvals.length, 'approval gate')} approved automatically` : '';
  out.push(`${paint('bold', 'logbook rehearse')}  ${r.agent}  (${r.script})`);
  out.push(
    `  uncrashed run  ${b.status} in ${plural(b.processes, 'process', 'processes')}${approvals}: ${plural(b.steps, 'step')}, ${plural(b.actions, 'action')}, ${secs(b.ms)}`,
  );
  const sel =
    r.selection.mode === 'all'
      ? `all ${r.selection.available} fault points`
      : `${s.points} of ${r.selection.available} fault points (seed ${r.selection.seed})`;
  const mean = r.campaigns.reduce((a, c) => a + c.ms, 0) / Math.max(1, r.campaigns.length);
  out.push(`  campaigns      ${sel}, ${s.kills} kills (depth ${r.depth}), ${r.jobs} in parallel: ${secs(r.ms)} in all, ${secs(mean)} per campaign`);
  out.push('');
  out.push(byTarget(r.campaigns));
  out.push('');
  const dupTypes = tally(s.duplicatesByType);
  const settledTotal = Object.values(s.settled).reduce((a, n) => a + n, 0);
  const assumed = s.decisions.reduce((a, d) => a + d.assumed, 0);
  const rows = [
    check(s.finished === s.points, `runs finished ${b.status}, like the uncrashed run`, `${s.finished}/${s.points}`),
    check(s.sameOutput === s.points, 'output equals the uncrashed output', `${s.sameOutput}/${s.points}`),
    check(s.withDuplicates === 0, 'no side effect executed twice (journal executions, provider record)', `${s.points - s.withDuplicates}/${s.points}`),
  ];
  if (s.sameEffects.compared > 0)
    rows.push(
      check(
        s.sameEffects.matched === s.sameEffects.compared,
        "provider records equal the uncrashed run's",
        `${s.sameEffects.matched}/${s.sameEffects.compared}`,
      ),
    );
  else rows.push([paint('yellow', 'n/a'), 'provider records: the agent has no probe', '']);
  rows.push(check(s.unsettled === 0 && assumed === 0, 'every in-doubt action settled (none left, none guessed)', `${settledTotal} in doubt`));
  out.push(table(['', 'INVARIANT', 'CAMPAIGNS'], rows));
  if (settledTotal) out.push(`    settled by: ${tally(s.settled)}`);
  const findings: string[] = [];
  for (const d of s.decisions) {
    const how = d.assumed
      ? `the agent's probe does not report ${d.type}, so it cannot be decided; the rehearsal assumed "not happened" ${d.assumed} time(s)`
      : `decided from the provider's record: happened ${d.happened}${d.withoutResult ? ` (${d.withoutResult} without the result, which the probe does not report, so the script got the action's "not recorded" value; report { key, result } from probe to give it)` : ''}, did not happen ${d.notHappened}`;
    findings.push(`${d.type} has no verify: a crash at ${d.phases.join(' or ')} leaves it in doubt and the run stops for a decision; ${how}.`);
  }
  for (const [type, n] of Object.entries(s.approvals))
    findings.push(`${type} waits at an approval gate: approved automatically ${n} time(s) during the rehearsal.`);
  if (dupTypes) findings.push(`executed more than once for one key: ${dupTypes}.`);
  for (const e of s.errors.slice(0, 5)) findings.push(`campaign failed at ${e}`);
  if (s.errors.length > 5) findings.push(`… and ${s.errors.length - 5} more campaign failure(s) (see --json)`);
  if (findings.length) {
    out.push('');
    out.push(paint('bold', 'Findings'));
    for (const f of findings) out.push(`  - ${f}`);
  }
  const bad = r.campaigns.filter(broken);
  if (bad.length) {
    out.push('');
    out.push(paint('bold', `Broken campaigns (${bad.length})`));
    for (const c of bad.slice(0, 10)) out.push(`  ${pointLabel(c.point)}: ${whatBroke(c)}`);
    if (bad.length > 10) out.push(`  … ${bad.length - 10} more (see --json)`);
  }
  out.push('');
  const savedTotal = Object.values(s.saved).reduce((a, n) => a + n, 0);
  out.push(
    `  work saved     ${savedTotal} committed effect(s) not repeated by resumes${savedTotal ? ` (${tally(s.saved)})` : ''}; most steps redone by one resume: ${s.stepsRedoneMax}`,
  );
  out.push(
    r.ok
      ? paint('green', `  result         every invariant held in ${s.points} campaign(s)`)
      : paint('red', `  result         ${s.broken} of ${s.points} campaign(s) broke an invariant`),
  );
  return out.join('\n');
}

export function whatBroke(c: CampaignResult): string {
  const parts: string[] = [];
  if (c.error) parts.push(c.error);
  if (!c.finished && !c.error) parts.push(`ended ${c.status}`);
  const unknown = c.decisions.filter((d) => d.withResult === false).map((d) => `${d.type} ${d.id}`);
  if (!c.sameOutput)
    parts.push(unknown.length ? `output differs (${unknown.join(', ')} decided happened without its result: the probe reports none)` : 'output differs');
  for (const d of c.duplicates) parts.push(`${d.type} ${d.key} ×${d.count} (${d.source})`);
  if (c.sameEffects === false) parts.push(c.effectsDiff.slice(0, 3).join('; '));
  for (const d of c.decisions) if (d.source === 'assumed') parts.push(`${d.type} ${d.id} undecidable`);
  for (const u of c.unsettled) parts.push(`${u.type} ${u.id} left in doubt`);
  return parts.join('; ');
}

/**
 * The invariants one campaign broke, one short sentence each, in the words the Test Explorer and JUnit show:
 * "effect twice: …", "output differs", "needs a decision: no verify …".
 */
export function invariantsBroken(c: CampaignResult): string[] {
  const out: string[] = [];
  if (c.error) out.push(c.error);
  if (!c.finished && !c.error) out.push(`ended ${c.status}, not like the uncrashed run`);
  for (const d of c.duplicates)
    out.push(
      `effect ${d.count === 2 ? 'twice' : `${d.count} times`}: ${d.type} \`${d.key}\` ×${d.count} (${d.source === 'journal' ? 'the journal executed it' : "the provider's record"} ${d.count} times)`,
    );
  if (!c.sameOutput && c.finished) out.push('output differs from the uncrashed run');
  if (c.sameEffects === false) out.push(`provider records differ: ${c.effectsDiff.slice(0, 3).join('; ')}`);
  for (const d of c.decisions) {
    if (d.source === 'assumed')
      out.push(
        `needs a decision: no verify: ${d.type} \`${d.id}\` was in doubt at ${d.phase.replace(/^action:/, '')} and the agent's probe does not report ${d.type}, so the rehearsal assumed "not happened"`,
      );
  }
  for (const u of c.unsettled) out.push(`left in doubt: ${u.type} \`${u.id}\``);
  return out;
}
