// `logbook plan <run-id> [--compensate]`: a dry run of resume (or compensate) from the journal; nothing is executed.

import { ErrorCodes, LogbookError, runNotFound } from '../runtime/errors';
import { actionRegistry } from '../runtime/define';
import { openStore } from '../runtime/store';
import { loadScript } from '../loader/loadScript';
import { planResume, type ResumePlan } from '../plan/resumePlan';
import { planCompensation, type CompensationPlan } from '../plan/compensationPlan';
import { dbPath, type CommandModule, type Io } from './journalOption';
import { parseCommandArgs } from './commandArgs';
import { paint, runStatusWord } from './format';

const USAGE = 'logbook plan <run-id> [--compensate] [--script F] [--json]';

function steps(n: number): string {
  return `${n} step${n === 1 ? '' : 's'}`;
}

export function renderResumePlan(p: ResumePlan): string {
  const out: string[] = [];
  out.push(
    `${paint('bold', `Plan for \`logbook resume ${p.runId}\``)}  ${p.agent}  ${runStatusWord(p.status)}  attempt ${p.attempt}  (dry run: nothing is executed)`,
  );
  if (p.blocker) out.push(paint('yellow', `  resume would refuse: ${p.blocker}`));
  if (p.sleepingUntil !== undefined)
    out.push(
      `  sleeping     until ${new Date(p.sleepingUntil).toISOString()}: a worker wakes it then; resume waits what is left of the sleep (--now: goes on at once)`,
    );
  if (p.waiting) {
    const w = p.waiting;
    const until = w.until === null ? 'with no timeout' : `until ${new Date(w.until).toISOString()}`;
    const now =
      w.resume === 'takes'
        ? `resume takes the event kept for it (id ${w.eventId ?? '?'})`
        : w.resume === 'times-out'
          ? 'its timeout has passed: resume goes on, and run.waitFor returns undefined'
          : 'resume before it comes stops waiting again (exit 3)';
    const child = w.runId ? ` (its child run ${w.runId} waits for it)` : '';
    out.push(
      `  waiting      for event ${JSON.stringify(w.event)}${child} ${until}: \`logbook send ${w.runId ?? p.runId} ${w.event} --data JSON\` continues it; ${now}`,
    );
  }
  if (!p.scriptLoaded) out.push(paint('yellow', `  the script ${p.script} could not be loaded: reconciliation is shown by effect only`));
  const ranges = p.replay.ranges.map((r) => (r.from === r.to ? `#${r.from + 1} ${r.firstName}` : `#${r.from + 1} ${r.firstName} … #${r.to + 1} ${r.lastName}`));
  out.push(
    `  replay       ${steps(p.replay.count)} return their checkpointed results${ranges.length ? `: ${ranges.slice(0, 3).join(', ')}${ranges.length > 3 ? ', …' : ''}` : ''}`,
  );
  for (const f of p.replayedFailures) out.push(`  replay fail  #${f.index + 1} ${f.name}: its failure is thrown again (${f.error})`);
  for (const r of p.redo) out.push(`  redo         #${r.index + 1} ${r.name}: ${r.reason}`);
  for (const s of p.skipped) out.push(`  skip         ${s.type} ${s.id}: ${s.detail}`);
  for (const d of p.inDoubt) out.push(`  ${paint('yellow', 'in doubt')}     ${d.type} ${d.id} (${d.effect}): ${d.detail}`);
  for (const r of p.retry) out.push(`  retry        ${r.type} ${r.id}: ${r.detail}`);
  for (const a of p.approvals) out.push(`  approval     ${a.type} ${a.id}: ${a.detail}`);
  const known = p.firstTime.map((f) => `${f.type} ${f.id}`);
  out.push(
    `  first time   ${known.length ? `${known.join(', ')}; then ` : ''}whatever the script does after step #${p.unjournaledFrom} (not in the journal yet)`,
  );
  for (const c of p.children) out.push(`  child run    #${c.step + 1} child ${c.agent} → ${c.runId} (${runStatusWord(c.status)}): ${c.detail}`);
  if (p.stops) {
    const s = p.stops;
    const on = s.childRunId ? ` of child run ${s.childRunId}` : '';
    const where = s.childRunId ?? p.runId;
    const how =
      s.kind === 'needs-decision'
        ? s.childRunId
          ? `\`logbook resume ${where} --decide ${s.actionId}=happened|not-happened\`, then resume this run`
          : `add --decide ${s.actionId}=happened|not-happened`
        : `\`logbook approve ${where} ${s.actionId}\`${s.childRunId ? ', then resume this run' : ''}`;
    out.push(
      paint('yellow', `  stops        ${s.kind === 'needs-decision' ? 'for a decision on' : 'at the approval gate of'} ${s.type} ${s.actionId}${on}: ${how}`),
    );
  }
  return out.join('\n');
}

export function renderCompensationPlan(p: CompensationPlan): string {
  const out: string[] = [];
  out.push(`${paint('bold', `Plan for \`logbook compensate ${p.runId}\``)}  ${p.agent}  ${p.status}  (dry run: nothing is executed)`);
  if (!p.scriptLoaded) out.push(paint('yellow', '  the script could not be loaded: which types have an inverse is unknown'));
  for (const s of p.settleFirst) out.push(`  settle       ${s.type} ${s.id}: ${s.detail}`);
  for (const a of p.rejectApprovals) out.push(`  reject       ${a.type} ${a.id}: its pending approval is rejected`);
  if (p.inverses.length === 0) out.push('  inverses     none to apply');
  p.inverses.forEach((i, n) => {
    out.push(`  ${n === 0 ? 'inverses    ' : '            '} ${n + 1}. ${i.type} ${i.id}${i.when === 'always' && !i.child ? '' : ` (${i.detail})`}`);
    // A child run's own inverses, in its walk's order, under its place in the parent's.
    const nested = (c: CompensationPlan, depth: number): void =>
      c.inverses.forEach((j, m) => {
        out.push(`  ${' '.repeat(13 + 3 * depth)}${n + 1}.${m + 1} ${j.type} ${j.id}${j.when === 'always' && !j.child ? '' : ` (${j.detail})`}`);
        if (j.child) nested(j.child, depth + 1);
      });
    if (i.child) nested(i.child, 1);
  });
  for (const i of p.irreversible) out.push(paint('red', `  irreversible ${i.type} ${i.id}: ${i.detail}; handle it by hand`));
  if (p.alreadyCompensated.length) out.push(`  done before  ${p.alreadyCompensated.length} inverse(s) already applied: not repeated`);
  if (p.stops)
    out.push(paint('yellow', `  stops        for a decision on ${p.stops.type} ${p.stops.actionId}: add --decide ${p.stops.actionId}=happened|not-happened`));
  return out.join('\n');
}

async function plan(args: string[], io: Io): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    { compensate: { type: 'boolean' }, script: { type: 'string' }, journal: { type: 'string' }, json: { type: 'boolean' } },
    `Usage: ${USAGE}`,
  );
  const runId = parsed.positionals[0];
  if (parsed.positionals.length !== 1 || !runId) throw new LogbookError(ErrorCodes.USAGE, 'Expected one run id.', `Usage: ${USAGE}`);
  const store = openStore(dbPath(parsed.values.journal), { readonly: true });
  try {
    const row = store.reader.run(runId);
    if (!row) throw runNotFound(runId);
    // Loading the script only defines its actions (verify / compensate presence); its run() is not called.
    let loaded = true;
    try {
      await loadScript(parsed.values.script ?? row.script);
    } catch {
      loaded = false;
    }
    const defs = (type: string) => actionRegistry().get(type);
    const json = parsed.values.json === true;
    if (parsed.values.compensate) {
      const p = planCompensation(store, runId, defs, loaded);
      io.out(json ? JSON.stringify(p, null, 2) : renderCompensationPlan(p));
    } else {
      const p = planResume(store, runId, defs, loaded);
      io.out(json ? JSON.stringify(p, null, 2) : renderResumePlan(p));
    }
    return 0;
  } finally {
    store.close();
  }
}

export const planCommand: CommandModule = { name: 'plan', usage: USAGE, run: plan };
