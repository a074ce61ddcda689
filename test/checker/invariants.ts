// The exactly-once invariants, checked for a run that was driven to its end against the provider model's record.

import { isDeepStrictEqual } from 'node:util';
import type { Exec, Finished } from './executor';
import { actionType, eventsWaitedFor } from './spec';
import type { Landed } from './world';
import { isSleepCheckpoint } from '../../src/runtime/sleep';
import type { RunRow } from '../../src/runtime/store';

export interface Violation {
  readonly kind: string;
  readonly detail: string;
}

/** The run an effect belongs to: keys are `<type>:<run id>:<n>`, inverses `compensate:<that>`. */
function runOfKey(key: string): string | undefined {
  return key.split(':')[1];
}

function group(es: readonly Landed[], by: (e: Landed) => string): Map<string, Landed[]> {
  const m = new Map<string, Landed[]>();
  for (const e of es) m.set(by(e), [...(m.get(by(e)) ?? []), e]);
  return m;
}

/** The run's journaled sleeps: step index → wake time (ms), from the checkpoint run.sleep writes when it starts. */
export function sleepsOf(x: Exec, runId: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of x.observer.steps(runId)) {
    if (s.status !== 'completed' || s.result === null) continue;
    try {
      const v = JSON.parse(s.result) as unknown;
      if (isSleepCheckpoint(v)) out.set(s.idx, v.wakeAt);
    } catch {
      // not a sleep's (nor JSON: the journal's own checks report that)
    }
  }
  return out;
}

/** The run ended as `b` did: the same status and, completed, the same output. */
export function matches(x: Exec, runId: string, b: Finished): boolean {
  const status = x.observer.status(runId);
  const row = x.observer.run(runId);
  return status === b.status && (status !== 'completed' || isDeepStrictEqual(row?.output ? (JSON.parse(row.output) as unknown) : undefined, b.output));
}

/**
 * One child per place: each run.child call (a step of its parent) names one child run, the same on every attempt; a
 * resumed parent re-attaches to it, never starts a second. And a child's place is a step its parent journaled.
 */
function checkChildren(x: Exec, family: readonly RunRow[]): void {
  for (const parent of family) {
    const kids = family.filter((r) => r.parent_id === parent.id);
    const byStep = new Map<number, RunRow[]>();
    for (const k of kids) byStep.set(k.parent_step ?? -1, [...(byStep.get(k.parent_step ?? -1) ?? []), k]);
    for (const [step, at] of byStep) {
      if (at.length > 1)
        x.violation('child-twice', `run ${parent.id} started ${at.length} child runs at its step #${step + 1}: ${at.map((k) => k.id).join(', ')}`);
    }
    const steps = new Map(x.observer.steps(parent.id).map((s) => [s.idx, s]));
    for (const k of kids) {
      const s = steps.get(k.parent_step ?? -1);
      if (!s?.name.startsWith('child '))
        x.violation(
          'child-without-place',
          `child run ${k.id} names step #${(k.parent_step ?? -1) + 1} of run ${parent.id}, which is ${s ? `"${s.name}"` : 'not journaled'}`,
        );
    }
  }
}

export function checkRun(
  x: Exec,
  runId: string,
  baselines: readonly Finished[],
  /** `unlike`: why this run may end unlike the uncrashed one, which is then not compared (a fork's new keys). */
  o: { readonly compensated: boolean; readonly unlike?: string | undefined },
): void {
  const baseline = baselines[0] ?? { status: undefined, output: undefined };
  const status = x.observer.status(runId);
  // The run and its child runs (run.child) are one unit of effects: a parent's outcome covers its children's.
  const family = x.observer.family(runId);
  const ofFamily = new Set(family.map((r) => r.id));
  const rows = new Map(family.flatMap((r) => x.observer.actions(r.id)).map((a) => [a.id, a]));
  const world = x.target.world.all();
  const dos = world.filter((e) => e.kind === 'do' && ofFamily.has(runOfKey(e.key) ?? ''));
  const undos = world.filter((e) => e.kind === 'undo' && e.of !== null && ofFamily.has(runOfKey(e.of) ?? ''));
  checkChildren(x, family);
  const hasInverse = (type: string): boolean => x.target.agent.actions.some((a, i) => actionType(a, i) === type && a.compensate);
  const where = `run ${runId} (${status ?? 'absent'})`;

  // No effect twice: a repeat under the same key is one effect only where the provider dedupes it.
  for (const [key, es] of group(dos, (e) => e.key)) {
    if (es.length > 1) x.violation('effect-twice', `${key} landed ${es.length} times in the provider (sent by ${es.map((e) => e.proc).join(', ')}); ${where}`);
  }
  for (const [of, es] of group(undos, (e) => e.of ?? '')) {
    if (es.length > 1) x.violation('inverse-twice', `the inverse of ${of} landed ${es.length} times (keys ${es.map((e) => e.key).join(', ')}); ${where}`);
  }

  // Every effect that happened is journaled as committed, or the run stops for a decision about it.
  const landedKeys = new Set(dos.map((e) => e.key));
  for (const key of landedKeys) {
    const row = rows.get(key);
    if (row?.status === 'committed') continue;
    if (row?.status === 'started' && status === 'needs-decision') continue;
    // Cancelled with an action in doubt (its execute threw after the effect, or its process died): the doubt stands until
    // someone compensates the run, which settles it first.
    if (row?.status === 'started' && status === 'cancelled') continue;
    // Compensated with an action in doubt that has no inverse: compensation leaves it so, marked irreversible (redone
    // with its key, it would make certain an effect nothing undoes where it may never have happened). The journal says
    // "not known", never "did not happen".
    if (row?.status === 'started' && status === 'compensated' && row.compensation === 'irreversible') continue;
    // An idempotent action whose execute threw is journaled failed, as if an error proved nothing happened. The README
    // says so (it runs again with its key), so a run that goes on is noted; one that is compensated is checked below.
    if (row?.status === 'failed' && row.effect === 'idempotent') {
      x.log.push(`note: ${key} landed, but its execute threw and it is journaled failed (an idempotent action's error counts as "did not happen")`);
      continue;
    }
    x.violation(
      'effect-not-journaled',
      `${key} landed in the provider, but the journal has it ${row ? `${row.status}${row.decision ? ` (decided ${row.decision})` : ''}${row.reconciliation ? ` (${row.reconciliation})` : ''}` : 'nowhere'}; ${where}`,
    );
  }
  // And the journal claims no effect the provider never saw.
  // (Model calls are idempotent actions too, but their effect is the mock model's answer: not a provider's.)
  const ours = (type: string): boolean => x.target.agent.actions.some((a, i) => actionType(a, i) === type);
  for (const row of rows.values()) {
    if (row.status !== 'committed' || row.effect === 'read-only' || !ours(row.type) || landedKeys.has(row.id)) continue;
    x.violation(
      'journal-without-effect',
      `${row.id} is committed${row.reconciliation ? ` (${row.reconciliation})` : ''} in the journal, but no such effect reached the provider; ${where}`,
    );
  }

  // And never counts a call of execute that was not made: a call is counted with the write that settles it, never
  // before it. A verify that found the effect counts one, which it had.
  for (const row of rows.values()) {
    if (row.effect === 'read-only' || !ours(row.type)) continue;
    const calls = x.target.world.calls(row.id);
    if (row.executions > calls) {
      x.violation('counted-not-called', `${row.id} is journaled with ${row.executions} execution(s), but its execute was called ${calls} time(s); ${where}`);
    }
  }

  // Once a cancel is asked, nothing new starts: what lands after it was already in flight then (its execute settles as usual).
  // Or it was in doubt in the journal then, and a compensation settled it as docs/contract.md says for an idempotent
  // action with an inverse and no verify: executed again with its key, then undone (its inverse landed, and is journaled).
  const redoneAndUndone = (c: { inDoubt: ReadonlySet<string> }, key: string): boolean =>
    c.inDoubt.has(key) && rows.get(key)?.compensation === 'committed' && undos.some((u) => u.of === key);
  for (const c of x.cancels.filter((m) => m.runId === runId)) {
    const late = x.target.world
      .all()
      .slice(c.landed)
      .filter((e) => e.kind === 'do' && ofFamily.has(runOfKey(e.key) ?? '') && !c.inFlight.has(e.key) && !redoneAndUndone(c, e.key));
    for (const e of late) x.violation('effect-after-cancel', `${e.key} landed after the run was asked to cancel, and was not in flight then; ${where}`);
  }

  // A sleep's wake time, once journaled, holds: the step after it starts (in any attempt) no earlier.
  for (const [idx, wakeAt] of sleepsOf(x, runId)) {
    for (const e of x.observer.events(runId).filter((ev) => ev.step_idx === idx + 1 && ev.action_id === null && ev.kind.startsWith('step.'))) {
      if (e.kind !== 'step.started' && e.kind !== 'step.restarted') continue;
      if (e.at < wakeAt)
        x.violation(
          'woke-early',
          `step #${idx + 2} of ${where} started at ${new Date(e.at).toISOString()} (attempt ${e.attempt}), before the wake time ${new Date(wakeAt).toISOString()} the sleep before it journaled`,
        );
    }
  }
  // Each run of the family keeps its own inbox: a child's wait takes its events as a run's own wait does.
  checkEvents(x, runId, status);
  for (const c of family.slice(1)) checkEvents(x, c.id, x.observer.status(c.id));

  if (status === 'completed') {
    // A parent completes with the outputs of its children: each completed.
    for (const c of family.slice(1)) {
      const cs = x.observer.status(c.id);
      if (cs !== 'completed') x.violation('completed-with-child-unfinished', `${where} completed, but its child run ${c.id} is ${cs ?? 'absent'}`);
    }
    const open = [...rows.values()].filter((a) => a.status === 'started' || (a.status === 'awaiting-approval' && a.approval === 'pending'));
    if (open.length) x.violation('completed-with-doubt', `${where} completed holding ${open.map((a) => `${a.id} (${a.status})`).join(', ')}`);
    if (undos.length) x.violation('undone-but-completed', `${where} completed, but inverses landed for ${undos.map((e) => e.of).join(', ')}`);
  }

  if (status === 'compensated') {
    for (const key of landedKeys) {
      const row = rows.get(key);
      const undone = undos.some((e) => e.of === key);
      if (row?.compensation === 'committed' && undone) continue;
      if (row?.compensation === 'irreversible' && !hasInverse(row.type)) continue;
      x.violation(
        row?.status === 'failed' && row.effect === 'idempotent' ? 'idempotent-error-after-effect' : 'effect-not-compensated',
        `${where} is compensated, but ${key} landed and ${undone ? 'was undone while the journal says compensation ' : 'was never undone (compensation '}${row?.compensation ?? 'none'}${row ? `, action ${row.status}` : ''})`,
      );
    }
  }
  for (const e of undos) {
    if (e.of !== null && !landedKeys.has(e.of)) x.violation('inverse-without-effect', `the inverse of ${e.of} landed, but ${e.of} itself never did; ${where}`);
  }

  // The output equals the uncrashed run's (unless the schedule compensated it).
  if (o.compensated) return;
  if (o.unlike !== undefined) {
    x.log.push(`not held to the uncrashed run's outcome: ${o.unlike}`);
    return;
  }
  const other = baselines.slice(1).find((b) => matches(x, runId, b));
  if (other && !matches(x, runId, baseline)) {
    x.log.push(
      `ended as an uncrashed run does once the transient faults a killed attempt spent, or kept from happening, are gone (${(other.spent ?? []).join(', ')}): ${String(other.status)}`,
    );
    return;
  }
  if (status !== baseline.status) {
    x.violation(
      'status-differs',
      `${where} ended ${status ?? 'absent'}, the uncrashed run ${baseline.status ?? 'absent'}; last error ${x.observer.run(runId)?.error ?? 'none'}`,
    );
    return;
  }
  if (status !== 'completed') return;
  const row = x.observer.run(runId);
  const output = row?.output ? (JSON.parse(row.output) as unknown) : undefined;
  if (isDeepStrictEqual(output, baseline.output)) return;
  x.violation('output-differs', `${where} returned ${JSON.stringify(output)}, the uncrashed run ${JSON.stringify(baseline.output)}`);
}

/**
 * Each event delivered at most once, none lost: a wait's checkpoint names the event it took (its inbox seq), and the
 * inbox says which wait took it, in the same transaction. So no event is held by two waits, every event a wait holds
 * is marked taken by that wait (one still pending could be taken again), every event marked taken is held by the
 * wait it names, and a run that completed left no event pending that one of its waits would take.
 * A fork's steps before its fork point are its origin's (their events were sent to the origin).
 */
function checkEvents(x: Exec, runId: string, status: string | undefined): void {
  const where = `run ${runId} (${status ?? 'absent'})`;
  const run = x.observer.run(runId);
  const inherited = run?.forked_from ? (run.forked_at_step ?? 0) : 0;
  const inbox = new Map(x.observer.inbox(runId).map((e) => [e.seq, e]));
  const awaited = new Set(eventsWaitedFor(x.target.agent));
  const heldBy = new Map<number, number[]>();
  for (const st of x.observer.steps(runId)) {
    if (st.status !== 'completed' || st.result === null || st.idx < inherited) continue;
    const r = JSON.parse(st.result) as { waitFor?: unknown; event?: { seq?: unknown } };
    if (typeof r.waitFor !== 'string' || typeof r.event?.seq !== 'number') continue;
    heldBy.set(r.event.seq, [...(heldBy.get(r.event.seq) ?? []), st.idx]);
  }
  for (const [seq, steps] of heldBy) {
    if (steps.length > 1)
      x.violation('event-delivered-twice', `event #${seq} was taken by the waits at steps ${steps.map((i) => `#${i + 1}`).join(', ')}; ${where}`);
    const e = inbox.get(seq);
    if (e?.status !== 'delivered' || e.step_idx !== steps[0])
      x.violation(
        'event-held-not-taken',
        `the wait at step #${(steps[0] ?? 0) + 1} holds event #${seq} (${e?.name ?? '?'}), but the inbox has it ${e ? `${e.status}${e.step_idx !== null ? ` at step #${e.step_idx + 1}` : ''}` : 'nowhere'}: it could be delivered again; ${where}`,
      );
  }
  const gates = new Map(x.observer.actions(runId).map((a) => [`logbook:approval:${a.id}`, a]));
  for (const e of inbox.values()) {
    // A gate's decision (`logbook approve`) is taken by its action's row, not by a wait.
    const gate = gates.get(e.name);
    if (gate) {
      if (e.status === 'delivered' && gate.approval === 'pending')
        x.violation('event-lost', `the decision ${e.id} for ${gate.id} is marked taken, but its gate is still pending; ${where}`);
    } else if (e.status === 'delivered' && !heldBy.get(e.seq)?.includes(e.step_idx ?? -1))
      x.violation(
        'event-lost',
        `event #${e.seq} ${e.name} (${e.id}) is marked taken by the wait at step #${(e.step_idx ?? 0) + 1}, which does not hold it; ${where}`,
      );
    // An event of a name no wait of the case takes (a send to a run that never waits for it) stays pending when the run
    // ends, and `show` reports it never delivered: kept and reported, not lost. One a wait would take must be taken.
    if (e.status === 'pending' && status === 'completed' && awaited.has(e.name))
      x.violation('event-lost', `event #${e.seq} ${e.name} (${e.id}) was kept for run ${runId}, which completed without taking it; ${where}`);
  }
}
