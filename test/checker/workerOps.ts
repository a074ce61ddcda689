// Schedule operations with real `logbook worker` processes: a run queued with --detach, workers killed, frozen, raced.

import fc from 'fast-check';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rawInput } from './agent';
import type { Exec } from './executor';
import type { RunSnapshot } from './observer';
import type { Operation } from './operations';
import { CHILD_TTL_MS, CLI, argsOf, cli, crashAt, crashSpec, dropHold, env, freeze, holdFile, label, sleep, undone, until, type CrashAt } from './processOps';
import type { AgentJ, OpJ } from './spec';
import type { Ended } from './surfaces';
import { sleepsOf } from './invariants';

/** The folder a worker loads: the checker's generic agent alone (a worker loads every script of its folder). */
export const WORKER_SCRIPTS = path.join(__dirname, 'worker-scripts');
export const WORKER_FIXTURE = path.join(WORKER_SCRIPTS, 'checker.ts');

/** A worker takes a run whose holder died or froze once its lease expired, polling every POLL_MS: this is long enough. */
const CLAIM_WAIT_MS = CHILD_TTL_MS + 45_000;
const OUTCOME_WAIT_MS = 90_000;

interface WorkerProc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: string[];
  stderr: string;
  exit: { readonly status: number | null; readonly signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;
}

function spawnWorker(x: Exec, name: string, args: readonly string[] = [], extra: Record<string, string> = {}): WorkerProc {
  const child = spawn(
    process.execPath,
    [CLI, 'worker', '--scripts', WORKER_SCRIPTS, '--name', name, '--poll-ms', '100', '--grace', '1', '--journal', x.target.db, ...args],
    {
      // Every sleep with time left is released (status sleeping): a worker, this one or another, claims it when due.
      env: env(x, { LOGBOOK_SLEEP_RELEASE_MS: '0', ...extra }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let buf = '';
  const w: WorkerProc = {
    name,
    child,
    lines: [],
    stderr: '',
    exit: undefined,
    exited: new Promise<void>((r) =>
      child.on('close', (status, signal) => {
        w.exit = { status, signal };
        r();
      }),
    ),
  };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    w.lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (w.stderr += d));
  return w;
}

const alive = (w: WorkerProc): boolean => w.exit === undefined;

/** What the worker said it did with the run: the words after `worker: <id> ` of its last line about it. */
function outcomeWords(w: WorkerProc, runId: string): string | undefined {
  const prefix = `worker: ${runId} `;
  // Released asleep is not an outcome: the worker (or another) claims the run again when it is due.
  const said = w.lines.filter((l) => l.startsWith(prefix) && !/^(released|was already taken over|sleeping until)\b/.test(l.slice(prefix.length)));
  const last = said[said.length - 1];
  return last === undefined ? undefined : last.slice(prefix.length);
}

/** The attempt of the worker's last claim of the run (its lease's), from `worker: claimed <id> to <kind> (epoch E, attempt A)`. */
function claimedAttempt(w: WorkerProc, runId: string): number | undefined {
  const re = new RegExp(`^worker: claimed ${runId} to \\S+ \\(epoch \\d+, attempt (\\d+)\\)`);
  const m = w.lines.map((l) => re.exec(l)).filter((x) => x !== null);
  const last = m[m.length - 1];
  return last?.[1] === undefined ? undefined : Number(last[1]);
}

/** How a worker's part in the run ended, as the schedule sees it: killed, its outcome line, or nothing about the run. */
function endedOfWorker(w: WorkerProc, runId: string): Ended {
  if (w.exit?.signal === 'SIGKILL') return { kind: 'crashed', where: /--crash-at (\S+) reached/.exec(w.stderr)?.[1] ?? 'by SIGKILL' };
  const words = outcomeWords(w, runId);
  if (words === undefined) {
    if (w.exit && w.exit.status !== 0)
      return { kind: 'error', message: `logbook worker ${w.name} exited ${w.exit.status} ${w.exit.signal ?? ''}: ${w.stderr.trim()}` };
    return { kind: 'outcome', status: claimedAttempt(w, runId) === undefined ? 'never claimed it' : 'claimed it, no outcome' };
  }
  if (words.startsWith('lost its lease: ')) return { kind: 'outcome', status: 'interrupted', error: { code: 'LB_LEASE_LOST', message: words.slice(16) } };
  if (words.startsWith('stopped: ') || words.startsWith('has a damaged journal'))
    return { kind: 'error', message: `logbook worker ${w.name}: ${words}\n${w.stderr.trim()}` };
  const m = /^(\S+)(?:: \[([A-Za-z_]+)\] ([\s\S]*))?$/.exec(words);
  return { kind: 'outcome', status: m?.[1] ?? words, ...(m?.[2] ? { error: { code: m[2], message: m[3] ?? '' } } : {}) };
}

/** Whether a worker may claim the run now or once its holder's lease expires: the children of earlier operations are gone. */
function claimable(x: Exec): boolean {
  const s = x.observer.run(x.runId)?.status;
  return s === 'queued' || s === 'running' || s === 'compensating';
}

/**
 * Worker w takes over a run whose holder died or froze (once its lease expired) and drives it to an outcome. A run
 * that stays claimable meanwhile is a violation; one that stopped being claimable without w (it had ended) is not.
 */
async function takesOver(x: Exec, w: WorkerProc, within: string): Promise<boolean> {
  const claimed = (): boolean => claimedAttempt(w, x.runId) !== undefined;
  await until(() => claimed() || !claimable(x) || !alive(w), CLAIM_WAIT_MS);
  if (!claimed()) {
    if (claimable(x))
      x.violation(
        'worker-never-claimed',
        `worker ${w.name} did not take run ${x.runId} (${x.observer.run(x.runId)?.status ?? '?'}) ${within}; it printed: ${w.lines.join(' | ')}`,
      );
    return false;
  }
  await until(() => outcomeWords(w, x.runId) !== undefined || !alive(w), OUTCOME_WAIT_MS);
  return true;
}

/** Whether the worker is in its claim loop (its SIGTERM handler installed): before that, SIGTERM just ends it. */
const ready = (w: WorkerProc): boolean => w.lines.some((l) => / claims runs of /.test(l));

/** SIGTERM (a deploy's stop: it finishes or releases within its 1 s grace), then its exit; SIGKILL if it hangs. */
async function stopWorkers(ws: readonly WorkerProc[]): Promise<void> {
  for (const w of ws) {
    if (!alive(w)) continue;
    w.child.kill('SIGCONT');
    await until(() => ready(w) || !alive(w), 60_000);
    w.child.kill('SIGTERM');
  }
  for (const w of ws) {
    if (!(await until(() => !alive(w), 30_000))) {
      w.child.kill('SIGKILL');
      await w.exited;
    }
  }
}

/** Ends every worker of an operation the checker gave up on (an exception): none outlives its case. */
function killWorkers(ws: readonly WorkerProc[]): void {
  for (const w of ws) {
    if (!alive(w)) continue;
    w.child.kill('SIGCONT');
    w.child.kill('SIGKILL');
  }
}

/** A worker that ended its part other than by its drive's outcome or a kill: an exit that is not 0 after SIGTERM. */
function checkExit(x: Exec, w: WorkerProc, what: string): void {
  if (w.exit && w.exit.signal !== 'SIGKILL' && w.exit.status !== 0)
    x.violation(
      'unexpected-error',
      `${what} exited ${w.exit.status ?? w.exit.signal ?? '?'} after SIGTERM: ${w.stderr.trim().split('\n').slice(-6).join(' | ')}`,
    );
}

/** `logbook run --detach`: the run is queued for a worker. False if it was not (a refusal, checked like any command's). */
async function detach(x: Exec): Promise<boolean> {
  const args = [
    CLI,
    'run',
    '--detach',
    x.target.script,
    '--input',
    JSON.stringify(rawInput(x.target.agent.fields)),
    '--run-id',
    x.runId,
    '--journal',
    x.target.db,
    '--json',
  ];
  const e = await x.call('logbook run --detach (a child process): queued for a worker', x.runId, () => Promise.resolve(cli(x, args)));
  return e.kind === 'outcome' && e.status === 'queued';
}

const workerLabel = (crash: string | undefined): string => `logbook worker${crash ? ` --crash-at ${crash}` : ''} (a child process)`;

/**
 * Workers drive the run as earlier operations left it: worker a (killed for real at its --crash-at, if any), and worker
 * b, polling beside it from the start (`also`) or started once a died. Whoever outlives a takes the run over once a's
 * lease expired. Both then stop on SIGTERM.
 */
async function driveWithWorkers(x: Exec, op: OpJ): Promise<void> {
  if (!claimable(x)) {
    x.log.push(`logbook worker: nothing to claim (run ${x.runId} is ${x.observer.run(x.runId)?.status ?? 'absent'})`);
    return;
  }
  const crash = op.crash ? crashSpec(x.target.agent, op.crash as CrashAt) : undefined;
  const ws: WorkerProc[] = [];
  try {
    const before = x.observer.snapshot(x.runId);
    const a = spawnWorker(x, 'a', crash ? ['--crash-at', crash] : []);
    ws.push(a);
    const told = (w: WorkerProc | undefined): boolean => w !== undefined && outcomeWords(w, x.runId) !== undefined;
    let b: WorkerProc | undefined;
    if (op.also === true) {
      // Once a holds the run (so that a's --crash-at applies): b then polls beside a live holder, and takes over if a dies.
      await until(() => claimedAttempt(a, x.runId) !== undefined || told(a) || !alive(a), OUTCOME_WAIT_MS);
      ws.push((b = spawnWorker(x, 'b')));
    }
    await until(() => told(a) || !alive(a) || told(b), OUTCOME_WAIT_MS);
    x.after(workerLabel(crash), x.runId, endedOfWorker(a, x.runId), before);
    const which = op.also === true ? 'polling beside a since it claimed the run' : 'started after a died';
    if (!told(a) && !told(b) && !alive(a)) {
      const mid = x.observer.snapshot(x.runId);
      if (!b) ws.push((b = spawnWorker(x, 'b')));
      if (await takesOver(x, b, `within ${CLAIM_WAIT_MS} ms of worker a's death`))
        x.after(`logbook worker b (${which})`, x.runId, endedOfWorker(b, x.runId), mid);
    } else if (b && told(b)) x.after(`logbook worker b (${which})`, x.runId, endedOfWorker(b, x.runId), before);
    await stopWorkers(ws);
    for (const w of ws) checkExit(x, w, `logbook worker ${w.name}`);
  } finally {
    killWorkers(ws);
  }
}

/**
 * Queues the run, starts worker a held in its provider call #at (`env` says more of where) and waits until it is held
 * there or has finished; then `body`. Every worker it started is killed and the hold's files removed after.
 */
async function withHeldWorker(
  x: Exec,
  op: OpJ,
  env: Record<string, string>,
  body: (w: { a: WorkerProc; ws: WorkerProc[]; hold: string; held: () => boolean; before: RunSnapshot }) => Promise<void>,
): Promise<void> {
  if (!(await detach(x))) return;
  const hold = holdFile(x);
  const ws: WorkerProc[] = [];
  try {
    const before = x.observer.snapshot(x.runId);
    const a = spawnWorker(x, 'a', [], { LOGBOOK_CHECKER_HOLD: `${String(op.at)}:${hold}`, ...env });
    ws.push(a);
    const held = (): boolean => fs.existsSync(`${hold}.held`);
    await until(() => held() || outcomeWords(a, x.runId) !== undefined || !alive(a), OUTCOME_WAIT_MS);
    await body({ a, ws, hold, held, before });
  } finally {
    killWorkers(ws);
    dropHold(hold);
  }
}

/**
 * A worker frozen past its lease (SIGSTOP: a paused VM, a long GC) in its provider call #at: before its lease check
 * (`before-check`), or between the check and the send (`window`, which only a provider refusing a repeated key closes).
 * Worker b takes the run over once the lease expired and drives it; then a is woken (SIGCONT). Woken, a must write
 * nothing more to the run, and send nothing (in the window: only the request it was frozen in, which the provider
 * refuses if b already sent it).
 */
async function pauseWorker(x: Exec, op: OpJ): Promise<void> {
  const where = op.where === 'window' ? 'window' : 'before-check';
  const at = `provider call #${Number(op.at) + 1} ${where === 'window' ? 'between its lease check and its send' : 'before its lease check'}`;
  await withHeldWorker(x, op, where === 'window' ? { LOGBOOK_CHECKER_HOLD_AT: 'window' } : {}, async ({ a, ws, hold, held, before }) => {
    if (!held()) {
      x.after(`${workerLabel(undefined)} (it never reached ${at})`, x.runId, endedOfWorker(a, x.runId), before);
      await stopWorkers(ws);
      checkExit(x, a, 'logbook worker a');
      return;
    }
    const { key } = JSON.parse(fs.readFileSync(`${hold}.held`, 'utf8')) as { key: string };
    // Requests a checked before this and sends after it wakes went out of the window (the held one, and any call of
    // it the freeze caught between its check and its send): the provider refuses their repeated keys.
    undone(x, await freeze(a.child, x.target.db, () => x.target.world.froze(`pid${a.child.pid ?? '?'}`, Date.now())));
    // Printed when it claimed the run, before it drove it; read from its pipe by now, or very soon.
    await until(() => claimedAttempt(a, x.runId) !== undefined, 10_000);
    const attempt = claimedAttempt(a, x.runId);
    if (attempt === undefined) throw new Error(`checker harness: worker a is held in run ${x.runId} but never said it claimed it: ${a.lines.join(' | ')}`);
    const seq = Math.max(0, ...x.target.world.all().map((e) => e.seq));
    const mid = x.observer.snapshot(x.runId);
    const b = spawnWorker(x, 'b');
    ws.push(b);
    await takesOver(x, b, `within ${CLAIM_WAIT_MS} ms while worker a was frozen past its ${CHILD_TTL_MS} ms lease`);
    x.after(`logbook worker b while worker a is frozen (SIGSTOP) past its ${CHILD_TTL_MS} ms lease in ${at}`, x.runId, endedOfWorker(b, x.runId), mid);
    const written = x.observer.events(x.runId).filter((e) => e.attempt === attempt).length;
    fs.writeFileSync(hold, '');
    const woken = Date.now();
    a.child.kill('SIGCONT');
    await until(() => outcomeWords(a, x.runId) !== undefined || !alive(a), OUTCOME_WAIT_MS);
    x.after(`${workerLabel(undefined)}, frozen in ${at} and then woken (SIGCONT)`, x.runId, endedOfWorker(a, x.runId), before);
    // Under its old lease (a later claim of its own is another attempt), woken, it passes no lease check: whatever it
    // sends after waking was checked before the freeze, in the window, or it is a violation.
    const mine = x.target.world.all().filter((e) => e.seq > seq && e.proc === `pid${a.child.pid ?? '?'}#a${attempt}`);
    const sent = mine.filter((e) => e.checked >= woken);
    if (sent.length)
      x.violation(
        'woken-holder-sent',
        `worker a, woken after its lease was taken over, checked its lease and sent ${sent.map((e) => `${e.kind} ${e.key}`).join(', ')} (frozen in ${at}); run ${x.runId}`,
      );
    const wrote = x.observer
      .events(x.runId)
      .filter((e) => e.attempt === attempt)
      .slice(written);
    if (wrote.length)
      x.violation(
        'woken-holder-wrote',
        `worker a, woken after its lease was taken over, wrote ${wrote.map((e) => e.kind).join(', ')} to run ${x.runId} (attempt ${attempt})`,
      );
    const late = mine.filter((e) => e.checked < woken);
    if (late.length)
      x.log.push(
        `woken, worker a sent what it had checked before the freeze (${late.map((e) => `${e.key}${e.key === key ? ', the held one' : ''}: ${e.kind === 'repeat' ? 'refused as a repeated key' : 'landed'}`).join('; ')})`,
      );
    await stopWorkers(ws);
    for (const w of ws) checkExit(x, w, `logbook worker ${w.name}`);
  });
}

/** How long worker a's sleeps last when a schedule freezes it asleep: past its lease, with time left for b to wait. */
const FROZEN_SLEEP_MS = 4000;

/**
 * A worker frozen (SIGSTOP) past its lease while the run sleeps in it: worker a drives the run, its sleeps stretched to
 * 4 s and held in the process (not released), and once the run waits in one, a is frozen. Worker b claims the run once
 * the lease expired, waits what is left of the journaled sleep, and drives it on; then a is woken (SIGCONT): its sleep
 * is over at once, and it must write nothing more and send nothing.
 */
async function pauseWorkerAsleep(x: Exec): Promise<void> {
  if (!(await detach(x))) return;
  const ws: WorkerProc[] = [];
  try {
    const before = x.observer.snapshot(x.runId);
    const a = spawnWorker(x, 'a', [], { LOGBOOK_CHECKER_SLEEP_MIN_MS: String(FROZEN_SLEEP_MS), LOGBOOK_SLEEP_RELEASE_MS: String(FROZEN_SLEEP_MS * 10) });
    ws.push(a);
    const asleep = (): { idx: number; wakeAt: number } | undefined => {
      const last = x.observer.steps(x.runId).at(-1);
      const wakeAt = last ? sleepsOf(x, x.runId).get(last.idx) : undefined;
      return last && wakeAt !== undefined && wakeAt > Date.now() + CHILD_TTL_MS ? { idx: last.idx, wakeAt } : undefined;
    };
    let at: { idx: number; wakeAt: number } | undefined;
    await until(() => (at = asleep()) !== undefined || outcomeWords(a, x.runId) !== undefined || !alive(a), OUTCOME_WAIT_MS);
    const sleeping = at;
    if (!sleeping) {
      x.after(`${workerLabel(undefined)} (the run never slept in it: nothing to freeze it in)`, x.runId, endedOfWorker(a, x.runId), before);
      await stopWorkers(ws);
      checkExit(x, a, 'logbook worker a');
      return;
    }
    undone(x, await freeze(a.child, x.target.db));
    await until(() => claimedAttempt(a, x.runId) !== undefined, 10_000);
    const attempt = claimedAttempt(a, x.runId);
    if (attempt === undefined) throw new Error(`checker harness: worker a drives run ${x.runId} but never said it claimed it: ${a.lines.join(' | ')}`);
    const seq = Math.max(0, ...x.target.world.all().map((e) => e.seq));
    const written = x.observer.events(x.runId).filter((e) => e.attempt === attempt).length;
    const mid = x.observer.snapshot(x.runId);
    const b = spawnWorker(x, 'b');
    ws.push(b);
    const within = `while worker a was frozen (SIGSTOP) past its ${CHILD_TTL_MS} ms lease in the sleep of step #${sleeping.idx + 1}`;
    if (await takesOver(x, b, within)) x.after(`logbook worker b ${within}`, x.runId, endedOfWorker(b, x.runId), mid);
    const woken = Date.now();
    a.child.kill('SIGCONT');
    await until(() => outcomeWords(a, x.runId) !== undefined || !alive(a), OUTCOME_WAIT_MS);
    x.after(`${workerLabel(undefined)}, frozen in its sleep and then woken (SIGCONT)`, x.runId, endedOfWorker(a, x.runId), before);
    const sent = x.target.world.all().filter((e) => e.seq > seq && e.proc === `pid${a.child.pid ?? '?'}#a${attempt}`);
    if (sent.length)
      x.violation(
        'woken-holder-sent',
        `worker a, woken in its sleep after its lease was taken over, sent ${sent.map((e) => `${e.kind} ${e.key}`).join(', ')} (at ${woken}); run ${x.runId}`,
      );
    const wrote = x.observer
      .events(x.runId)
      .filter((e) => e.attempt === attempt)
      .slice(written);
    if (wrote.length)
      x.violation(
        'woken-holder-wrote',
        `worker a, woken in its sleep after its lease was taken over, wrote ${wrote.map((e) => e.kind).join(', ')} to run ${x.runId}`,
      );
    await stopWorkers(ws);
    for (const w of ws) checkExit(x, w, `logbook worker ${w.name}`);
  } finally {
    killWorkers(ws);
  }
}

/**
 * A worker held live in its provider call #at (renewing its lease); meanwhile a second driver: `logbook resume` or
 * `logbook compensate` in another process (refused, changing nothing), or a second worker, which must not claim the
 * run for two leases' length. Then the first goes on.
 */
async function raceWorker(x: Exec, op: OpJ): Promise<void> {
  const second = String(op.second);
  await withHeldWorker(x, op, {}, async ({ a, ws, hold, held, before }) => {
    const during = held()
      ? ` while worker a is held in its provider call #${Number(op.at) + 1}`
      : ` (worker a never reached provider call #${Number(op.at) + 1})`;
    const secondCommand = async (): Promise<void> => {
      if (second !== 'worker') {
        const snap = x.observer.snapshot(x.runId);
        x.after(`${label(second, undefined)}${during}`, x.runId, cli(x, argsOf(x, second, undefined)), snap, held());
        return;
      }
      const b = spawnWorker(x, 'b');
      ws.push(b);
      await sleep(CHILD_TTL_MS * 2);
      if (held() && claimedAttempt(b, x.runId) !== undefined)
        x.violation('claimed-live-lease', `worker b claimed run ${x.runId}${during}, a live holder renewing its lease`);
      x.log.push(`logbook worker b${during}, for ${CHILD_TTL_MS * 2} ms: ${claimedAttempt(b, x.runId) === undefined ? 'claimed nothing' : 'claimed it'}`);
    };
    if (held()) {
      await secondCommand();
      fs.writeFileSync(hold, '');
      await until(() => outcomeWords(a, x.runId) !== undefined || !alive(a), OUTCOME_WAIT_MS);
      x.after(workerLabel(undefined), x.runId, endedOfWorker(a, x.runId), before);
    } else {
      x.after(workerLabel(undefined), x.runId, endedOfWorker(a, x.runId), before);
      await stopWorkers(ws);
      // A second worker beside a run no one holds proves nothing; a second command on it is checked as any other.
      if (second !== 'worker') await secondCommand();
    }
    await stopWorkers(ws);
    for (const w of ws) checkExit(x, w, `logbook worker ${w.name}`);
  });
}

/**
 * A deploy stops a worker (SIGTERM) while it is held in its provider call #at with a 1 s grace: held on, its lease is
 * released when the grace is over and it exits 0; let go (`finish`), it may finish the run within the grace. Worker b
 * then takes the run if it was released (at once: no lease to wait for), and drives it.
 */
async function stopWorker(x: Exec, op: OpJ): Promise<void> {
  await withHeldWorker(x, op, {}, async ({ a, ws, hold, held, before }) => {
    const wasHeld = held();
    await until(() => ready(a) || !alive(a), 60_000);
    a.child.kill('SIGTERM');
    if (op.finish === true) fs.writeFileSync(hold, '');
    await until(() => !alive(a), 60_000);
    const released = a.lines.some((l) => l.startsWith(`worker: ${x.runId} released`));
    const how = wasHeld
      ? `SIGTERM while held in its provider call #${Number(op.at) + 1}${op.finish === true ? ', then let go' : ''}`
      : 'SIGTERM after its outcome';
    x.after(
      `${workerLabel(undefined)}, ${how}: ${released ? 'released the run' : 'released nothing'}`,
      x.runId,
      released ? { kind: 'outcome', status: 'released' } : endedOfWorker(a, x.runId),
      before,
    );
    checkExit(x, a, 'logbook worker a');
    if (claimable(x)) {
      const mid = x.observer.snapshot(x.runId);
      const b = spawnWorker(x, 'b');
      ws.push(b);
      if (await takesOver(x, b, `after worker a ${released ? 'released it' : 'stopped'}`))
        x.after('logbook worker b (started after a stopped)', x.runId, endedOfWorker(b, x.runId), mid);
      await stopWorkers(ws);
      checkExit(x, b, 'logbook worker b');
    }
  });
}

const describeWorker = (o: OpJ, agent: AgentJ): string => {
  const crash = o.crash ? crashSpec(agent, o.crash as CrashAt) : undefined;
  return `${workerLabel(crash)} drives it${o.also === true ? ', a second worker polling beside it once it claimed the run' : crash ? ', a second worker started if it died' : ''}`;
};

export const WORKER_OPERATIONS: Record<string, Operation> = {
  'worker-run': {
    starts: true,
    processes: true,
    ownJournal: true,
    weight: 2,
    arbitrary: () =>
      fc
        .record({ crash: crashAt, also: fc.boolean() })
        .map(({ crash, also }) => ({ op: 'worker-run', ...(crash ? { crash } : {}), ...(also ? { also } : {}) })),
    describe: (o, agent) => `logbook run --detach (queued); ${describeWorker(o, agent)}`,
    run: async (x, o) => {
      if (await detach(x)) await driveWithWorkers(x, o);
    },
  },
  'worker-pause': {
    starts: true,
    processes: true,
    ownJournal: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('worker-pause'), at: fc.nat(2), where: fc.constantFrom('before-check', 'window') }),
    describe: (o) =>
      `logbook run --detach; logbook worker a, frozen with SIGSTOP in its provider call #${Number(o.at) + 1} ${o.where === 'window' ? 'between its lease check and its send (that provider refuses a repeated key)' : 'before its lease check'} past its lease; worker b takes the run over; then SIGCONT of a`,
    run: pauseWorker,
  },
  'worker-pause-sleep': {
    starts: true,
    processes: true,
    ownJournal: true,
    weight: 1,
    arbitrary: () => fc.constant({ op: 'worker-pause-sleep' }),
    describe: () =>
      `logbook run --detach; logbook worker a, its sleeps stretched to ${FROZEN_SLEEP_MS} ms and held in the process, frozen with SIGSTOP past its lease once the run sleeps; worker b takes the run over and wakes it; then SIGCONT of a`,
    run: pauseWorkerAsleep,
  },
  'worker-race': {
    starts: true,
    processes: true,
    ownJournal: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('worker-race'), second: fc.constantFrom('resume', 'compensate', 'worker'), at: fc.nat(2) }),
    describe: (o) =>
      `logbook run --detach; logbook worker a, held live in its provider call #${Number(o.at) + 1}; meanwhile ${o.second === 'worker' ? 'a second logbook worker' : `logbook ${String(o.second)} in a second process`}`,
    run: raceWorker,
    compensates: (o) => o.second === 'compensate',
  },
  'worker-stop': {
    starts: true,
    processes: true,
    ownJournal: true,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('worker-stop'), at: fc.nat(2), finish: fc.boolean() }),
    describe: (o) =>
      `logbook run --detach; logbook worker a (--grace 1), stopped with SIGTERM while held in its provider call #${Number(o.at) + 1}${o.finish === true ? ' and then let go' : ' (held past the grace)'}; worker b takes the run if it was released`,
    run: stopWorker,
  },
  'worker-resume': {
    starts: false,
    processes: true,
    ownJournal: true,
    weight: 2,
    arbitrary: () =>
      fc
        .record({ crash: crashAt, also: fc.boolean() })
        .map(({ crash, also }) => ({ op: 'worker-resume', ...(crash ? { crash } : {}), ...(also ? { also } : {}) })),
    describe: (o, agent) => `the run as it was left, if a worker may claim it: ${describeWorker(o, agent)}`,
    run: driveWithWorkers,
  },
};
