// Runs one case: the uncrashed baseline, then the schedule's operations, then the run driven to its end, then the checks.

import { foldDifferences } from './foldCheck';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../src/runtime';
import type { DecisionInput } from '../../src/runtime/decisions';
import { actionType, type AgentJ, type CaseJ, type OpJ } from './spec';
import { Observer, type RunSnapshot } from './observer';
import { REAL_PID, SimProcess } from './sim';
import { Driver, describeEnded, type Ended, type Target } from './surfaces';
import { SqliteLog, World, type Sabotage } from './world';
import { OPERATIONS } from './operations';
import { checkRun, matches, type Violation } from './invariants';
import { createDatabase, dropDatabase, isPgUrl } from './pgdb';
import { WORKER_FIXTURE } from './workerOps';

export const FIXTURE = path.join(__dirname, 'fixture.ts');
/** The case's runs: the scheduled one, its uncrashed twin, and the fork. Distinct per case in a shared journal. */
export interface RunIds {
  readonly run: string;
  readonly base: string;
  readonly fork: string;
  /** The uncrashed run in the world the schedule left (see runCaseOn). */
  readonly spent: string;
  /** A graph agent's time-travel run, and the fork of it. */
  readonly travel: string;
  readonly travelFork: string;
}

export interface Finished {
  readonly status: string | undefined;
  readonly output: unknown;
  /** The transient faults already spent in this baseline's world, when it is not the fresh one. */
  readonly spent?: readonly string[];
}

/** The state of one case while it runs: its journal, its world, and what it has seen. */
export class Exec {
  readonly observer: Observer;
  /** Driver calls that ended killed (a simulated crash, a real SIGKILL). */
  crashes = 0;
  readonly log: string[] = [];
  readonly violations: Violation[] = [];
  /** Each cancel asked of the run: how many effects had landed then, and which provider calls were in flight. */
  /** Each cancel asked: what had landed, what was in flight, and which actions were in doubt in the journal then. */
  readonly cancels: Array<{ readonly runId: string; readonly landed: number; readonly inFlight: ReadonlySet<string>; readonly inDoubt: ReadonlySet<string> }> =
    [];
  private readonly procs: SimProcess[] = [];

  constructor(
    readonly target: Target,
    readonly ids: RunIds,
    readonly runId: string,
  ) {
    this.observer = new Observer(target.db);
  }

  /** A new simulated process driving the target. */
  driver(): Driver {
    const p = new SimProcess();
    this.procs.push(p);
    return new Driver(this.target, p);
  }

  violation(kind: string, detail: string): void {
    if (!this.violations.some((v) => v.kind === kind && v.detail === detail)) this.violations.push({ kind, detail });
  }

  /**
   * One driver call with the checks every command gets: a refusal must change nothing, and nothing acknowledged may
   * be lost. `label` says what was done, for the report.
   */
  async call(label: string, runId: string, fn: () => Promise<Ended>): Promise<Ended> {
    const before = this.observer.snapshot(runId);
    const ended = await fn();
    this.after(label, runId, ended, before);
    return ended;
  }

  /** `holder`: another driver is live in flight meanwhile (its own writes are not the refused command's). */
  after(label: string, runId: string, ended: Ended, before: RunSnapshot, holder = false): void {
    this.log.push(`${label}: ${describeEnded(ended)}`);
    if (ended.kind === 'crashed') this.crashes++;
    // The store refuses a status change its table does not allow: whatever the operation was, that is Logbook's bug.
    const code = ended.kind === 'outcome' ? ended.error?.code : ended.kind === 'refused' ? ended.code : undefined;
    if (code === 'LB_ILLEGAL_TRANSITION')
      this.violation(
        'illegal-transition',
        `${label}: ${ended.kind === 'outcome' ? (ended.error?.message ?? '') : ended.kind === 'refused' ? ended.message : ''}`,
      );
    if (ended.kind === 'refused') {
      const changes = Observer.diff(before, this.observer.snapshot(runId), holder);
      if (changes.length) this.violation('refusal-changed-run', `${label} was refused [${ended.code}] but changed run ${runId}: ${changes.join('; ')}`);
    }
    const row = this.observer.run(runId);
    if (ended.kind === 'crashed' && row?.lease_token && row.lease_pid === REAL_PID) {
      // The runtime took its pid from somewhere else than process.pid (see SimProcess.as): a crash cannot be simulated.
      throw new Error(`checker harness: a simulated process's lease names the checker's own pid ${REAL_PID}, so its crash leaves a live holder`);
    }
    if (ended.kind === 'error') this.violation('unexpected-error', `${label} threw: ${ended.message.split('\n').slice(0, 14).join(' | ')}`);
    for (const loss of this.observer.checkAcknowledged(runId)) this.violation('acknowledged-lost', `after ${label}: ${loss}`);
  }

  /** Processes whose work is done exit; one that still holds a lease after its driver returned left it behind. */
  retire(): void {
    for (const p of this.procs.splice(0)) {
      if (!p.alive) continue;
      const held = [this.runId, this.ids.fork].filter((id) => this.observer.run(id)?.lease_pid === p.pid && this.observer.run(id)?.lease_token !== null);
      if (held.length) {
        this.violation('lease-left-behind', `process ${p.name} finished its commands but still holds the lease of run ${held.join(', ')}`);
        try {
          p.crash('when it exited');
        } catch {
          // the stand-in is dead now, as an exited holder would be
        }
      } else p.retire();
    }
  }

  /** The decisions a person checking the provider's own record would make, for every action in doubt without verify. */
  decisions(runId: string): Record<string, DecisionInput> {
    const out: Record<string, DecisionInput> = {};
    for (const a of this.observer.actions(runId)) {
      if (a.status !== 'started' || a.effect !== 'non-idempotent') continue;
      const spec = this.target.agent.actions.find((x, i) => actionType(x, i) === a.type);
      if (spec?.verify) continue;
      // What the provider's record shows, with the result it returned (a decision carries it, issue 19 case 8).
      const landed = this.target.world.landed(a.id);
      out[a.id] = landed ? { decision: 'happened', result: JSON.parse(landed.result) as unknown } : 'not-happened';
    }
    return out;
  }

  /** Drives a run to an end as its operator would: approve or reject gates, decide from the record, resume, finish compensations. */
  async finish(runId: string): Promise<void> {
    let failedResumes = 0;
    // A transient failure fails each key once: a run may need one resume per call before it gets through.
    const calls = this.target.agent.steps.reduce((n, st) => n + st.calls.length, 0);
    for (let i = 0; i < 16 + 2 * calls; i++) {
      this.retire();
      const status = this.observer.status(runId);
      // Cancelled is an end too: only compensation (asked with the cancel, and made by it) goes on from there.
      if (status === undefined || status === 'completed' || status === 'compensated' || status === 'cancelled') return;
      const compensating = this.observer.compensating(runId);
      const d = this.driver();
      if (status === 'compensation-failed') {
        // The remedy it prints: fix the cause (a transient fault fails each key once) and compensate again.
        if (failedResumes++ >= 2 + calls) return;
        await this.call('compensate again (host API)', runId, () => d.compensate('api', runId));
      } else if (status === 'awaiting-approval') {
        // The gate may be its child's (run.child): the run waits for it, named in its status; a gate is answered where it is.
        for (const r of this.observer.family(runId)) {
          for (const a of this.observer.actions(r.id).filter((x) => x.status === 'awaiting-approval' && x.approval === 'pending')) {
            // An Agents SDK run's gate (logbookRunAgent) is `approval:<the action's key>`: the person answers as for the action.
            const type = a.type === 'agents.approval' ? a.id.replace(/^approval:/, '').split(':')[0] : a.type;
            const spec = this.target.agent.actions.find((x, j) => actionType(x, j) === type);
            const yes = spec?.approval !== 'reject';
            await this.call(`${yes ? 'approve' : 'reject'} ${a.id} (host API)`, r.id, () => d.approve(r.id, a.id, yes));
          }
        }
        await this.call('resume (host API)', runId, () => d.resume('api', runId));
      } else if (status === 'needs-decision' || status === 'interrupted' || status === 'sleeping') {
        // A child (run.child) stopped for a decision stops its parent too: a person decides it on the child, which
        // resuming then goes on (a compensation takes the decisions down to its children itself).
        if (!compensating)
          for (const c of this.observer.family(runId).slice(1).reverse()) {
            if (this.observer.status(c.id) !== 'needs-decision' || this.observer.compensating(c.id)) continue;
            const kid = this.decisions(c.id);
            await this.call(`resume child run ${c.id} --decide (host API)`, c.id, () => d.resume('api', c.id, kid));
          }
        const decisions =
          status !== 'needs-decision'
            ? {}
            : compensating
              ? (Object.assign({}, ...this.observer.family(runId).map((r) => this.decisions(r.id))) as Record<string, DecisionInput>)
              : this.decisions(runId);
        const words = Object.entries(decisions)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : `${v.decision} --result …`}`)
          .join(' ');
        if (compensating) await this.call(`compensate${words ? ` --decide ${words}` : ''} (host API)`, runId, () => d.compensate('api', runId, decisions));
        else await this.call(`resume${words ? ` --decide ${words}` : ''} (host API)`, runId, () => d.resume('api', runId, decisions));
      } else if (status === 'waiting') {
        // The event it waits for, as its sender would send it: the next of that name, counting those its waits took
        // (a fork's inherited waits included) and those kept for it.
        // One kept for it already (sent after it stopped to wait) is taken by the resume: nothing more is sent.
        // A parent waiting for its child (run.child) is sent nothing: the event goes to the child that waits for it.
        const to = this.observer.waitTarget(runId) ?? { runId, name: '' };
        const { name } = to;
        const k = this.observer.nextEvent(to.runId, name);
        const where = to.runId === runId ? '' : ` to child run ${to.runId}`;
        if (!this.observer.inbox(to.runId).some((e) => e.name === name && e.status === 'pending'))
          await this.call(`send ${name}#${k}${where} (journal.send)`, runId, () => d.send(to.runId, name, k));
        await this.call('resume (host API)', runId, () => d.resume('api', runId));
      } else if (status === 'failed') {
        if (failedResumes++ >= 2 + calls) return;
        await this.call('resume the failed run (host API)', runId, () => d.resume('api', runId));
      } else {
        this.violation('run-stuck', `run ${runId} is ${status} with no live driver`);
        return;
      }
    }
    this.violation('never-finished', `run ${runId} was still ${this.observer.status(runId)} after ${16 + 2 * calls} commands`);
  }

  close(): void {
    this.retire();
    this.observer.close();
  }
}

export interface CaseResult {
  readonly violations: readonly Violation[];
  readonly log: readonly string[];
  readonly baseline: Finished;
}

export interface CaseOptions {
  readonly dir: string;
  /**
   * A shared journal instead of a fresh SQLite file per case (a postgres:// URL: a server's database is costly to make):
   * each case's runs then get ids of their own.
   */
  readonly db?: string;
  readonly sabotage?: Sabotage;
  /** The schedule has real child processes: the world is then a SQLite file they share, and the spec a file. */
  readonly processes?: boolean;
}

let caseNo = 0;

/** A case that takes longer than this is stuck (a promise nothing settles): the check stops with it, not mocha. */
const CASE_TIMEOUT_MS = 180_000;

/** Runs a case in a fresh journal under `dir`: the baseline, the schedule, the fork, then every invariant. */
export async function runCase(c: CaseJ, opts: CaseOptions): Promise<CaseResult> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`checker: a case did not finish in ${CASE_TIMEOUT_MS / 1000} s: ${JSON.stringify(c)}`)), CASE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([runCaseNow(c, opts), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

async function runCaseNow(c: CaseJ, opts: CaseOptions): Promise<CaseResult> {
  const n = ++caseNo;
  const file = path.join(opts.dir, `case-${process.pid}-${n}.db`);
  const own = opts.db !== undefined && isPgUrl(opts.db) && c.schedule.ops.some((o) => OPERATIONS[o.op]?.ownJournal === true);
  const pgName = own ? `checker_${process.pid}_${n}_${Math.random().toString(36).slice(2, 8)}` : undefined;
  try {
    const db = opts.db && pgName ? await createDatabase(opts.db, pgName) : (opts.db ?? file);
    return await runCaseOn(c, opts, n, file, db);
  } finally {
    if (opts.db && pgName) await dropDatabase(opts.db, pgName);
  }
}

async function runCaseOn(c: CaseJ, opts: CaseOptions, n: number, file: string, db: string): Promise<CaseResult> {
  const ids: RunIds = opts.db
    ? { run: `r${n}`, base: `base${n}`, fork: `f${n}`, spent: `spent${n}`, travel: `t${n}`, travelFork: `tf${n}` }
    : { run: 'r', base: 'base', fork: 'f', spent: 'spent', travel: 't', travelFork: 'tf' };
  const files = { spec: file.replace(/\.db$/, '.spec.json'), world: file.replace(/\.db$/, '.world.db') };
  if (opts.processes) fs.writeFileSync(files.spec, JSON.stringify(c.agent));
  const world = new World(opts.processes ? new SqliteLog(files.world) : undefined, opts.sabotage);
  openStore(db).close(); // creates and migrates the journal, so the checker's read-only view can open it
  const scratch = file.replace(/\.db$/, '');
  // Child processes record the script in its own folder, so that a worker (which loads a folder) has the runs' version.
  const script = opts.processes ? WORKER_FIXTURE : FIXTURE;
  const base = new Exec({ db, script, agent: c.agent, world: new World(undefined, opts.sabotage), scratch }, ids, ids.base);
  const x = new Exec({ db, script, agent: c.agent, world, scratch }, ids, ids.run);
  try {
    await base.call('start (host API)', ids.base, () => base.driver().start('api', ids.base));
    await base.finish(ids.base);
    const baseline: Finished = { status: base.observer.status(ids.base), output: outputOf(base, ids.base) };
    base.close();
    for (const op of c.schedule.ops) {
      const kind = OPERATIONS[op.op];
      if (!kind) throw new Error(`checker: no operation ${op.op}`);
      await kind.run(x, op);
      x.retire();
    }
    await x.finish(ids.run);
    const baselines = async (runId: string): Promise<Finished[]> => {
      // A transient fault fails a call once, whichever attempt makes it. An attempt killed while its step still waited
      // spent the fault without the run ever failing, so the resumed run legitimately gets through where the uncrashed
      // one failed: it must then end as an uncrashed run would in the world the schedule left (those faults spent).
      // Killed between an effect and the fault that follows it, an attempt can also keep a fault from ever happening
      // (a resume verifies the effect instead of calling again): then it must end as a run in a world without faults.
      const faulty = c.agent.actions.some((a) => a.fail === 'transient-before' || a.fail === 'transient-after');
      if (!x.crashes || !faulty || matches(x, runId, baseline)) return [baseline];
      const spent = [...world.log.flags('before:'), ...world.log.flags('after:')];
      const every = c.agent.actions.flatMap((a, i) => [0, 1, 2].flatMap((n) => [`before:${actionType(a, i)}:${n}`, `after:${actionType(a, i)}:${n}`]));
      const out: Finished[] = [baseline];
      for (const [k, flags] of [
        [0, spent],
        [1, every],
      ] as const) {
        if (!flags.length) continue;
        const w = new World(undefined, opts.sabotage);
        for (const f of flags) w.once(f);
        const id = `${ids.spent}-${k}`;
        const again = new Exec({ db, script, agent: c.agent, world: w, scratch }, ids, id);
        try {
          await again.call('start (host API)', id, () => again.driver().start('api', id));
          await again.finish(id);
          out.push({ status: again.observer.status(id), output: outputOf(again, id), spent: k === 0 ? flags : ['every transient fault'] });
        } finally {
          again.close();
        }
        if (matches(x, runId, out[out.length - 1] as Finished)) break;
      }
      return out;
    };
    checkRun(x, ids.run, await baselines(ids.run), { compensated: c.schedule.ops.some((o) => OPERATIONS[o.op]?.compensates?.(o) === true) });
    if (c.schedule.fork !== undefined && x.observer.status(ids.run) === 'completed') {
      const d = x.driver();
      await x.call(`fork at step #${c.schedule.fork + 1} (logbook fork)`, ids.fork, () => d.fork(ids.run, c.schedule.fork ?? 0, ids.fork));
      x.retire();
      await x.finish(ids.fork);
      checkRun(x, ids.fork, await baselines(ids.fork), { compensated: false, unlike: rekeyedByFork(c.agent, c.schedule.fork ?? 0) });
      if (c.agent.graph) checkForkRedid(x, ids.run, ids.fork, (s) => s.attempt === 0);
    }
    if (c.agent.graph && c.schedule.travel !== undefined && x.observer.status(ids.run) === 'completed') {
      const nodes = graphNodeSteps(x, ids.run);
      const at = nodes[c.schedule.travel % Math.max(1, nodes.length)];
      if (at) {
        const d = x.driver();
        const from = { thread: ids.run, checkpoint: at.checkpoint };
        await x.call(`time travel from ${ids.run}'s ${at.name} (runGraph)`, ids.travel, () => d.start('api', ids.travel, { from }));
        x.retire();
        await x.finish(ids.travel);
        checkRun(x, ids.travel, await baselines(ids.travel), { compensated: false });
        checkForkRedid(x, ids.run, ids.travel, undefined, at.checkpoint);
        const own = graphNodeSteps(x, ids.travel);
        const last = own[own.length - 1];
        if (x.observer.status(ids.travel) === 'completed' && last) {
          const f = x.driver();
          await x.call(`fork ${ids.travel} at its step #${last.idx + 1} (a fork of a fork)`, ids.travelFork, () =>
            f.fork(ids.travel, last.idx, ids.travelFork),
          );
          x.retire();
          await x.finish(ids.travelFork);
          checkRun(x, ids.travelFork, await baselines(ids.travelFork), { compensated: false });
          checkForkRedid(x, ids.travel, ids.travelFork, (s) => s.attempt === 0);
        }
      }
    }
    for (const d of foldDifferences(x.target.db)) x.violation('fold-differs', d);
    return { violations: x.violations, log: x.log, baseline };
  } finally {
    x.close();
    base.close();
    world.log.close();
    for (const f of [file, files.spec, files.world]) for (const g of [f, `${f}-wal`, `${f}-shm`]) fs.rmSync(g, { force: true });
  }
}

/** A graph agent's node steps (`s<j>@<superstep>`) that ended with the node done, with the checkpoint each ran from. */
function graphNodeSteps(x: Exec, runId: string): Array<{ idx: number; name: string; node: string; checkpoint: string; attempt: number }> {
  return x.observer.steps(runId).flatMap((s) => {
    const r = s.result ? (JSON.parse(s.result) as { outcome?: string; checkpoint?: string; node?: string }) : null;
    return s.status === 'completed' && r?.outcome === 'done' && typeof r.checkpoint === 'string' && typeof r.node === 'string'
      ? [{ idx: s.idx, name: s.name, node: r.node, checkpoint: r.checkpoint, attempt: s.attempt }]
      : [];
  });
}

/**
 * A fork of a graph agent's run makes no effect of a node that ran before its fork point: the origin's node steps it
 * inherited (`inherited`, for logbook fork) or that ran from a checkpoint before the one it travelled to.
 */
function checkForkRedid(x: Exec, origin: string, fork: string, inherited?: (s: { attempt: number }) => boolean, travelledTo?: string): void {
  const before = new Set(
    inherited
      ? graphNodeSteps(x, fork)
          .filter(inherited)
          .map((s) => s.node)
      : graphNodeSteps(x, origin)
          .filter((s) => travelledTo !== undefined && s.checkpoint < travelledTo)
          .map((s) => s.node),
  );
  const redone = x.target.world
    .all()
    .filter((e) => e.kind === 'do' && e.key.startsWith(`langgraph:${fork}:`))
    .filter((e) => before.has(/^langgraph:[^:]+:([^@]+)@/.exec(e.key)?.[1] ?? ''));
  for (const e of redone) x.violation('fork-redid', `${fork} (a fork of ${origin}) made ${e.key}, an effect of a node that ran before its fork point`);
}

export function outputOf(x: Exec, runId: string): unknown {
  const row = x.observer.run(runId);
  return row?.output ? (JSON.parse(row.output) as unknown) : undefined;
}

export function describeOp(op: OpJ, agent: AgentJ): string {
  return OPERATIONS[op.op]?.describe(op, agent) ?? JSON.stringify(op);
}

/**
 * Why a fork at step `at` may end unlike its origin: a call it redoes repeats one of an inherited step, which the origin
 * took for the same action by its key (the run's id is in it) and the fork, under its own id, makes anew (an approval
 * the origin never asked for, a second charge). Undefined where the fork redoes nothing the origin deduped.
 */
function rekeyedByFork(agent: AgentJ, at: number): string | undefined {
  const inherited = new Set(agent.steps.slice(0, at).flatMap((s) => s.calls.map((k) => `${k.action}:${k.n}`)));
  const again = agent.steps.slice(at).flatMap((s) => s.calls.filter((k) => inherited.has(`${k.action}:${k.n}`)));
  return again.length
    ? `the fork redoes ${again.map((k) => `action ${k.action} (n=${k.n})`).join(', ')}, which an inherited step made under the origin's key`
    : undefined;
}
