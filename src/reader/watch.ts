// Notices journal changes cheaply: the dialect's data version (SQLite's PRAGMA data_version) on each nudge, then only
// the events written since last time. What nudges it differs: the file's folder for SQLite, LISTEN for PostgreSQL.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JournalOverview, Store } from '../runtime/store';
import type { ChangedNotice } from './readerProtocol';

export class ChangeTracker {
  private version: unknown;
  private seq: number;
  private runCount: number;
  private readonly live = new Map<string, boolean>();
  private readonly q: JournalOverview;

  constructor(private readonly store: Store) {
    this.q = store.overview();
    this.version = this.q.dataVersion();
    this.seq = this.q.lastEventSeq();
    this.runCount = this.q.runCount();
    this.checkLeases(true);
  }

  /** What changed since the last call, or undefined when nothing did. */
  poll(): ChangedNotice | undefined {
    const version = this.q.dataVersion();
    if (version === this.version) return undefined;
    this.version = version;
    const rows = this.q.runsChangedSince(this.seq);
    const seq = this.q.lastEventSeq();
    const count = this.q.runCount();
    const structure = count !== this.runCount || rows.some((r) => r.created === 1) || rows.length > 1000;
    this.seq = seq;
    this.runCount = count;
    const runs = rows.slice(0, 1000).map((r) => r.run_id);
    if (runs.length === 0 && !structure) return undefined;
    return { event: 'changed', runs, structure, seq };
  }

  /** Runs whose lease holder appeared or vanished (a killed runner writes nothing: only its pid tells). */
  checkLeases(initial = false): ChangedNotice | undefined {
    const now = this.store.leaseClock();
    const changed: string[] = [];
    const seen = new Set<string>();
    for (const r of this.q.leasedRuns()) {
      seen.add(r.id);
      const live = this.store.leaseIsLive(r, now);
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
