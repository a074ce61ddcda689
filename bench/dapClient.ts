// A minimal Debug Adapter Protocol client over stdio (Content-Length framing), enough to time `next` round trips.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface DapMessage {
  readonly type: 'request' | 'response' | 'event';
  readonly seq: number;
  readonly command?: string;
  readonly event?: string;
  readonly request_seq?: number;
  readonly success?: boolean;
  readonly message?: string;
  readonly body?: Record<string, unknown>;
}

type Waiter = { match: (m: DapMessage) => boolean; resolve: (m: DapMessage) => void };

export class DapClient {
  private readonly proc: ChildProcessWithoutNullStreams;
  private buf = Buffer.alloc(0);
  private seq = 1;
  private waiters: Waiter[] = [];
  /** Events that arrived with nobody waiting, kept so a fast adapter cannot outrun the client. */
  private backlog: DapMessage[] = [];
  stderr = '';
  exited = false;

  constructor(adapterJs: string, cwd: string, env: NodeJS.ProcessEnv) {
    this.proc = spawn(process.execPath, [adapterJs], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (d: Buffer) => this.onData(d));
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.proc.on('exit', () => (this.exited = true));
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const head = this.buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const m = /Content-Length:\s*(\d+)/i.exec(this.buf.subarray(0, head).toString('ascii'));
      if (!m) throw new Error('DAP: a header without Content-Length');
      const len = Number(m[1]);
      if (this.buf.length < head + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(head + 4, head + 4 + len).toString('utf8')) as DapMessage;
      this.buf = this.buf.subarray(head + 4 + len);
      this.dispatch(msg);
    }
  }

  private dispatch(msg: DapMessage): void {
    if (msg.type === 'request' && msg.command === 'runInTerminal') {
      this.send({ type: 'response', request_seq: msg.seq, command: msg.command, success: false, message: 'not supported by the bench client' });
      return;
    }
    const i = this.waiters.findIndex((w) => w.match(msg));
    if (i >= 0) {
      const [w] = this.waiters.splice(i, 1);
      w?.resolve(msg);
    } else if (msg.type === 'event') {
      this.backlog.push(msg);
    }
  }

  private send(obj: Record<string, unknown>): number {
    const seq = this.seq++;
    const json = JSON.stringify({ seq, ...obj });
    this.proc.stdin.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    return seq;
  }

  private wait(match: (m: DapMessage) => boolean, what: string, timeoutMs: number): Promise<DapMessage> {
    const i = this.backlog.findIndex(match);
    if (i >= 0) return Promise.resolve(this.backlog.splice(i, 1)[0] as DapMessage);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`DAP: no ${what} within ${timeoutMs} ms${this.exited ? ' (the adapter exited)' : ''}. ${this.stderr.slice(-400)}`));
      }, timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Sends a request and resolves with its response; a failed response rejects with the adapter's message. */
  async request(command: string, args: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<DapMessage> {
    const seq = this.send({ type: 'request', command, arguments: args });
    const res = await this.wait((m) => m.type === 'response' && m.request_seq === seq, `response to ${command}`, timeoutMs);
    if (!res.success) throw new Error(`DAP ${command} failed: ${res.message ?? 'no message'}`);
    return res;
  }

  event(name: string | readonly string[], timeoutMs = 30_000): Promise<DapMessage> {
    const names = typeof name === 'string' ? [name] : name;
    return this.wait((m) => m.type === 'event' && names.includes(m.event ?? ''), `${names.join('/')} event`, timeoutMs);
  }

  kill(): void {
    if (!this.exited) this.proc.kill('SIGKILL');
  }
}
