// A simulated process inside the checker: its own journal connections, a stand-in pid, and a crash as SIGKILL leaves it.

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { Faults, type FaultHit } from '../../src/runtime';
import type { ProcPort } from './agent';
import type { Crash, When } from './spec';

/** Thrown where a simulated process dies: nothing of it runs on (its journal connections are closed first). */
export class SimulatedCrash extends Error {
  constructor(readonly where: string) {
    super(`simulated SIGKILL ${where}`);
    this.name = 'SimulatedCrash';
  }
}

export const REAL_PID = process.pid;

function setPid(pid: number): void {
  Object.defineProperty(process, 'pid', { value: pid, writable: false, enumerable: true, configurable: true });
}

/**
 * Stand-in processes: each simulated process is known to the journal by the pid of a real `sleep` child, so that the
 * runtime's own liveness check (same pid and start time, not a zombie) sees it die when it is SIGKILLed at a crash.
 */
class SleepPool {
  private readonly idle: ChildProcess[] = [];
  private readonly all = new Set<ChildProcess>();

  take(): ChildProcess {
    const c = this.idle.pop() ?? this.spawn();
    return c;
  }

  give(c: ChildProcess): void {
    if (c.exitCode === null && c.signalCode === null) this.idle.push(c);
  }

  private spawn(): ChildProcess {
    const c = spawn('sleep', ['100000'], { stdio: 'ignore' });
    c.unref();
    this.all.add(c);
    c.on('exit', () => this.all.delete(c));
    return c;
  }

  /** SIGKILL, then wait until the kernel shows it dead (gone or a zombie), as a crashed holder is when a resume looks. */
  kill(c: ChildProcess): void {
    const pid = c.pid;
    c.kill('SIGKILL');
    if (pid === undefined) return;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 2000; i++) {
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        return;
      }
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return;
      Atomics.wait(pause, 0, 0, 1);
    }
    throw new Error(`checker: stand-in process ${pid} did not die`);
  }

  closeAll(): void {
    for (const c of this.all) c.kill('SIGKILL');
    this.idle.length = 0;
  }
}

export const pool = new SleepPool();
process.once('exit', () => pool.closeAll());

/** A pause of one provider call while the schedule does something else (a second driver), then the call goes on. */
export interface Pause {
  readonly n: number;
  readonly when: When;
  readonly during: () => Promise<void>;
}

let nextId = 1;

export class SimProcess implements ProcPort {
  /** Provider calls between their before-effect and after-effect points, in every process: what a cancel may still see land. */
  static readonly inFlight = new Set<string>();
  readonly id = nextId++;
  readonly name: string;
  alive = true;
  private readonly child: ChildProcess;
  private readonly closers: Array<() => void> = [];
  private providerCalls = 0;
  private crashAt: Crash | undefined;
  private pauseAt: Pause | undefined;
  /** What the report says about how it ended. */
  diedAt: string | undefined;
  /** Sleeps of this process's script last at least this long (ms): a schedule catches the run asleep. */
  sleepsAtLeast = 0;

  constructor() {
    this.child = pool.take();
    this.name = `p${this.id}`;
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('checker: a stand-in process has no pid');
    return this.child.pid;
  }

  /** The role its drivers show in the lease (`pid … (role)`): one per simulated process. */
  get role(): string {
    return `checker-${this.name}`;
  }

  /** Closes this journal connection (or host journal) when the process dies, or when it is retired. */
  own<T extends { close(): void }>(c: T): T {
    this.closers.push(() => c.close());
    return c;
  }

  arm(crash: Crash | undefined): void {
    this.crashAt = crash;
  }

  pause(p: Pause | undefined): void {
    this.pauseAt = p;
  }

  /** Faults for an engine driver: the armed n-th fault point this driver passes kills the process. */
  faults(): Faults {
    let hits = 0;
    const crash = this.crashAt;
    if (crash?.at !== 'fault') return new Faults();
    return new Faults([], (hit: FaultHit) => {
      if (hits++ === crash.n) this.crash(`at ${hit.target}#${hit.occurrence}@${hit.point}`);
    });
  }

  async point(when: When, call: { readonly type: string; readonly key: string }): Promise<void> {
    // In flight from the moment execute is called: parallel actions of a step are all past their boundary before the
    // first of them reaches its provider, so a cancel made then lets each of them land (the runtime's rule).
    if (when === 'before-effect') SimProcess.inFlight.add(call.key);
    // A yield, as a real request would: other drivers of this process run in between.
    await new Promise<void>((r) => setImmediate(r));
    if (!this.alive) {
      SimProcess.inFlight.delete(call.key);
      throw new SimulatedCrash(`(process ${this.name} is dead: ${call.type} was never sent)`);
    }
    if (when === 'before-effect') this.providerCalls++;
    else SimProcess.inFlight.delete(call.key);
    const n = this.providerCalls - 1;
    const p = this.pauseAt;
    if (p && p.n === n && p.when === when) {
      this.pauseAt = undefined;
      await p.during();
    }
    const c = this.crashAt;
    if (c?.at === 'provider' && c.n === n && c.when === when) this.crash(`in ${call.type} ${call.key} ${when}`);
    if (!this.alive) throw new SimulatedCrash(`(process ${this.name} died while ${call.type} was in flight)`);
  }

  sleepMs(ms: number): number {
    return Math.max(ms, this.sleepsAtLeast);
  }

  /** SIGKILL as the journal sees it: connections closed (nothing more written, no lease released), the pid dead. */
  crash(where: string): never {
    if (this.alive) {
      this.alive = false;
      this.diedAt = where;
      for (const close of this.closers) {
        try {
          close();
        } catch {
          // already closed
        }
      }
      pool.kill(this.child);
    }
    throw new SimulatedCrash(where);
  }

  /** Runs `fn` as this process: the runtime reads its pid from process.pid when it takes a lease. */
  async as<T>(fn: () => Promise<T>): Promise<T> {
    setPid(this.pid);
    try {
      return await fn();
    } finally {
      setPid(REAL_PID);
    }
  }

  /** A process whose work is done exits: its connections close and its stand-in goes back to the pool. */
  retire(): void {
    if (!this.alive) return;
    for (const close of this.closers) {
      try {
        close();
      } catch {
        // already closed
      }
    }
    this.alive = false;
    pool.give(this.child);
  }
}
