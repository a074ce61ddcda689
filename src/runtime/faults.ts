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
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface CrashSpec {
  readonly target: string;
  readonly occurrence: number;
  readonly point: FaultPoint;
}

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
      `Use an action type or step name, an occurrence and one of: ${[...Object.keys(SHORT), ...FAULT_POINTS.filter((p) => p.startsWith('compensate:'))].join(', ')}; e.g. email.send#30@after-execute.`,
    );
  }
  const occurrence = m[2] === undefined ? 1 : Number(m[2]);
  if (occurrence < 1) throw new LogbookError(ErrorCodes.BAD_CRASH_SPEC, `--crash-at ${JSON.stringify(spec)}: the occurrence must be 1 or more.`, 'Count occurrences from 1, e.g. email.send#1@after-start.');
  return { target: m[1], occurrence, point };
}

export function formatCrashSpec(s: CrashSpec): string {
  const phase = s.point.startsWith('compensate:') ? s.point : s.point.slice(s.point.indexOf(':') + 1);
  return `${s.target}#${s.occurrence}@${phase}`;
}

/** Fault points that make execute throw after its effect (the request went out, the answer was lost) instead of crashing. */
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
  ) {
    this.armed = [...specs];
    this.active = this.armed.length > 0 || trace !== undefined;
  }

  hit(point: FaultPoint, target: string): void {
    if (!this.active) return;
    const key = `${point}\u0000${target}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    this.trace?.({ point, target, occurrence: n });
    for (const s of this.armed) {
      if (s.point === point && s.target === target && s.occurrence === n) {
        if (THROW_POINTS.has(point)) throw new InjectedFault(s);
        // A real crash: no flush, no cleanup, no exit handlers.
        process.kill(process.pid, 'SIGKILL');
        // The signal is delivered on return from the syscall; block in case the kernel is slow to act on it.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
      }
    }
  }
}
