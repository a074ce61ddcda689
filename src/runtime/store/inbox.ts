// Events sent to runs (the inbox, schema version 7): sending one, in a transaction under the run row's lock, and the
// reads run.waitFor, approval gates, `send` and `show` make. Taking one is the writer's (RunWriter.eventTaken), in the
// transaction of the step or approval that records it, so an event is delivered once whatever is killed when.

import { dbOf, type Db, type JournalConnection, type Statement } from './db';
import { ErrorCodes, LogbookError, runNotFound } from '../errors';
import { damageAt, journalInvalid } from '../json';
import { canSend } from '../policy';
import type { StoredRunStatus } from '../types';
import { InboxRow, RunRow, checked } from './rows';

/** The schema version that made the inbox: an older journal opened read-only has none, and reads as empty. */
const INBOX_VERSION = 7;

/** An event as a sender gives it: `data` is journal JSON text (or null for none), `id` the dedupe id. */
export interface NewEvent {
  readonly name: string;
  readonly id: string;
  readonly data: string | null;
  /** Who sent it (the process's owner label): shown by `show`. */
  readonly by: string;
}

/** What a send did: stored (`kept`), or nothing because an event with its id was sent before (`duplicate`). */
export interface SendResult {
  readonly kind: 'kept' | 'duplicate';
  /** The new row, or the one sent before with the same id (its status says whether a run took it). */
  readonly event: InboxRow;
  /** The run as the send found it, under its lock. */
  readonly run: RunRow;
}

/**
 * One transaction under the run row's lock (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE). A run whose session is
 * about to record that it waits writes that status under the same lock, and only if no event it could take is pending
 * (RunWriter.waiting): so an event sent at any moment is either seen by the session or finds the run `waiting`.
 * A duplicate id changes nothing; a run that ended is refused (LB_EVENT_REFUSED), and nothing is written.
 */
export function sendEvent(conn: Db | JournalConnection, target: string, runId: string, ev: NewEvent): SendResult {
  const db = dbOf(conn);
  const locked = db.prepare(`SELECT * FROM runs WHERE id = ?${db.dialect.forUpdate}`);
  const byId = db.prepare('SELECT * FROM inbox WHERE run_id = ? AND id = ?');
  // An id stored as anything but text (Dialect.notText) would not be found by byId: the send would be kept again.
  const notText = db.dialect.notText;
  const hiddenId = notText ? db.prepare(`SELECT seq, name FROM inbox WHERE run_id = ? AND ${notText('id')} ORDER BY seq LIMIT 1`) : undefined;
  let result: SendResult | undefined;
  const tx = db.transaction(() => {
    const found = locked.get(runId);
    const run = found === undefined ? undefined : checked(RunRow, found, 'run', target);
    if (!run) throw runNotFound(runId);
    const before = byId.get(runId, ev.id);
    if (before !== undefined) {
      result = { kind: 'duplicate', event: checked(InboxRow, before, 'inbox', target), run };
      return;
    }
    const hidden = hiddenId?.get(runId) as { seq: number; name: string } | undefined;
    if (hidden) {
      const place = { runId, table: 'inbox', seq: hidden.seq, name: hidden.name, column: 'id' } as const;
      throw journalInvalid(place, damageAt(place), true);
    }
    if (!canSend(run.status)) throw eventRefused(runId, run.status, ev.name);
    const now = Date.now();
    const seq = Number(
      db
        .prepare(`INSERT INTO inbox (run_id, name, id, data, sent_at, sent_by, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')${db.dialect.returningSeq}`)
        .run(runId, ev.name, ev.id, ev.data, now, ev.by).lastInsertRowid,
    );
    // In the run's own log too, so the timeline shows it and a reader watching the journal hears of it.
    db.prepare("INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, 'inbox.received', ?)").run(
      runId,
      run.attempt,
      now,
      JSON.stringify({ name: ev.name, id: ev.id, seq, by: ev.by }),
    );
    const event: InboxRow = {
      seq,
      run_id: runId,
      name: ev.name,
      id: ev.id,
      data: ev.data,
      sent_at: now,
      sent_by: ev.by,
      status: 'pending',
      step_idx: null,
      attempt: null,
      taken_at: null,
      error: null,
    };
    result = { kind: 'kept', event, run };
  });
  try {
    tx.immediate();
  } catch (err) {
    // Two senders of one id at once on PostgreSQL cannot both pass the run row's lock; kept for any other path to the index.
    if ((err as { code?: unknown }).code !== '23505') throw err;
    const again = byId.get(runId, ev.id);
    const row = db.prepare('SELECT * FROM runs WHERE id = ?').get(runId);
    if (again === undefined || row === undefined) throw err;
    return { kind: 'duplicate', event: checked(InboxRow, again, 'inbox', target), run: checked(RunRow, row, 'run', target) };
  }
  if (!result) throw runNotFound(runId);
  if (result.kind === 'kept') db.changed(runId);
  return result;
}

export function eventRefused(runId: string, status: StoredRunStatus, name: string): LogbookError {
  const why =
    status === 'completed'
      ? 'it completed'
      : status === 'cancelled'
        ? 'it was cancelled'
        : status === 'compensating'
          ? 'it is being compensated'
          : status === 'compensated'
            ? 'it was compensated'
            : `it is ${status}`;
  return new LogbookError(
    ErrorCodes.EVENT_REFUSED,
    `Run ${runId} no longer waits for anything: ${why}, so event ${JSON.stringify(name)} was not kept (nothing was written).`,
    `Send it to a run that is still going (\`logbook ls\` shows them), or start a new run.`,
    { runId, status, name },
  );
}

/** The inbox's reads, prepared on first use: a journal from before schema version 7 (opened read-only) has no inbox. */
export class InboxReader {
  private q: Record<'pending' | 'ofRun' | 'byId' | 'ofName' | 'timeouts', Statement> | null | undefined;

  constructor(
    private readonly db: Db,
    private readonly target: string,
  ) {}

  private statements(): Record<'pending' | 'ofRun' | 'byId' | 'ofName' | 'timeouts', Statement> | null {
    if (this.q !== undefined) return this.q;
    if (this.db.schemaVersion() < INBOX_VERSION) return (this.q = null);
    this.q = {
      // The oldest pending event of the name sent by `until` (a wait's timeout): first in, first out.
      pending: this.db.prepare("SELECT * FROM inbox WHERE run_id = ? AND name = ? AND status = 'pending' AND sent_at <= ? ORDER BY seq LIMIT 1"),
      ofRun: this.db.prepare('SELECT * FROM inbox WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      byId: this.db.prepare('SELECT * FROM inbox WHERE run_id = ? AND id = ?'),
      ofName: this.db.prepare('SELECT * FROM inbox WHERE run_id = ? AND name = ? ORDER BY seq'),
      // The run's waits that timed out (RunWriter.waitTimedOut), newest first: read only by a send, never on a run's path.
      timeouts: this.db.prepare("SELECT at, data FROM events WHERE run_id = ? AND kind = 'wait.timed-out' ORDER BY seq DESC"),
    };
    return this.q;
  }

  private rows(raw: unknown[]): InboxRow[] {
    return raw.map((r) => checked(InboxRow, r, 'inbox', this.target));
  }

  /** The oldest event of this name the run has not taken yet, sent at or before `until` (ms since the epoch). */
  pending(runId: string, name: string, until = Number.MAX_SAFE_INTEGER): InboxRow | undefined {
    const r = this.statements()?.pending.get(runId, name, until);
    return r === undefined ? undefined : checked(InboxRow, r, 'inbox', this.target);
  }

  /** Every event sent to the run, oldest first, `limit` at a time after `afterSeq`. */
  ofRun(runId: string, afterSeq = 0, limit = 1000): InboxRow[] {
    const q = this.statements();
    return q ? this.rows(q.ofRun.all(runId, afterSeq, limit)) : [];
  }

  byId(runId: string, id: string): InboxRow | undefined {
    const r = this.statements()?.byId.get(runId, id);
    return r === undefined ? undefined : checked(InboxRow, r, 'inbox', this.target);
  }

  /**
   * When the run's latest wait for `name` timed out (its deadline), if its latest wait for that name did (no event of
   * that name was delivered after it): what makes an event sent now late.
   */
  lastTimeout(runId: string, name: string): number | undefined {
    const q = this.statements();
    if (!q) return undefined;
    for (const r of q.timeouts.iterate(runId) as Iterable<{ at: unknown; data: unknown }>) {
      let d: { name?: unknown; deadline?: unknown };
      try {
        d = JSON.parse(String(r.data)) as typeof d;
      } catch {
        continue;
      }
      if (d.name !== name || typeof d.deadline !== 'number') continue;
      const at = Number(r.at);
      const later = this.ofName(runId, name).some((e) => e.status === 'delivered' && (e.taken_at ?? 0) > at);
      return later ? undefined : d.deadline;
    }
    return undefined;
  }

  /** The events of one name sent to the run, oldest first. */
  ofName(runId: string, name: string): InboxRow[] {
    const q = this.statements();
    return q ? this.rows(q.ofName.all(runId, name)) : [];
  }
}
