// Talks to the journal reader process: one JSON line per request, results validated, change notices forwarded.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as readline from 'node:readline';
import { ChangedNotice, Incoming, METHODS, type Method, type Params, type Result } from '../reader/readerProtocol';
import { ENGLISH } from '../shared/zodEnglish';

export interface ReaderOptions {
  readonly node: string;
  readonly script: string;
  readonly cwd: string | undefined;
  readonly log: (level: 'info' | 'warn' | 'error', line: string) => void;
  /** Variables the process gets over the editor's (a PostgreSQL journal's PGPASSWORD), known once secrets are read. */
  readonly env?: Promise<Record<string, string>>;
}

interface Pending {
  readonly method: Method;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class ReaderError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReaderError';
  }
}

const MAX_STARTS_PER_MINUTE = 5;

export class ReaderClient {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private db: string | undefined;
  private stderrTail: string[] = [];
  private starts: number[] = [];
  private disposed = false;
  private readonly listeners = new Set<(n: ChangedNotice) => void>();
  /** Set when the process cannot be started or keeps dying; shown in the tree instead of runs. */
  lastFailure: string | undefined;

  constructor(private readonly opts: ReaderOptions) {}

  onChanged(fn: (n: ChangedNotice) => void): { dispose(): void } {
    this.listeners.add(fn);
    return { dispose: () => this.listeners.delete(fn) };
  }

  /** Points the reader at a journal (it need not exist yet). */
  async open(db: string): Promise<Result<'open'>> {
    this.db = db;
    return this.request('open', { db });
  }

  async request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    const child = this.ensure(await this.opts.env);
    const id = this.nextId++;
    const result = new Promise<unknown>((resolve, reject) => this.pending.set(id, { method, resolve, reject }));
    child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    const raw = await result;
    const parsed = METHODS[method].result.safeParse(raw, ENGLISH);
    if (!parsed.success) throw new ReaderError('LB_READER_PROTOCOL', `The reader answered ${method} with an unexpected shape: ${parsed.error.message}`);
    return parsed.data as Result<M>;
  }

  private ensure(extraEnv: Record<string, string> = {}): ChildProcessWithoutNullStreams {
    if (this.disposed) throw new ReaderError('LB_READER_DISPOSED', 'The journal reader was stopped.');
    if (this.child) return this.child;
    const now = Date.now();
    this.starts = this.starts.filter((t) => now - t < 60_000);
    if (this.starts.length >= MAX_STARTS_PER_MINUTE) {
      throw new ReaderError('LB_READER_FAILED', this.lastFailure ?? 'The journal reader keeps exiting.');
    }
    this.starts.push(now);
    this.stderrTail = [];
    this.opts.log('info', `starting the journal reader: ${this.opts.node} ${this.opts.script}`);
    const child = spawn(this.opts.node, [this.opts.script], {
      cwd: this.opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...extraEnv, ELECTRON_RUN_AS_NODE: '1' },
    });
    this.child = child;
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      this.stderrTail = [...this.stderrTail.slice(-20), line];
      this.opts.log('warn', `reader: ${line}`);
    });
    child.stdin.on('error', () => undefined);
    child.on('error', (err: NodeJS.ErrnoException) => {
      const msg =
        err.code === 'ENOENT'
          ? `Agent Logbook could not start "${this.opts.node}" (the logbook.runtimeExecutable setting): no such executable. Set logbook.runtimeExecutable to the path of a Node.js 20 or newer.`
          : `Agent Logbook could not start the journal reader with "${this.opts.node}": ${err.message}. Check the logbook.runtimeExecutable setting.`;
      this.fail(child, msg);
    });
    child.on('exit', (code, signal) => {
      const tail = this.stderrTail
        .filter((l) => l.trim())
        .slice(-6)
        .join('\n');
      this.fail(child, `The journal reader exited (${signal ?? `code ${code}`})${tail ? `:\n${tail}` : ''}`);
    });
    if (this.db) child.stdin.write(`${JSON.stringify({ id: 0, method: 'open', params: { db: this.db } })}\n`);
    return child;
  }

  private fail(child: ChildProcessWithoutNullStreams, message: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (!this.disposed) {
      this.lastFailure = message;
      this.opts.log('error', message);
    }
    for (const p of this.pending.values()) p.reject(new ReaderError('LB_READER_FAILED', message));
    this.pending.clear();
  }

  private onLine(line: string): void {
    let msg: unknown;
    try {
      msg = Incoming.parse(JSON.parse(line), ENGLISH);
    } catch (err) {
      this.opts.log('warn', `reader sent an unreadable line (${String(err)}): ${line.slice(0, 200)}`);
      return;
    }
    const changed = ChangedNotice.safeParse(msg);
    if (changed.success) {
      for (const l of this.listeners) l(changed.data);
      return;
    }
    const r = msg as { id: number; ok: boolean; result?: unknown; error?: { code: string; message: string } };
    this.lastFailure = undefined;
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (r.ok) p.resolve(r.result);
    else p.reject(new ReaderError(r.error?.code ?? 'LB_READER', r.error?.message ?? 'unknown reader error'));
  }

  /** Pid of the running reader process (tests use it to prove the extension host itself opened no journal). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  dispose(): void {
    this.disposed = true;
    const child = this.child;
    this.child = undefined;
    for (const p of this.pending.values()) p.reject(new ReaderError('LB_READER_DISPOSED', 'The journal reader was stopped.'));
    this.pending.clear();
    if (child) {
      child.stdin.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    }
  }
}
