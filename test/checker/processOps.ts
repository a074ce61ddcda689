// Schedule operations in real processes: the built CLI as child processes, a real SIGKILL at --crash-at, a second CLI racing.

import fc from 'fast-check';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { formatCrashSpec, FAULT_POINTS, type FaultPoint } from '../../src/runtime';
import { CHILD_AGENT_NAME, rawInput } from './agent';
import { actionType, eventName, eventOf, eventsWaitedFor, sleepName, stepName, type AgentJ, type OpJ } from './spec';
import type { Exec } from './executor';
import type { RunSnapshot } from './observer';
import type { Operation } from './operations';
import type { Ended } from './surfaces';

export const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

/**
 * The lease of every child process of a case: short, so that a worker takes over a killed or frozen holder's run in
 * seconds (a worker waits for the lease to expire), and so that a pause past it is quick.
 */
export const CHILD_TTL_MS = 1500;

/**
 * The fault points a --crash-at can name (not the throw point: that one is a transient error, generated elsewhere; nor
 * cancel:after-stop, which no process schedule reaches: cancel schedules are in-process).
 */
const POINTS = FAULT_POINTS.filter((p) => p !== 'action:after-execute-throw' && p !== 'cancel:after-stop');

/** A --crash-at as numbers, resolved against the agent's own step names and action types. */
export interface CrashAt {
  readonly point: number;
  readonly target: number;
  readonly occurrence: number;
}
export const crashAt: fc.Arbitrary<CrashAt | undefined> = fc.option(
  fc.record({ point: fc.nat(POINTS.length - 1), target: fc.nat(3), occurrence: fc.integer({ min: 1, max: 2 }) }),
  { nil: undefined, freq: 4 },
);

export function crashSpec(agent: AgentJ, c: CrashAt): string {
  const point = POINTS[c.point % POINTS.length] as FaultPoint;
  // A sleep is a step too: killed at its step:after-checkpoint, the run dies in its sleep, its wake time journaled.
  const sleeps = agent.steps.flatMap((s, j) => (s.sleepMs !== undefined ? [sleepName(j)] : []));
  const waits = eventsWaitedFor(agent);
  const targets = point.startsWith('step:')
    ? [...agent.steps.map((_, j) => stepName(j)), ...sleeps]
    : point.startsWith('sleep:')
      ? sleeps.length
        ? sleeps
        : [sleepName(0)]
      : point.startsWith('event:')
        ? waits.length
          ? waits
          : [eventName(0)]
        : point.startsWith('child:')
          ? [CHILD_AGENT_NAME]
          : agent.actions.map((a, i) => actionType(a, i));
  return formatCrashSpec({ point, target: targets[c.target % targets.length] ?? 's0', occurrence: c.occurrence });
}

/** The files a child process finds its case in: the agent's spec and the world's SQLite record, beside the journal. */
export function caseFiles(x: Exec): { readonly spec: string; readonly world: string; readonly dir: string } {
  return { spec: `${x.target.scratch}.spec.json`, world: `${x.target.scratch}.world.db`, dir: path.dirname(x.target.scratch) };
}

export function env(x: Exec, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const f = caseFiles(x);
  const sabotage = x.target.world.sabotage;
  return {
    ...process.env,
    NO_COLOR: '1',
    LOGBOOK_STATE_DIR: f.dir,
    LOGBOOK_CHECKER_SPEC: f.spec,
    LOGBOOK_CHECKER_WORLD: f.world,
    LOGBOOK_LEASE_TTL_MS: String(CHILD_TTL_MS),
    ...(Object.keys(sabotage).length ? { LOGBOOK_CHECKER_SABOTAGE: JSON.stringify(sabotage) } : {}),
    ...extra,
  };
}

/** A file name under the case's folder for a hold: the child writes `<it>.held` when it is held, and goes on once `<it>` exists. */
export function holdFile(x: Exec): string {
  return path.join(caseFiles(x).dir, `hold-${Date.now()}-${Math.random().toString(36).slice(2)}`);
}

/** Removes a hold's files once its children are gone (a test's scratch folder outlives many cases). */
export function dropHold(hold: string): void {
  for (const f of [hold, `${hold}.held`]) fs.rmSync(f, { force: true });
}

export function argsOf(x: Exec, op: string, crash: string | undefined): string[] {
  const tail = [...(crash ? ['--crash-at', crash] : []), '--journal', x.target.db, '--json'];
  if (op === 'run') return [CLI, 'run', x.target.script, '--input', JSON.stringify(rawInput(x.target.agent.fields)), '--run-id', x.runId, ...tail];
  return [CLI, op, x.runId, ...tail];
}

/** How a CLI process ended: killed, refused (its [LB_…] code), or the status its --json printed. */
export function endedOf(r: Pick<SpawnSyncReturns<string>, 'status' | 'signal' | 'stdout' | 'stderr'>): Ended {
  if (r.signal === 'SIGKILL') return { kind: 'crashed', where: /--crash-at (\S+) reached/.exec(r.stderr)?.[1] ?? 'by SIGKILL' };
  try {
    const o = JSON.parse(r.stdout) as { status: string; error?: { code?: string; message: string } };
    return { kind: 'outcome', status: o.status, ...(o.error ? { error: o.error } : {}) };
  } catch {
    const code = /\[(LB_[A-Z_]+)\]/.exec(r.stderr)?.[1];
    if (code && code !== 'LB_LEASE_LOST') return { kind: 'refused', code, message: r.stderr.trim() };
    return { kind: 'error', message: `exit ${r.status} ${r.signal ?? ''}: ${r.stderr.trim()}` };
  }
}

export function cli(x: Exec, args: string[], extra?: Record<string, string>): Ended {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: env(x, extra), timeout: 120_000 });
  if (r.error) return { kind: 'error', message: String(r.error) };
  return endedOf(r);
}

export function label(op: string, crash: string | undefined): string {
  return `logbook ${op}${crash ? ` --crash-at ${crash}` : ''} (a child process)`;
}

const secondCompensates = (op: OpJ): boolean => op.second === 'compensate';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether some connection holds the SQLite journal's write lock now (false for PostgreSQL: no file lock to hold). */
function writeLocked(db: string): boolean {
  if (/^postgres(ql)?:/.test(db)) return false;
  const probe = new Database(db, { timeout: 0 });
  try {
    probe.exec('BEGIN IMMEDIATE; ROLLBACK');
    return false;
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw e;
  } finally {
    probe.close();
  }
}

/** Polls `cond` every 20 ms until it holds (true) or `ms` passed (false). */
export async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}

/** Waits until the kernel shows the process stopped (SIGSTOP delivered), so that nothing it does after counts as before. */
async function stopped(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  await until(() => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return /^[TtZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
    } catch {
      return true;
    }
  }, 5_000);
}

/** Says in the case's log that a freeze was taken again (see freeze): a replay that differs there shows why. */
export function undone(x: Exec, stops: number): void {
  if (stops > 0) x.log.push(`(the SIGSTOP caught the process inside a write transaction ${stops} time(s): woken and frozen again)`);
}

/**
 * SIGSTOP, and the process stopped outside a write transaction of the SQLite journal. A process frozen inside one holds
 * SQLite's single write lock, and every other writer waits for it (the busy timeout, then LB_DB_BUSY: nothing lost, and
 * nothing any process can do while it stays frozen); the schedules freeze it where a lease decides, so a stop that
 * caught a transaction (a lease renewal in flight) is undone at once and taken again a moment later. Returns how many
 * stops were undone.
 */
export async function freeze(child: ChildProcess, db: string, onStop: () => void = () => undefined): Promise<number> {
  for (let tries = 0; ; tries++) {
    onStop();
    child.kill('SIGSTOP');
    await stopped(child.pid);
    if (tries >= 50 || !writeLocked(db)) return tries;
    child.kill('SIGCONT');
    await sleep(10 + Math.floor(Math.random() * 40));
  }
}

/**
 * The CLI `command` as a child process held in its provider call #at (or finished before it reached it): the run's
 * journal as it was before it started, and its end once it exits.
 */
async function spawnHeld(
  x: Exec,
  command: string,
  op: OpJ,
): Promise<{ child: ChildProcess; hold: string; before: RunSnapshot; done: () => boolean; ended: () => Promise<Ended> }> {
  const hold = holdFile(x);
  const child = spawn(process.execPath, argsOf(x, command, undefined), {
    env: env(x, { LOGBOOK_CHECKER_HOLD: `${String(op.at)}:${hold}` }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<{ status: number | null; signal: NodeJS.Signals | null }>((r) => child.on('close', (status, signal) => r({ status, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const before = x.observer.snapshot(x.runId);
  while (!done && !fs.existsSync(`${hold}.held`)) await sleep(10);
  return { child, hold, before, done: () => done, ended: async () => endedOf({ ...(await exited), stdout, stderr }) };
}

/**
 * The first CLI process is held in its provider call #at (before the effect), a live process in flight; a second CLI
 * process then drives the same run: it must be refused and change nothing. Then the first goes on.
 */
async function race(x: Exec, op: OpJ): Promise<void> {
  const first = String(op.first);
  const h = await spawnHeld(x, first, op);
  const second = String(op.second);
  if (!h.done()) {
    const snap = x.observer.snapshot(x.runId);
    x.after(
      `${label(second, undefined)} while the first is held in provider call #${Number(op.at) + 1}`,
      x.runId,
      cli(x, argsOf(x, second, undefined)),
      snap,
      true,
    );
    fs.writeFileSync(h.hold, '');
  }
  x.after(label(first, undefined), x.runId, await h.ended(), h.before);
  const reached = fs.existsSync(`${h.hold}.held`);
  dropHold(h.hold);
  if (!reached)
    await x.call(`${label(second, undefined)} (the first never reached provider call #${Number(op.at) + 1})`, x.runId, () =>
      Promise.resolve(cli(x, argsOf(x, second, undefined))),
    );
}

/**
 * A pause past the lease (a frozen VM, a long GC): the first CLI process is SIGSTOPped in its provider call #at,
 * before the effect, for longer than its lease; a second process resumes the run meanwhile (on SQLite it must be
 * refused: the frozen holder is alive; on PostgreSQL the expiry decides and it takes over). Then SIGCONT: the first
 * must not send its request any more (ctx.signal, checked right before it, must read aborted).
 */
async function pausePastLease(x: Exec, op: OpJ): Promise<void> {
  const first = String(op.first);
  const h = await spawnHeld(x, first, op);
  if (!h.done()) {
    undone(x, await freeze(h.child, x.target.db));
    await sleep(CHILD_TTL_MS * 2);
    const snap = x.observer.snapshot(x.runId);
    x.after(
      `logbook resume (a second child process) while the first is frozen (SIGSTOP) past its ${CHILD_TTL_MS} ms lease in provider call #${Number(op.at) + 1}`,
      x.runId,
      cli(x, argsOf(x, 'resume', undefined)),
      snap,
    );
    fs.writeFileSync(h.hold, '');
    h.child.kill('SIGCONT');
  }
  const ended = await h.ended();
  dropHold(h.hold);
  x.after(`${label(first, undefined)}, frozen and then woken (SIGCONT)`, x.runId, ended, h.before);
}

const simple = (op: 'run' | 'resume' | 'compensate', starts: boolean, weight: number): Operation => ({
  starts,
  processes: true,
  weight,
  arbitrary: () => crashAt.map((crash) => ({ op: `cli-${op}`, ...(crash ? { crash } : {}) })),
  describe: (o, agent) => label(op, o.crash ? crashSpec(agent, o.crash as CrashAt) : undefined),
  ...(op === 'compensate' ? { compensates: () => true } : {}),
  run: async (x, o) => {
    const crash = o.crash ? crashSpec(x.target.agent, o.crash as CrashAt) : undefined;
    await x.call(label(op, crash), x.runId, () => Promise.resolve(cli(x, argsOf(x, op, crash))));
  },
});

/**
 * `logbook send` of the event the run waits for (or, not waiting, of its script's first wait), which continues the run
 * in that process; maybe killed right after the event was delivered (--crash-at <name>@event:after-deliver).
 */
/** A `logbook send` of the event the run waits for (or its script's first wait): the call, and the event it sends. */
function sendCall(x: Exec, crashed: boolean): { args: string[]; what: string; runId: string; eventId: string } {
  const first = x.target.agent.steps.find((s) => s.kind === 'wait');
  // A parent waiting for its child (run.child): the send goes to the child, which continues both.
  const to = x.observer.waitTarget(x.runId) ?? { runId: x.runId, name: eventName(first?.event ?? 0) };
  const name = to.name;
  const ev = eventOf(name, x.observer.nextEvent(to.runId, name));
  const crash = crashed ? `${name}@event:after-deliver` : undefined;
  const args = [
    CLI,
    'send',
    to.runId,
    name,
    '--data',
    JSON.stringify(ev.data),
    '--id',
    ev.id,
    ...(crash ? ['--crash-at', crash] : []),
    '--journal',
    x.target.db,
    '--json',
  ];
  return { args, what: `logbook send ${name} --id ${ev.id}${crash ? ` --crash-at ${crash}` : ''} (a child process)`, runId: to.runId, eventId: ev.id };
}

/** A CLI process not waited for: how it ended, once it has. */
function cliLater(x: Exec, args: string[]): Promise<Ended> {
  const child = spawn(process.execPath, args, { env: env(x), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve) => child.on('close', (status, signal) => resolve(endedOf({ status, signal, stdout, stderr }))));
}

/**
 * `logbook send` of the event the run waits for (or, not waiting, of its script's first wait), which continues the run
 * in that process; maybe killed right after the event was delivered (--crash-at <name>@event:after-deliver).
 */
const cliSend: Operation = {
  starts: false,
  processes: true,
  weight: 1,
  arbitrary: () => fc.record({ op: fc.constant('cli-send'), crash: fc.boolean() }),
  describe: (o, agent) =>
    `logbook send of ${eventsWaitedFor(agent).length > 0 ? 'the event the run waits for' : 'an event the run never waits for (kept, and reported never delivered)'} (a child process)${o.crash ? ', killed right after the event is delivered' : ''}`,
  run: async (x, o) => {
    const send = sendCall(x, o.crash === true);
    await x.call(send.what, x.runId, () => Promise.resolve(cli(x, send.args)));
  },
};

/**
 * The gate the run stops at, as `logbook approve` (or `reject`, as the script's person answers it) would decide it;
 * undefined when no action of the run awaits a decision.
 */
function decideCall(x: Exec): { args: string[]; what: string; runId: string; eventId: string } | undefined {
  const gate = x.observer.actions(x.runId).find((a) => a.status === 'awaiting-approval' && a.approval === 'pending');
  if (!gate) return undefined;
  const a = x.target.agent;
  const call = a.steps
    .flatMap((s) => s.calls)
    .find((c) => {
      const act = a.actions[c.action];
      return act !== undefined && `${actionType(act, c.action)}:${x.runId}:${c.n}` === gate.id;
    });
  const verb = call && a.actions[call.action]?.approval === 'reject' ? 'reject' : 'approve';
  return {
    args: [CLI, verb, x.runId, gate.id, '--journal', x.target.db, '--json'],
    what: `logbook ${verb} ${gate.id} (a child process)`,
    runId: x.runId,
    eventId: `logbook:approval:${gate.id}`,
  };
}

/**
 * What a run waits for (its event by `logbook send`, or its gate's decision by `logbook approve`) and a second driver
 * of it (resume or compensate), started at once in two processes. Each may find the other holding the run or done
 * with it; the one promise their rows cannot judge (both change them) is the giver's own: once what it gave is kept,
 * it is not refused, since a refused command changes nothing.
 */
async function giveRace(x: Exec, op: OpJ): Promise<void> {
  const second = String(op.second);
  const give = op.give === 'approve' ? decideCall(x) : sendCall(x, false);
  if (!give) {
    x.log.push(`logbook approve racing logbook ${second}: no gate of run ${x.runId} awaits a decision; nothing done`);
    return;
  }
  // Negative control: a giver that keeps what it gives and then answers refused, as send and approve did before.
  const control = op.control === 'refused-after-keep';
  const giveArgs = control ? [...give.args.slice(0, 2), '--no-resume', ...give.args.slice(2)] : give.args;
  const [kept, other] = await Promise.all([cliLater(x, giveArgs), cliLater(x, argsOf(x, second, undefined))]);
  const given: Ended = control && kept.kind !== 'refused' ? { kind: 'refused', code: 'LB_RUN_NOT_RESUMABLE', message: 'the negative control' } : kept;
  // Each is checked as any command is, its refusal against the rows as both left them (the other's writes are not its).
  const now = x.observer.snapshot(x.runId);
  x.after(`${give.what}, racing logbook ${second}`, x.runId, given, now);
  x.after(`${label(second, undefined)}, racing ${give.what}`, x.runId, other, now);
  if (given.kind === 'refused' && x.observer.inbox(give.runId).some((e) => e.id === give.eventId))
    x.violation('refusal-changed-run', `${give.what} was refused [${given.code}] racing logbook ${second}, but what it gave (${give.eventId}) was kept`);
}

export const PROCESS_OPERATIONS: Record<string, Operation> = {
  'cli-send': cliSend,
  'cli-give-race': {
    starts: false,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('cli-give-race'), give: fc.constantFrom('send', 'approve'), second: fc.constantFrom('resume', 'compensate') }),
    describe: (o) =>
      `logbook ${o.give === 'approve' ? 'approve of the gate the run stops at' : 'send of the event the run waits for'} and logbook ${String(o.second)}, started at once in two processes`,
    run: giveRace,
    compensates: secondCompensates,
  },
  'cli-run': simple('run', true, 3),
  'cli-race-run': {
    starts: true,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('cli-race-run'), first: fc.constant('run'), second: fc.constantFrom('resume', 'compensate'), at: fc.nat(2) }),
    describe: (o) => `logbook run (a child process), held in its provider call #${Number(o.at) + 1}; meanwhile logbook ${String(o.second)} in a second process`,
    run: race,
    compensates: secondCompensates,
  },
  'cli-pause-run': {
    starts: true,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('cli-pause-run'), first: fc.constant('run'), at: fc.nat(2) }),
    describe: (o) =>
      `logbook run (a child process), frozen with SIGSTOP in its provider call #${Number(o.at) + 1} past its lease; meanwhile logbook resume in a second process; then SIGCONT`,
    run: pausePastLease,
  },
  'cli-resume': simple('resume', false, 3),
  'cli-compensate': simple('compensate', false, 1),
  'cli-race': {
    starts: false,
    processes: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('cli-race'), first: fc.constant('resume'), second: fc.constantFrom('resume', 'compensate'), at: fc.nat(2) }),
    describe: (o) =>
      `logbook resume (a child process), held in its provider call #${Number(o.at) + 1}; meanwhile logbook ${String(o.second)} in a second process`,
    run: race,
    compensates: secondCompensates,
  },
};
