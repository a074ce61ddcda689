// Adapter side of the runner: spawns it on the configured Node, relays its output, correlates requests, sees it exit.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { Channel } from '../link/channel';
import { FromRunner, type RunnerRequest, type ToRunner } from '../link/runnerProtocol';

export interface RunnerLaunch {
  readonly runtimeExecutable: string;
  readonly runtimeArgs: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
}

export interface RunnerEvents {
  message(m: FromRunner): void;
  output(category: 'stdout' | 'stderr', text: string): void;
  /** The process is gone and all its pipes are drained. */
  closed(code: number | null, signal: NodeJS.Signals | null): void;
  /** It could not be started at all (e.g. runtimeExecutable not found). */
  spawnFailed(err: Error): void;
}

const TAIL = 4096;

export class RunnerProcess {
  private readonly child: ChildProcess;
  private readonly channel: Channel<FromRunner, ToRunner>;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private stderrTail = '';
  private exitedFlag = false;
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(launch: RunnerLaunch, runnerScript: string, events: RunnerEvents) {
    this.child = spawn(launch.runtimeExecutable, [...launch.runtimeArgs, runnerScript], {
      cwd: launch.cwd,
      env: { ...process.env, ...launch.env },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const relay = (stream: NodeJS.ReadableStream | null, category: 'stdout' | 'stderr'): void => {
      const dec = new StringDecoder('utf8');
      stream?.on('data', (chunk: Buffer) => {
        const text = dec.write(chunk);
        if (category === 'stderr') this.stderrTail = (this.stderrTail + text).slice(-TAIL);
        if (text) events.output(category, text);
      });
    };
    relay(this.child.stdout, 'stdout');
    relay(this.child.stderr, 'stderr');
    this.channel = new Channel<FromRunner, ToRunner>(
      this.child.stdio[3] as Duplex,
      FromRunner,
      (m) => {
        if (m.type === 'response') {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          if (m.ok) p?.resolve(m.body);
          else p?.reject(new Error(m.message ?? 'the runner refused the request'));
          return;
        }
        events.message(m);
      },
      (err) => events.output('stderr', `logbook adapter: ${err.message}\n`),
      () => undefined,
    );
    this.closed = new Promise((resolve) => {
      this.child.on('error', (err) => {
        this.exitedFlag = true;
        events.spawnFailed(err);
        resolve({ code: null, signal: null });
      });
      this.child.on('close', (code, signal) => {
        this.exitedFlag = true;
        for (const p of this.pending.values()) p.reject(new Error('the run has ended'));
        this.pending.clear();
        events.closed(code, signal);
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exitedFlag && this.child.exitCode === null && this.child.signalCode === null;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  send(m: ToRunner): void {
    this.channel.send(m);
  }

  request(request: RunnerRequest): Promise<unknown> {
    if (!this.alive) return Promise.reject(new Error('The run has ended.'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.channel.send({ type: 'request', id, request });
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }
}
