// The checker's provider model: the outside world, recording every effect that landed by its idempotency key.

import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';

/**
 * One request that reached the outside world: an action's effect (`do`), an inverse's (`undo`, of the action key `of`),
 * or a request that repeated a key and was answered with the first one's result (`repeat`: no effect).
 */
export interface Landed {
  readonly seq: number;
  readonly kind: 'do' | 'undo' | 'repeat';
  readonly type: string;
  readonly key: string;
  readonly of: string | null;
  /** The process that sent it, and its attempt (`p3#a2`, `pid4242#a1`). */
  readonly proc: string;
  readonly result: string;
  /** When its sender checked its lease, right before sending (ms since the epoch). */
  readonly checked: number;
}

/** Who sends a request: the process (`p3`, `pid4242`), the attempt it drives, and when it checked its lease. */
export interface Sender {
  readonly proc: string;
  readonly attempt: number;
  readonly checked: number;
}

/** Where the world keeps its record: memory for in-process schedules, a SQLite file shared by child processes. */
export interface WorldLog {
  append(e: Omit<Landed, 'seq'>): void;
  all(): Landed[];
  /** Sets a flag once: true the first time it is asked for a name, false after. */
  once(name: string): boolean;
  /** The flags set whose names start with `prefix`. */
  flags(prefix: string): string[];
  close(): void;
}

export class MemoryLog implements WorldLog {
  private readonly rows: Landed[] = [];
  private readonly flagSet = new Set<string>();
  append(e: Omit<Landed, 'seq'>): void {
    this.rows.push({ ...e, seq: this.rows.length + 1 });
  }
  all(): Landed[] {
    return [...this.rows];
  }
  once(name: string): boolean {
    if (this.flagSet.has(name)) return false;
    this.flagSet.add(name);
    return true;
  }
  flags(prefix: string): string[] {
    return [...this.flagSet].filter((f) => f.startsWith(prefix));
  }
  close(): void {}
}

/** The same record in a SQLite file, so real child processes (killed with SIGKILL) and the checker share one world. */
export class SqliteLog implements WorldLog {
  private readonly db: Database.Database;
  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 10000');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS landed (seq INTEGER PRIMARY KEY, kind TEXT, type TEXT, key TEXT, of TEXT, proc TEXT, result TEXT, checked INTEGER);' +
        'CREATE TABLE IF NOT EXISTS flags (name TEXT PRIMARY KEY);',
    );
  }
  append(e: Omit<Landed, 'seq'>): void {
    this.db
      .prepare('INSERT INTO landed (kind, type, key, of, proc, result, checked) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(e.kind, e.type, e.key, e.of, e.proc, e.result, e.checked);
  }
  all(): Landed[] {
    return this.db.prepare('SELECT * FROM landed ORDER BY seq').all() as Landed[];
  }
  once(name: string): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO flags (name) VALUES (?)').run(name).changes === 1;
  }
  flags(prefix: string): string[] {
    return (this.db.prepare('SELECT name FROM flags WHERE substr(name, 1, ?) = ?').all(prefix.length, prefix) as Array<{ name: string }>).map((r) => r.name);
  }
  close(): void {
    this.db.close();
  }
}

/** Ways to break the world on purpose, for the negative controls: the checker must then report a violation. */
export interface Sabotage {
  /** An idempotent provider that does not dedupe by key (an action declared idempotent that is not). */
  readonly noDedupe?: boolean;
  /** A verify that always answers "not found", even for effects that landed. */
  readonly verifyLies?: boolean;
  /** A provider that accepts a request sent from the window after a freeze, repeating a key (see World.froze). */
  readonly acceptsRepeats?: boolean;
  /** An execute that sends without checking its lease first (the check README advises right before the request). */
  readonly noLeaseCheck?: boolean;
  /** A hand-rolled sleep that journals its wake time as run.sleep does, and then does not wait for it. */
  readonly sleepNoWait?: boolean;
  /** A hand-rolled sleep that waits its wake time out with a timer, deaf to a cancel (as a `setTimeout` in a step is). */
  readonly sleepDeaf?: boolean;
  /** A script that names its child run by the attempt (run.child's `id`), so a resumed parent starts another child. */
  readonly childIdPerAttempt?: boolean;
  /** Not the script's: the harness's damage-log deletes the unfolded event it would damage, which no reader can tell from a lost transaction. */
  readonly logDamageLost?: boolean;
}

export class World {
  constructor(
    readonly log: WorldLog = new MemoryLog(),
    readonly sabotage: Sabotage = {},
  ) {}

  /** The first effect that landed under this key, if any. */
  landed(key: string): Landed | undefined {
    return this.log.all().find((e) => e.kind === 'do' && e.key === key);
  }

  /**
   * The checker froze process `proc` (SIGSTOP) at `at`. A request its sender had checked its lease for before then, and
   * sends after it woke, went out of the window no process can close (between the check and the send): the README's
   * defence there is a provider that refuses a repeated key, so such a request is refused if its key already landed.
   */
  froze(proc: string, at: number): void {
    this.log.once(`froze:${proc}:${at}`);
  }

  /** Whether the sender was frozen between its lease check and now (see froze). */
  private straddles(s: Sender): boolean {
    return this.log.flags(`froze:${s.proc}:`).some((f) => Number(f.slice(f.lastIndexOf(':') + 1)) >= s.checked);
  }

  /**
   * An effect reaches the world. An idempotent one repeated under its key is the same effect (unless sabotaged), and
   * so is a non-idempotent one sent from the window after a freeze (see froze): either is recorded as a `repeat`.
   */
  effect(type: string, key: string, idempotent: boolean, result: unknown, s: Sender): unknown {
    const dedupes = idempotent ? !this.sabotage.noDedupe : !this.sabotage.acceptsRepeats && this.straddles(s);
    const before = dedupes ? this.landed(key) : undefined;
    const from = { proc: `${s.proc}#a${s.attempt}`, checked: s.checked };
    if (before) {
      this.log.append({ kind: 'repeat', type, key, of: null, ...from, result: before.result });
      return JSON.parse(before.result) as unknown;
    }
    this.log.append({ kind: 'do', type, key, of: null, ...from, result: JSON.stringify(result) });
    return result;
  }

  /** An inverse reaches the world: refunds are keyed too, so an inverse run again with its key lands once. */
  undo(type: string, key: string, of: string, result: unknown, s: Sender): unknown {
    const before = this.log.all().find((e) => e.kind === 'undo' && e.key === key);
    const from = { proc: `${s.proc}#a${s.attempt}`, checked: s.checked };
    if (before) {
      this.log.append({ kind: 'repeat', type, key, of, ...from, result: before.result });
      return JSON.parse(before.result) as unknown;
    }
    this.log.append({ kind: 'undo', type, key, of, ...from, result: JSON.stringify(result) });
    return result;
  }

  /**
   * An action's execute was called (whether or not its request then went out): the most the journal may count for
   * that key, in every process. Kept as flags, so killed child processes' calls are kept too.
   */
  called(key: string): void {
    this.log.once(`call:${key}:${randomUUID()}`);
  }

  /** How many times execute was called under this key (see called). */
  calls(key: string): number {
    return this.log.flags(`call:${key}:`).length;
  }

  /** What a provider's lookup by key answers: the effect's result, or undefined. */
  verify(key: string): unknown {
    if (this.sabotage.verifyLies) return undefined;
    const e = this.landed(key);
    return e ? (JSON.parse(e.result) as unknown) : undefined;
  }

  /** True the first time it is asked for `name`: a transient fault happens once per key. */
  once(name: string): boolean {
    return this.log.once(name);
  }

  all(): Landed[] {
    return this.log.all();
  }
}
