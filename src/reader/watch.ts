// Notices journal changes cheaply: the dialect's data version (SQLite's PRAGMA data_version) on each nudge, then only
// the events written since last time. What nudges it differs: the file's folder for SQLite, LISTEN for PostgreSQL.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Store } from '../runtime/store';
import { leaseIsLive } from '../runtime/store/owner';
import type { ChangedNotice } from './protocol';

interface LeaseRow {
  id: string;
  lease_token: string | null;
  lease_pid: number | null;
  lease_pid_start: string | null;
  lease_host: string | null;
  lease_expires: number | null;
}

export class ChangeTracker {
  private version: unknown;
  private seq: number;
  private runCount: number;
  private readonly live = new Map<string, boolean>();
  private readonly q;

  constructor(private readonly store: Store) {
    const db = store.db;
    this.q = {
      version: db.prepare(db.dialect.dataVersion).pluck(),
      maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM events').pluck(),
      runCount: db.prepare('SELECT COUNT(*) FROM runs').pluck(),
      changedRuns: db.prepare("SELECT run_id, MAX(CASE WHEN kind = 'run.started' THEN 1 ELSE 0 END) AS created FROM events WHERE seq > ? GROUP BY run_id LIMIT 1001"),
      leased: db.prepare('SELECT id, lease_token, lease_pid, lease_pid_start, lease_host, lease_expires FROM runs WHERE lease_token IS NOT NULL'),
    };
    this.version = this.q.version.get();
    this.seq = this.q.maxSeq.get() as number;
    this.runCount = this.q.runCount.get() as number;
    this.checkLeases(true);
  }

  /** What changed since the last call, or undefined when nothing did. */
  poll(): ChangedNotice | undefined {
    const version = this.q.version.get();
    if (version === this.version) return undefined;
    this.version = version;
    const rows = this.q.changedRuns.all(this.seq) as Array<{ run_id: string; created: number }>;
    const seq = this.q.maxSeq.get() as number;
    const count = this.q.runCount.get() as number;
    const structure = count !== this.runCount || rows.some((r) => r.created === 1) || rows.length > 1000;
    this.seq = seq;
    this.runCount = count;
    const runs = rows.slice(0, 1000).map((r) => r.run_id);
    if (runs.length === 0 && !structure) return undefined;
    return { event: 'changed', runs, structure, seq };
  }

  /** Runs whose lease holder appeared or vanished (a killed runner writes nothing: only its pid tells). */
  checkLeases(initial = false): ChangedNotice | undefined {
    const now = this.store.db.now();
    const changed: string[] = [];
    const seen = new Set<string>();
    for (const r of this.q.leased.all() as LeaseRow[]) {
      seen.add(r.id);
      const live = leaseIsLive(r, now, this.store.db.dialect.leaseByExpiry);
      if (this.live.get(r.id) !== live) {
        // A run first seen here may already have been shown as running (and died since): report it too.
        if (!initial) changed.push(r.id);
        this.live.set(r.id, live);
      }
    }
    for (const id of [...this.live.keys()]) {
      if (!seen.has(id)) this.live.delete(id);
    }
    return changed.length ? { event: 'changed', runs: changed, structure: false, seq: this.seq } : undefined;
  }
}

/** Calls `nudge` soon after anything in the journal's folder changes (the WAL grows on every commit). */
export function watchFolder(file: string, nudge: () => void): () => void {
  try {
    const w = fs.watch(path.dirname(file), { persistent: false }, () => nudge());
    w.on('error', () => undefined);
    return () => w.close();
  } catch {
    return () => undefined;
  }
}
