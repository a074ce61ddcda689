// Fault points: named places where a crash can be injected; armed, the process SIGKILLs itself there (or execute throws, at a throw point).

import { ErrorCodes, LogbookError } from './errors';

export const FAULT_POINTS = [
  'step:before',
  'step:after-checkpoint',
  'action:before-start',
  'action:after-start',
  'action:after-execute',
  'action:after-execute-throw',
  'action:after-commit',
  'compensate:after-start',
  'compensate:after-execute',
  // A cancelled run, its status written, before the compensation `--compensate` asked for begins (target: the agent's name).
  'cancel:after-stop',
  // run.sleep (target: the sleep's name): its wake time journaled, before it waits (only when it starts, not on replay).
  'sleep:after-start',
  // run.waitFor took an event (its step's checkpoint and the event's taking are one commit), before the next step (target: the event's name).
  'event:after-deliver',
  // run.child (target: the child's agent name): its run row and the parent's record of it durable, before it runs; and
  // the child ended (its output known), before the parent's step records it.
  'child:after-start',
  'child:after-end',
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface CrashSpec {
  readonly target: string;
  readonly occurrence: number;
  readonly point: FaultPoint;
}

/** Points written with their prefix in a crash spec (the others by their phase alone, e.g. `after-start`). */
const PREFIXED = /^(compensate|cancel|sleep|event|child):/;

const SHORT: Record<string, FaultPoint> = {
  before: 'step:before',
  'after-checkpoint': 'step:after-checkpoint',
  'before-start': 'action:before-start',
  'after-start': 'action:after-start',
  'after-execute': 'action:after-execute',
  'after-execute-throw': 'action:after-execute-throw',
  'after-commit': 'action:after-commit',
};

/** Parses `<target>#<n>@<phase>`, e.g. `email.send#30@after-execute` or `load recipients@step:before`. */
export function parseCrashSpec(spec: string): CrashSpec {
  const m = /^([^#].*?)(?:#(\d+))?@([a-z:-]+)$/.exec(spec.trim());
  const point = m?.[3] ? ((FAULT_POINTS as readonly string[]).includes(m[3]) ? (m[3] as FaultPoint) : SHORT[m[3]]) : undefined;
  if (!m || !m[1] || !point) {
    throw new LogbookError(
      ErrorCodes.BAD_CRASH_SPEC,
      `--crash-at ${JSON.stringify(spec)} is not <target>#<n>@<phase>.`,
      `Use an action type or step name, an occurrence and one of: ${[...Object.keys(SHORT), ...FAULT_POINTS.filter((p) => PREFIXED.test(p))].join(', ')}; e.g. email.send#30@after-execute.`,
    );
  }
  const occurrence = m[2] === undefined ? 1 : Number(m[2]);
  if (occurrence < 1)
    throw new LogbookError(
      ErrorCodes.BAD_CRASH_SPEC,
      `--crash-at ${JSON.stringify(spec)}: the occurrence must be 1 or more.`,
      'Count occurrences from 1, e.g. email.send#1@after-start.',
    );
  return { target: m[1], occurrence, point };
}

export function formatCrashSpec(s: CrashSpec): string {
  const phase = PREFIXED.test(s.point) ? s.point : s.point.slice(s.point.indexOf(':') + 1);
  return `${s.target}#${s.occurrence}@${phase}`;
}

/**
 * Fault points that make execute throw after its effect (the request went out, the answer was lost) instead of crashing.
 * Hit by non-idempotent actions only: for the others an error is a plain failure, redone safely with the key.
 */
export const THROW_POINTS: ReadonlySet<FaultPoint> = new Set(['action:after-execute-throw']);

/** The error an armed throw point raises from execute: looks to the runtime like a timeout after the effect happened. */
export class InjectedFault extends Error {
  constructor(readonly spec: CrashSpec) {
    super(`injected by --crash-at ${formatCrashSpec(spec)}: execute threw after its effect happened (like a timeout whose request got through)`);
    this.name = 'InjectedFault';
  }
}

export interface FaultHit {
  readonly point: FaultPoint;
  readonly target: string;
  readonly occurrence: number;
}

/**
 * Arms crash specs for this process. Occurrences count per (point, target) within this attempt.
 * When nothing is armed or traced, `hit` is one boolean test.
 */
export class Faults {
  private readonly armed: CrashSpec[];
  private readonly counts = new Map<string, number>();
  private readonly active: boolean;

  constructor(
    specs: readonly CrashSpec[] = [],
    private readonly trace?: (hit: FaultHit) => void,
    /**
     * Last words before an armed crash kills the process (synchronously: nothing runs after the kill), with the id of
     * an action whose returned call of execute the kill leaves uncounted in the journal, if any.
     */
    private readonly announce?: (spec: CrashSpec, uncounted: string | undefined) => void,
  ) {
    this.armed = [...specs];
    this.active = this.armed.length > 0 || trace !== undefined;
  }

  /** The armed crash points. In a process still alive at the end of its run, none of them was reached. */
  get specs(): readonly CrashSpec[] {
    return this.armed;
  }

  /** How many times each armed point's target was met at that point in this process, for a report of missed specs. */
  count(spec: CrashSpec): number {
    return this.counts.get(`${spec.point}\u0000${spec.target}`) ?? 0;
  }

  /** `uncounted`: an action whose call of execute returned and is not yet counted in the journal (see Boundary). */
  hit(point: FaultPoint, target: string, uncounted?: string): void {
    if (!this.active) return;
    const key = `${point}\u0000${target}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    this.trace?.({ point, target, occurrence: n });
    for (const s of this.armed) {
      if (s.point === point && s.target === target && s.occurrence === n) {
        if (THROW_POINTS.has(point)) throw new InjectedFault(s);
        this.announce?.(s, uncounted);
        // A real crash: no flush, no cleanup, no exit handlers.
        process.kill(process.pid, 'SIGKILL');
        // The signal is delivered on return from the syscall; block in case the kernel is slow to act on it.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
      }
    }
  }
}

/** Action phases name an action type (or its compensation); the others name a step. */
export function targetsAction(point: FaultPoint): boolean {
  return point.startsWith('action:') || point.startsWith('compensate:');
}

/**
 * Refuses, before anything runs, a crash spec at an action phase whose target is no action type the loaded script
 * defines (a typo would otherwise run the whole agent, real effects included, and never crash).
 */
export function checkCrashTargets(
  specs: readonly CrashSpec[],
  actionTypes: readonly string[],
  runTimePrefixes: Iterable<string> = [],
  where = '--crash-at',
): void {
  const later = [...runTimePrefixes];
  for (const s of specs) {
    if (!targetsAction(s.point) || actionTypes.includes(s.target)) continue;
    // Defined while the run runs (see declareRunTimeActionTypes): checked when the run ends instead, if never reached.
    if (later.some((p) => s.target.startsWith(p))) continue;
    const near = actionTypes.filter((t) => t.toLowerCase().includes(s.target.toLowerCase()) || s.target.toLowerCase().includes(t.toLowerCase()));
    throw new LogbookError(
      ErrorCodes.CRASH_TARGET_UNKNOWN,
      `${where} ${formatCrashSpec(s)}: the script defines no action type ${JSON.stringify(s.target)}, so this crash point could never be reached. Nothing was run.`,
      `Use one of the script's action types${near.length ? ` (did you mean ${near.map((t) => JSON.stringify(t)).join(' or ')}?)` : ''}: ${actionTypes.map((t) => JSON.stringify(t)).join(', ') || '(none defined)'}; a step name goes with a step phase (@before, @after-checkpoint).`,
      { target: s.target, known: actionTypes },
    );
  }
}

/** Says which armed crash points a run that ended without being killed never reached, and how far it got. */
export function unreachedCrashPoints(faults: Faults): string[] {
  return faults.specs.map((s) => {
    const seen = faults.count(s);
    const where = targetsAction(s.point)
      ? `action ${s.target}`
      : s.point.startsWith('cancel:')
        ? `run of agent ${s.target}`
        : s.point.startsWith('sleep:')
          ? `run.sleep ${JSON.stringify(s.target)}`
          : s.point.startsWith('event:')
            ? `run.waitFor of event ${JSON.stringify(s.target)}`
            : s.point.startsWith('child:')
              ? `child run of agent ${s.target}`
              : `step ${JSON.stringify(s.target)}`;
    return `--crash-at ${formatCrashSpec(s)} was never reached: ${seen === 0 ? `no ${where} passed ${s.point}` : `${where} passed ${s.point} only ${seen} time(s), not ${s.occurrence}`}; the run went on without a crash.`;
  });
}
