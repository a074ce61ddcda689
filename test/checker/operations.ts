// Schedule operations: what a schedule can do to a run. A new surface (a worker, a timer, a graph) plugs in here.

import fc from 'fast-check';
import { actionType, describeCrash, eventName, type AgentJ, type Crash, type OpJ, type When } from './spec';
import { PROCESS_OPERATIONS } from './processOps';
import { DEBUGGER_OPERATIONS } from './dapOps';
import { WORKER_OPERATIONS } from './workerOps';
import type { Exec } from './executor';
import type { Driver, Ended } from './surfaces';
import { SimProcess } from './sim';
import { sleepsOf } from './invariants';
import { OPENERS, putBack, type Opener } from './migrateOps';
import { DAMAGE_OPERATIONS } from './damageOps';

export interface Operation {
  /** Whether it starts the run (only the first operation of a schedule does). */
  readonly starts: boolean;
  /** In-process (simulated processes, hundreds a minute), or real child processes (the built CLI, real SIGKILL). */
  readonly processes?: boolean;
  readonly weight: number;
  readonly arbitrary: () => fc.Arbitrary<OpJ>;
  readonly describe: (op: OpJ, agent: AgentJ) => string;
  readonly run: (x: Exec, op: OpJ) => Promise<void>;
  /**
   * Its workers claim every run of the journal they may: on PostgreSQL the case then gets a database of its own (on
   * SQLite every case has a journal file of its own anyway).
   */
  readonly ownJournal?: boolean;
  /** Whether it may compensate the run (its output is then not compared with the uncrashed run's). */
  readonly compensates?: (op: OpJ) => boolean;
}

export const secondCompensates = (op: OpJ): boolean => op.second === 'compensate';

const VIA = { api: 'host API', engine: 'the engine, as the CLI calls it' } as const;
const via = fc.constantFrom<'api' | 'engine'>('api', 'engine');
const when = fc.constantFrom<When>('before-effect', 'after-effect');
const crashArb: fc.Arbitrary<Crash | undefined> = fc.option(
  fc.oneof(
    { withCrossShrink: true },
    fc.record({ at: fc.constant('fault' as const), n: fc.nat(24) }),
    fc.record({ at: fc.constant('provider' as const), n: fc.nat(5), when }),
  ),
  { nil: undefined, freq: 2 },
);
/** A command, its surface, and maybe a crash of its process (the host API takes no faults: its crashes are in provider calls). */
const withCrash = (op: string): fc.Arbitrary<OpJ> =>
  fc.record({ via, crash: crashArb }).map(({ via: v, crash }) => {
    const c: Crash | undefined = v === 'api' && crash?.at === 'fault' ? { at: 'provider', n: crash.n % 6, when: 'after-effect' } : crash;
    return { op, via: v, ...(c ? { crash: c } : {}) };
  });

/**
 * A cancel of the run, noting first what may still land once it is asked: the provider calls in flight now (see
 * invariants' effect-after-cancel). A refused cancel changes nothing, so its note is dropped.
 */
async function cancelNoted(x: Exec, d: Driver, via: string, compensate: boolean): Promise<Ended> {
  const r = x.observer.store.reader;
  const family = [x.runId, ...r.children(x.runId).map((c) => c.id)];
  const inDoubt = new Set(family.flatMap((id) => r.inDoubt(id).map((a) => a.id)));
  const mark = { runId: x.runId, landed: x.target.world.all().length, inFlight: new Set(SimProcess.inFlight), inDoubt };
  x.cancels.push(mark);
  const ended = await d.cancel(via, x.runId, compensate);
  if (ended.kind === 'refused') x.cancels.splice(x.cancels.indexOf(mark), 1);
  return ended;
}

const SECOND = {
  cancel: 'journal.cancel of the same run',
  'cancel-compensate': 'journal.cancel of the same run with compensate',
  resume: 'journal.resume of the same run',
  'resume-other-journal': 'journal.resume from a second openJournal on the same file',
  compensate: 'journal.compensate of the same run',
  send: 'journal.send of every event the script waits for',
} as const;
type Second = keyof typeof SECOND;
const race = (op: string): fc.Arbitrary<OpJ> =>
  fc.record({ op: fc.constant(op), second: fc.constantFrom<Second>('resume', 'resume-other-journal', 'compensate', 'send'), at: fc.nat(3), when });

/**
 * Sends every event the script waits for (the k-th wait for a name gets that name's k-th event), as early as the
 * schedule puts it: before the run waits, while it runs, or again (a duplicate id, which must change nothing).
 */
async function sendAll(x: Exec, d: Driver, runId: string, holder = false): Promise<Ended> {
  const seen = new Map<string, number>();
  let last: Ended = { kind: 'outcome', status: 'nothing to send' };
  for (const s of x.target.agent.steps) {
    if (s.kind !== 'wait') continue;
    const name = eventName(s.event ?? 0);
    const k = seen.get(name) ?? 0;
    seen.set(name, k + 1);
    const before = x.observer.snapshot(runId);
    last = await d.send(runId, name, k);
    x.after(`send ${name}#${k} (journal.send)`, runId, last, before, holder);
  }
  return last;
}

async function second(d: Driver, which: Second, runId: string, x?: Exec): Promise<Ended> {
  if (which === 'cancel' || which === 'cancel-compensate') {
    return x ? cancelNoted(x, d, 'api', which === 'cancel-compensate') : d.cancel('api', runId, which === 'cancel-compensate');
  }
  if (which === 'compensate') return d.compensate('api', runId);
  if (which === 'send') return x ? sendAll(x, d, runId, true) : Promise.resolve({ kind: 'outcome', status: 'not sent' });
  if (which === 'resume-other-journal') return d.resume('api', runId, {}, d.openJournal());
  return d.resume('api', runId);
}

/** Whether `p` settles within `turns` turns of the event loop (no timers: the journal is synchronous). */
async function settlesWithin(p: Promise<unknown>, turns: number): Promise<boolean> {
  let done = false;
  p.then(
    () => void (done = true),
    () => void (done = true),
  );
  for (let i = 0; i < turns && !done; i++) await new Promise<void>((r) => setImmediate(r));
  return done;
}

/**
 * Two drivers in one process: the first is paused in its provider call #at (before or after the effect lands), and
 * the second command is made meanwhile on the same run; then the first goes on. A second driver must be refused, or
 * join the first; never drive the run beside it.
 */
async function runRace(x: Exec, op: OpJ, firstLabel: string, first: (d: Driver) => Promise<Ended>): Promise<void> {
  const d = x.driver();
  const which = op.second as Second;
  const label = `${SECOND[which]} while the first waits in provider call #${Number(op.at) + 1} ${String(op.when)}`;
  let pending: Promise<Ended> | undefined;
  let fired = false;
  // A send of every event is checked event by event (sendAll): its last answer is not the whole batch's, and a refused
  // last event does not make the events kept before it a refusal that changed the run.
  const checked = which !== 'send';
  d.proc.pause({
    n: Number(op.at),
    when: op.when as When,
    during: async () => {
      fired = true;
      const before = x.observer.snapshot(x.runId);
      const p = second(d, which, x.runId, x);
      if (await settlesWithin(p, 500)) {
        const ended = await p;
        if (checked) x.after(label, x.runId, ended, before, true);
      } else pending = p;
    },
  });
  await x.call(firstLabel, x.runId, () => first(d));
  d.proc.pause(undefined);
  if (pending) await (checked ? x.call(`${label} (it waited for the first)`, x.runId, () => pending as Promise<Ended>) : pending);
  else if (!fired) {
    const late = `${SECOND[which]} (the first never reached provider call #${Number(op.at) + 1})`;
    await (checked ? x.call(late, x.runId, () => second(d, which, x.runId, x)) : second(d, which, x.runId, x));
  }
}

/** `start`, `resume` or `compensate` of the run by one driver (the host API or the engine), its process armed to crash. */
function drive(kind: 'start' | 'resume' | 'compensate', weight: number, words: string = kind): Operation {
  return {
    starts: false,
    weight,
    arbitrary: () => withCrash(kind),
    describe: (op) => `${words} (${VIA[op.via as 'api']})${describeCrash(op.crash as Crash)}`,
    run: async (x, op) => {
      const d = x.driver();
      d.proc.arm(op.crash as Crash);
      const via = String(op.via);
      await x.call(`${kind} (${VIA[op.via as 'api']})`, x.runId, () =>
        kind === 'start' ? d.start(via, x.runId) : d[kind](via, x.runId, x.decisions(x.runId)),
      );
    },
  };
}

/** How long a sleep lasts in a driver a schedule catches asleep: a cancel must end it long before it is due. */
const CAUGHT_SLEEP_MS = 4000;

/** The sleep the run waits in now (its latest step is a sleep not yet due), or undefined. */
function asleep(x: Exec): { idx: number; wakeAt: number } | undefined {
  const sleeps = sleepsOf(x, x.runId);
  const last = x.observer.steps(x.runId).at(-1);
  const wakeAt = last ? sleeps.get(last.idx) : undefined;
  return last && wakeAt !== undefined && wakeAt > Date.now() + 200 ? { idx: last.idx, wakeAt } : undefined;
}

/**
 * A cancel of a run while it sleeps: the run is started or resumed (host API) with its sleeps stretched to 4 s, and once
 * it waits in one, a second process cancels it (the host API or `logbook cancel`, maybe with --compensate). The cancel
 * must end the sleep: it returns (the run stopped) long before the wake time, and the run never goes past its sleep.
 */
async function cancelAsleep(x: Exec, op: OpJ, first: 'start' | 'resume'): Promise<void> {
  const d = x.driver();
  d.proc.sleepsAtLeast = CAUGHT_SLEEP_MS;
  const before = x.observer.snapshot(x.runId);
  const label = `${first} (host API), its sleeps ${CAUGHT_SLEEP_MS} ms`;
  const driving = first === 'start' ? d.start('api', x.runId) : d.resume('api', x.runId, x.decisions(x.runId));
  let settled = false;
  void driving.then(() => (settled = true));
  let at: { idx: number; wakeAt: number } | undefined;
  while (!settled && !(at = asleep(x))) await new Promise((r) => setTimeout(r, 5));
  if (!at) {
    x.after(`${label} (it never slept: nothing to cancel in a sleep)`, x.runId, await driving, before);
    return;
  }
  const sleeping = at;
  const c = x.driver();
  const mid = x.observer.snapshot(x.runId);
  const ended = await cancelNoted(x, c, String(op.via), op.compensate === true);
  const done = Date.now();
  x.after(
    `cancel${op.compensate ? ' --compensate' : ''} (${VIA[op.via as 'api']}) while the run sleeps in step #${sleeping.idx + 1}`,
    x.runId,
    ended,
    mid,
    true,
  );
  if (ended.kind === 'outcome' && done >= sleeping.wakeAt)
    x.violation(
      'cancel-waited-out-sleep',
      `the cancel of run ${x.runId}, asked while it slept until ${new Date(sleeping.wakeAt).toISOString()}, returned only at ${new Date(done).toISOString()}: the sleep was waited out`,
    );
  x.after(label, x.runId, await driving, before);
  const later = x.observer.steps(x.runId).filter((s) => s.idx > sleeping.idx);
  if (ended.kind === 'outcome' && later.length)
    x.violation('went-on-after-cancel', `run ${x.runId} was cancelled in its sleep (step #${sleeping.idx + 1}), yet step #${(later[0]?.idx ?? 0) + 1} started`);
}

/**
 * The journal put back to schema 9 (as an older Logbook left it, every row of the run kept), then opened by today's
 * code: the resume's driver and maybe a second opener at once (a thread upgrading it first and holding the lock, or
 * racing the driver's open). Whoever waits must then work on the migrated file; the resume is armed to crash, or a
 * second driver races it as in `race`.
 */
const migrateOp: Operation = {
  starts: false,
  weight: 2,
  arbitrary: () =>
    fc
      .record({
        opener: fc.constantFrom<Opener>('thread-holds', 'thread-races', 'driver'),
        holdMs: fc.constantFrom(5, 40),
        first: withCrash('resume'),
        raced: fc.option(race('race'), { nil: undefined, freq: 3 }),
      })
      .map(({ opener, holdMs, first, raced }) => ({
        ...(raced ?? first),
        op: 'migrate-9',
        opener,
        ...(opener === 'thread-holds' ? { holdMs } : {}),
      })),
  describe: (op) =>
    `put the journal back to schema 9 (PostgreSQL: its version row); ${OPENERS[op.opener as Opener].replace('the driver', op.second ? 'the resume (host API)' : `the resume (${VIA[op.via as 'api']})`)}` +
    (op.second
      ? `; while the resume waits in provider call #${Number(op.at) + 1} ${String(op.when)}, ${SECOND[op.second as Second]}`
      : describeCrash(op.crash as Crash)),
  run: async (x, op) => {
    const second = await putBack(x, op.opener as Opener, Number(op.holdMs ?? 0));
    // The racing thread is released in the same turn as the driver's open (openJournal, openStore), which migrates.
    const resume = (d: Driver, via: string): Promise<Ended> => {
      const decisions = x.decisions(x.runId);
      second.go();
      return d.resume(via, x.runId, decisions);
    };
    if (op.second) await runRace(x, op, 'resume (host API) of the schema-9 journal', (d) => resume(d, 'api'));
    else {
      const d = x.driver();
      d.proc.arm(op.crash as Crash);
      await x.call(`resume (${VIA[op.via as 'api']}) of the schema-9 journal`, x.runId, () => resume(d, String(op.via)));
    }
    await second.finish();
  },
  compensates: secondCompensates,
};

const cancelAsleepOp = (first: 'start' | 'resume'): Operation => ({
  starts: first === 'start',
  weight: 1,
  arbitrary: () => fc.record({ op: fc.constant(`${first}-sleep-cancel`), via, compensate: fc.boolean() }),
  describe: (op) =>
    `journal.${first} the run, its sleeps stretched to ${CAUGHT_SLEEP_MS} ms; once it sleeps, cancel it${op.compensate ? ' --compensate' : ''} (${VIA[op.via as 'api']}) from a second process`,
  run: (x, op) => cancelAsleep(x, op, first),
  compensates: () => true,
});

export const OPERATIONS: Record<string, Operation> = {
  ...PROCESS_OPERATIONS,
  ...DEBUGGER_OPERATIONS,
  ...WORKER_OPERATIONS,
  ...DAMAGE_OPERATIONS,
  start: { ...drive('start', 3, 'start the run'), starts: true },
  'race-start': {
    starts: true,
    weight: 1,
    arbitrary: () => race('race-start'),
    describe: (op) =>
      `journal.start the run; while it waits in provider call #${Number(op.at) + 1} ${String(op.when)}, ${SECOND[op.second as Second]} in the same process`,
    run: (x, op) => runRace(x, op, 'start (host API)', (d) => d.start('api', x.runId)),
    compensates: secondCompensates,
  },
  resume: drive('resume', 3),
  race: {
    starts: false,
    weight: 2,
    arbitrary: () => race('race'),
    describe: (op) =>
      `journal.resume the run; while it waits in provider call #${Number(op.at) + 1} ${String(op.when)}, ${SECOND[op.second as Second]} in the same process`,
    run: (x, op) => runRace(x, op, 'resume (host API)', (d) => d.resume('api', x.runId, x.decisions(x.runId))),
    compensates: secondCompensates,
  },
  compensate: { ...drive('compensate', 1), compensates: () => true },
  cancel: {
    starts: false,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('cancel'), via, compensate: fc.boolean() }),
    describe: (op) => `cancel the run${op.compensate ? ' --compensate' : ''} (${VIA[op.via as 'api']})`,
    run: async (x, op) => {
      await x.call(`cancel${op.compensate ? ' --compensate' : ''} (${VIA[op.via as 'api']})`, x.runId, () =>
        cancelNoted(x, x.driver(), String(op.via), op.compensate === true),
      );
    },
    compensates: () => true,
  },
  'race-cancel': {
    starts: false,
    weight: 1,
    arbitrary: () => fc.record({ op: fc.constant('race-cancel'), second: fc.constantFrom<Second>('cancel', 'cancel-compensate'), at: fc.nat(3), when }),
    describe: (op) =>
      `journal.resume the run; while it waits in provider call #${Number(op.at) + 1} ${String(op.when)}, ${SECOND[op.second as Second]} in the same process`,
    run: (x, op) => runRace(x, op, 'resume (host API)', (d) => d.resume('api', x.runId, x.decisions(x.runId))),
    compensates: () => true,
  },
  'migrate-9': migrateOp,
  'start-sleep-cancel': cancelAsleepOp('start'),
  'resume-sleep-cancel': cancelAsleepOp('resume'),
  send: {
    starts: false,
    weight: 1,
    arbitrary: () => fc.constant({ op: 'send' }),
    describe: () => 'send every event the script waits for (journal.send), waiting or not',
    run: async (x) => {
      await sendAll(x, x.driver(), x.runId);
    },
  },
  approve: {
    starts: false,
    weight: 1,
    arbitrary: () => fc.constant({ op: 'approve' }),
    describe: () => 'answer every approval gate of the script (journal.decideApproval), waiting or not',
    run: async (x) => {
      const d = x.driver();
      const a = x.target.agent;
      const seen = new Set<string>();
      for (const s of a.steps) {
        for (const c of s.calls) {
          const act = a.actions[c.action];
          if (!act || act.approval === 'none') continue;
          const key = `${actionType(act, c.action)}:${x.runId}:${c.n}`;
          // In an Agents SDK run (logbookRunAgent) the gate is the SDK's pause, answered at `approval:<the key>`.
          const id = s.kind === 'agents-run' ? `approval:${key}` : key;
          if (seen.has(id)) continue;
          seen.add(id);
          await x.call(`${act.approval} ${id} (host API)`, x.runId, () => d.approve(x.runId, id, act.approval === 'approve'));
        }
      }
    },
  },
};

/** `only`: the operations a schedule may draw (by name), e.g. those of one surface. */
export function opArbitrary(starts: boolean, processes = false, only: (name: string) => boolean = () => true): fc.Arbitrary<OpJ> {
  const kinds = Object.entries(OPERATIONS)
    .filter(([name, o]) => o.starts === starts && (o.processes === true) === processes && only(name))
    .map(([, o]) => o);
  return fc.oneof({ withCrossShrink: true }, ...kinds.map((o) => ({ arbitrary: o.arbitrary(), weight: o.weight })));
}
