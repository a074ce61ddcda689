// LISTEN on the PostgreSQL writers' channel, on a connection of the reader's own (the store's only SQL that is not a Db call), reconnecting after any drop.
// The store's connection blocks its caller; this one only waits, so a notification reaches the reader at once.

import type { Client } from 'pg';

/** pg is loaded on first use: a reader of a SQLite journal never pays for it at start. */
const loadPg = async (): Promise<typeof import('pg')> => (await import('pg')).default;

export interface ListenerEvents {
  /** A writer announced a change (the payload is the run id; the reader reads what changed by sequence anyway). */
  notified(runId: string): void;
  /** LISTEN took effect (true) or the connection is gone (false): the reader polls while it is false. */
  listening(on: boolean): void;
  /** Why a connection failed, once per failure run (not once per retry). */
  problem(message: string): void;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

export class PgListener {
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private stopped = false;
  private on = false;
  private reported = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly events: ListenerEvents,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  get isListening(): boolean {
    return this.on;
  }

  private set(on: boolean): void {
    if (this.on === on) return;
    this.on = on;
    this.events.listening(on);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // The password, if any, comes from PGPASSWORD (or ~/.pgpass): the URL the extension passes never carries one.
    let pg: typeof import('pg');
    try {
      pg = await loadPg();
    } catch (err) {
      this.events.problem(`the pg client could not load (${err instanceof Error ? err.message : String(err)}); polling instead of LISTEN.`);
      return;
    }
    if (this.stopped) return;
    const c = new pg.Client({
      connectionString: this.url,
      application_name: 'logbook-reader-listen',
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = c;
    c.on('notification', (m) => {
      if (m.channel === this.channel) this.events.notified(m.payload ?? '');
    });
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c, new Error('the connection ended')));
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
    } catch (err) {
      this.lost(c, err);
      return;
    }
    if (this.client !== c || this.stopped) return;
    this.retryMs = FIRST_RETRY_MS;
    this.reported = false;
    this.set(true);
  }

  private lost(c: Client, err: unknown): void {
    if (this.client !== c) return;
    this.client = undefined;
    c.removeAllListeners('end');
    c.on('error', () => undefined);
    c.end().catch(() => undefined);
    this.set(false);
    if (this.stopped) return;
    if (!this.reported) {
      this.reported = true;
      this.events.problem(`LISTEN ${this.channel} failed (${err instanceof Error ? err.message : String(err)}); polling until it reconnects.`);
    }
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    this.set(false);
    if (c) {
      c.removeAllListeners('end');
      c.on('error', () => undefined);
      c.end().catch(() => undefined);
    }
  }
}
