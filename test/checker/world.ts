// The checker's provider model: the outside world, recording every effect that landed by its idempotency key.

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
}

/** Where the world keeps its record: memory for in-process schedules, a SQLite file shared by child processes. */
export interface WorldLog {
  append(e: Omit<Landed, 'seq'>): void;
  all(): Landed[];
  /** Sets a flag once: true the first time it is asked for a name, false after. */
  once(name: string): boolean;
  /** Whether the flag was set. */
  has(name: string): boolean;
  close(): void;
}

export class MemoryLog implements WorldLog {
  private readonly rows: Landed[] = [];
  private readonly flags = new Set<string>();
  append(e: Omit<Landed, 'seq'>): void {
    this.rows.push({ ...e, seq: this.rows.length + 1 });
  }
  all(): Landed[] {
    return [...this.rows];
  }
  once(name: string): boolean {
    if (this.flags.has(name)) return false;
    this.flags.add(name);
    return true;
  }
  has(name: string): boolean {
    return this.flags.has(name);
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
      'CREATE TABLE IF NOT EXISTS landed (seq INTEGER PRIMARY KEY, kind TEXT, type TEXT, key TEXT, of TEXT, proc TEXT, result TEXT);' +
        'CREATE TABLE IF NOT EXISTS flags (name TEXT PRIMARY KEY);',
    );
  }
  append(e: Omit<Landed, 'seq'>): void {
    this.db.prepare('INSERT INTO landed (kind, type, key, of, proc, result) VALUES (?, ?, ?, ?, ?, ?)').run(e.kind, e.type, e.key, e.of, e.proc, e.result);
  }
  all(): Landed[] {
    return this.db.prepare('SELECT * FROM landed ORDER BY seq').all() as Landed[];
  }
  once(name: string): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO flags (name) VALUES (?)').run(name).changes === 1;
  }
  has(name: string): boolean {
    return this.db.prepare('SELECT 1 FROM flags WHERE name = ?').get(name) !== undefined;
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
  /** A provider that accepts a repeated key after all, where the schedule relies on it refusing one (see refuseRepeats). */
  readonly acceptsRepeats?: boolean;
  /** An execute that sends without checking its lease first (the check README advises right before the request). */
  readonly noLeaseCheck?: boolean;
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
   * From now on this key's provider refuses a repeated key, as the README's card processor does: the defence against
   * a process frozen between its lease check and its send (the window no process can close). Only the schedule that
   * freezes a process there sets it, for the key frozen, so every other non-idempotent repeat stays visible.
   */
  refuseRepeats(key: string): void {
    this.log.once(`refuses:${key}`);
  }

  /**
   * An effect reaches the world. An idempotent one repeated under its key is the same effect (unless sabotaged), and
   * so is a non-idempotent one whose provider refuses a repeated key: either is recorded as a `repeat`.
   */
  effect(type: string, key: string, idempotent: boolean, result: unknown, proc: string): unknown {
    const dedupes = idempotent ? !this.sabotage.noDedupe : !this.sabotage.acceptsRepeats && this.log.has(`refuses:${key}`);
    const before = dedupes ? this.landed(key) : undefined;
    if (before) {
      this.log.append({ kind: 'repeat', type, key, of: null, proc, result: before.result });
      return JSON.parse(before.result) as unknown;
    }
    this.log.append({ kind: 'do', type, key, of: null, proc, result: JSON.stringify(result) });
    return result;
  }

  /** An inverse reaches the world: refunds are keyed too, so an inverse run again with its key lands once. */
  undo(type: string, key: string, of: string, result: unknown, proc: string): unknown {
    const before = this.log.all().find((e) => e.kind === 'undo' && e.key === key);
    if (before) {
      this.log.append({ kind: 'repeat', type, key, of, proc, result: before.result });
      return JSON.parse(before.result) as unknown;
    }
    this.log.append({ kind: 'undo', type, key, of, proc, result: JSON.stringify(result) });
    return result;
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
