// The checker's own read-only view of the journal: snapshots of a run, and what it has acknowledged so far.

import { isDeepStrictEqual } from 'node:util';
import { openStore, type Store } from '../../src/runtime';
import type { ActionRow, EventRow, InboxRow, RunRow, StepRow } from '../../src/runtime/store';
import type { RunStatus } from '../../src/runtime/types';
import { childOfWait } from '../../src/runtime/childWait';

export interface RunSnapshot {
  readonly run: Omit<RunRow, 'lease_expires' | 'updated_at'> | undefined;
  readonly steps: readonly StepRow[];
  readonly actions: readonly ActionRow[];
  readonly events: readonly EventRow[];
  /** The events sent to the run (its inbox). */
  readonly inbox: readonly InboxRow[];
}

/** What the journal told anyone it holds: completed steps and committed actions with their results, and its events. */
interface Acknowledged {
  readonly steps: Map<number, string | null>;
  readonly actions: Map<string, string | null>;
  readonly events: Map<number, string>;
}

const ALL = 1_000_000;

export class Observer {
  readonly store: Store;
  private readonly acked = new Map<string, Acknowledged>();

  constructor(target: string) {
    this.store = openStore(target, { readonly: true });
  }

  run(runId: string): RunRow | undefined {
    return this.store.reader.run(runId);
  }

  status(runId: string): RunStatus | undefined {
    const row = this.run(runId);
    return row ? this.store.reader.view(row).effectiveStatus : undefined;
  }

  actions(runId: string): ActionRow[] {
    return this.store.reader.actions(runId, 0, ALL);
  }

  /**
   * The run and the runs it started with run.child, and theirs: read from the runs' rows, not through the reader's
   * own children query, so a control that breaks that query cannot hide them here.
   */
  family(runId: string): RunRow[] {
    const all = this.store.reader.runs(ALL);
    const out: RunRow[] = [];
    const add = (id: string): void => {
      const row = all.find((r) => r.id === id);
      if (!row) return;
      out.push(row);
      for (const c of all.filter((r) => r.parent_id === id)) add(c.id);
    };
    add(runId);
    return out;
  }

  steps(runId: string): StepRow[] {
    return this.store.reader.steps(runId, 0, ALL);
  }

  events(runId: string): EventRow[] {
    return this.store.reader.events(runId, 0, ALL);
  }

  inbox(runId: string): InboxRow[] {
    return this.store.reader.inbox.ofRun(runId, 0, ALL);
  }

  /**
   * Which event of a name a sender sends next (spec.ts's eventOf): one past those the run's waits took (a fork's
   * inherited waits included) and those kept for it.
   */
  /**
   * Where the event a waiting run waits for goes: the run itself, or the child run (run.child) its wait is for, down
   * the chain (a parent waiting for its child records `logbook:child:<id>`).
   */
  waitTarget(runId: string): { readonly runId: string; readonly name: string } | undefined {
    let id = runId;
    for (let depth = 0; depth < 16; depth++) {
      const name = this.run(id)?.waiting_for ?? undefined;
      if (name === undefined || name === null) return undefined;
      const child = childOfWait(name);
      if (child === undefined) return { runId: id, name };
      id = child;
    }
    return undefined;
  }

  nextEvent(runId: string, name: string): number {
    const took = this.steps(runId).filter(
      (st) => st.status === 'completed' && st.result !== null && (JSON.parse(st.result) as { waitFor?: unknown }).waitFor === name,
    ).length;
    return took + this.inbox(runId).filter((e) => e.name === name && e.status === 'pending').length;
  }

  /** Whether the last driver that took the run was compensating it (a stop for a decision then belongs to compensation). */
  compensating(runId: string): boolean {
    const acquired = this.events(runId).filter((e) => e.kind === 'run.lease-acquired');
    const last = acquired[acquired.length - 1];
    return last !== undefined && (JSON.parse(last.data ?? '{}') as { status?: string }).status === 'compensating';
  }

  /** Everything a command could change, except what a heartbeat of a live holder renews (its expiry, updated_at). */
  snapshot(runId: string): RunSnapshot {
    const row = this.run(runId);
    let run: RunSnapshot['run'];
    if (row) {
      const { lease_expires: _e, updated_at: _u, ...rest } = row;
      run = rest;
    }
    return { run, steps: this.steps(runId), actions: this.actions(runId), events: this.events(runId), inbox: this.inbox(runId) };
  }

  /**
   * What changed between two snapshots, in words (empty when nothing did). With a live holder in flight (`holder`),
   * only what a second command could have changed counts: the run row, a lease taken, an attempt of its own.
   */
  static diff(a: RunSnapshot, b: RunSnapshot, holder = false): string[] {
    const out: string[] = [];
    if (holder) {
      if (!isDeepStrictEqual(a.run, b.run)) out.push(`run row ${JSON.stringify(a.run)} became ${JSON.stringify(b.run)}`);
      const attempt = a.run?.attempt;
      const foreign = b.events.slice(a.events.length).filter((e) => e.kind === 'run.lease-acquired' || e.attempt !== attempt);
      if (foreign.length) out.push(`events ${foreign.map((e) => `${e.kind} (attempt ${e.attempt})`).join(', ')} were written`);
      return out;
    }
    if (!isDeepStrictEqual(a.run, b.run)) out.push(`run row ${JSON.stringify(a.run)} became ${JSON.stringify(b.run)}`);
    if (!isDeepStrictEqual(a.steps, b.steps)) out.push(`steps changed (${a.steps.length} → ${b.steps.length} rows)`);
    if (!isDeepStrictEqual(a.actions, b.actions)) {
      const before = new Map(a.actions.map((x) => [x.id, x]));
      for (const x of b.actions) if (!isDeepStrictEqual(before.get(x.id), x)) out.push(`action ${x.id} ${before.get(x.id)?.status ?? '(new)'} → ${x.status}`);
    }
    if (!isDeepStrictEqual(a.inbox, b.inbox)) out.push(`the inbox changed (${a.inbox.length} → ${b.inbox.length} events)`);
    if (a.events.length !== b.events.length)
      out.push(
        `events ${b.events
          .slice(a.events.length)
          .map((e) => e.kind)
          .join(', ')} were written`,
      );
    return out;
  }

  /**
   * Checks that nothing the journal acknowledged before was lost or changed (completed steps, committed actions with
   * their results, events with their seq), then adds what it acknowledges now. Returns the losses, in words.
   */
  checkAcknowledged(runId: string): string[] {
    const prev = this.acked.get(runId) ?? { steps: new Map(), actions: new Map(), events: new Map() };
    const lost: string[] = [];
    const steps = new Map(this.steps(runId).map((s) => [s.idx, s]));
    for (const [idx, result] of prev.steps) {
      const s = steps.get(idx);
      if (s?.status !== 'completed' || s.result !== result)
        lost.push(`step #${idx + 1} was completed with ${result} and is now ${s ? `${s.status} with ${s.result}` : 'gone'}`);
    }
    const actions = new Map(this.actions(runId).map((a) => [a.id, a]));
    for (const [id, result] of prev.actions) {
      const a = actions.get(id);
      if (a?.status !== 'committed' || a.result !== result)
        lost.push(`action ${id} was committed with ${result} and is now ${a ? `${a.status} with ${a.result}` : 'gone'}`);
    }
    const events = this.events(runId);
    const bySeq = new Map(events.map((e) => [e.seq, e.kind]));
    for (const [seq, kind] of prev.events)
      if (bySeq.get(seq) !== kind) lost.push(`event #${seq} ${kind} is ${bySeq.has(seq) ? `now ${bySeq.get(seq)}` : 'gone'}`);
    const maxBefore = Math.max(0, ...prev.events.keys());
    const older = events.filter((e) => e.seq <= maxBefore && !prev.events.has(e.seq));
    if (older.length) lost.push(`events were inserted behind acknowledged ones (seq ${older.map((e) => e.seq).join(', ')} ≤ ${maxBefore})`);
    const next: Acknowledged = {
      steps: new Map([...steps.values()].filter((s) => s.status === 'completed').map((s) => [s.idx, s.result])),
      actions: new Map([...actions.values()].filter((a) => a.status === 'committed').map((a) => [a.id, a.result])),
      events: bySeq,
    };
    // What was lost stays expected, so one loss is reported once.
    for (const [k, v] of prev.steps) if (!next.steps.has(k)) next.steps.set(k, v);
    for (const [k, v] of prev.actions) if (!next.actions.has(k)) next.actions.set(k, v);
    this.acked.set(runId, next);
    return lost;
  }

  close(): void {
    this.store.close();
  }
}
