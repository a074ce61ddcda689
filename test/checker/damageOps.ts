// Damaged-journal operations: a row damaged on disk between two commands, which a resume must refuse, not replay.

import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Operation } from './operations';
import { isPgUrl } from './pgdb';
import { Observer } from './observer';
import { runAllows } from '../../src/runtime/policy';

const VIA = { api: 'host API', engine: 'the engine, as the CLI calls it' } as const;

/** How often the damage operation found a row to damage, and how its resumes ended: the suite prints it. */
export const DAMAGE_STATS = { ops: 0, damaged: 0, refused: 0 };

export function resetDamageStats(): void {
  Object.assign(DAMAGE_STATS, { ops: 0, damaged: 0, refused: 0 });
}

/**
 * The key of a journaled action in a step a resume redoes (committed, or left in doubt) rewritten as a BLOB of the same
 * bytes: a storage-class flip, which `integrity_check` passes and SQLite keeps. The lookup by key no longer finds the
 * row, so a resume that went on would take the action for a new one and run its effect again. The resume must be
 * refused before it writes anything; then the key is put back (a backup restored) and the schedule goes on.
 */
const damageKey: Operation = {
  starts: false,
  weight: 1,
  arbitrary: () => fc.record({ op: fc.constant('damage-key'), via: fc.constantFrom<'api' | 'engine'>('api', 'engine'), pick: fc.nat(7) }),
  describe: (op) =>
    `store an action key of a step a resume redoes as a BLOB (SQLite; PostgreSQL's typed columns cannot hold one), resume (${VIA[op.via as 'api']}), then put the key back`,
  run: async (x, op) => {
    DAMAGE_STATS.ops++;
    if (isPgUrl(x.target.db)) return;
    // Only where a resume would read the journal back: a run it refuses for its status first is not this attack.
    const row = x.observer.run(x.runId);
    if (!row || runAllows(row.status, false, x.observer.store.reader.view(row).compensationStopped).resumeBlocker !== null) {
      x.log.push(`damage-key: the run is ${row?.status ?? 'missing'}, which a resume refuses anyway: nothing damaged`);
      return;
    }
    const candidates = keysInRedoneSteps(x.target.db, x.runId);
    const key = candidates[Number(op.pick) % Math.max(1, candidates.length)];
    if (key === undefined) {
      x.log.push('damage-key: no journaled action in a step a resume would redo: nothing damaged');
      return;
    }
    const before = x.observer.snapshot(x.runId);
    const landed = x.target.world.all().length;
    // Read before the damage: the observer reads rows through the reader, which refuses the damaged one.
    const decisions = x.decisions(x.runId);
    setKeyClass(x.target.db, x.runId, key, 'blob');
    DAMAGE_STATS.damaged++;
    const label = `resume (${VIA[op.via as 'api']}) with action ${key}'s key stored as a BLOB`;
    const ended = await x.driver().resume(String(op.via), x.runId, decisions);
    setKeyClass(x.target.db, x.runId, key, 'text');
    x.log.push(`${label}: ${ended.kind === 'refused' ? `refused [${ended.code}]` : ended.kind}`);
    if (ended.kind === 'refused' && ended.code === 'LB_JOURNAL_INVALID') DAMAGE_STATS.refused++;
    else
      x.violation('damage-not-refused', `${label} ended ${ended.kind}${ended.kind === 'refused' ? ` [${ended.code}]` : ''}, not refused as a damaged journal`);
    if (x.target.world.all().length !== landed) x.violation('effect-on-damaged-journal', `${label}: an effect landed while the journal was damaged`);
    const changes = Observer.diff(before, x.observer.snapshot(x.runId), false);
    if (changes.length) x.violation('refusal-changed-run', `${label} changed run ${x.runId}: ${changes.join('; ')}`);
  },
};

/** Keys of the actions a resume reads back: those of steps not completed, and those left in doubt after an error. */
function keysInRedoneSteps(file: string, runId: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT a.id FROM actions a WHERE a.run_id = ? AND (a.step_idx IN (SELECT idx FROM steps WHERE run_id = a.run_id AND status <> 'completed') OR (a.status = 'started' AND a.error IS NOT NULL)) ORDER BY a.seq`,
      )
      .pluck()
      .all(runId) as string[];
  } finally {
    db.close();
  }
}

/**
 * Stores the key as a BLOB, or puts it back as text. When a resume went on past the damage (the violation the
 * operation reports), it journaled the action again under the text key: then the damaged row goes instead.
 */
function setKeyClass(file: string, runId: string, key: string, as: 'blob' | 'text'): void {
  const db = new Database(file);
  try {
    if (as === 'blob') {
      const n = db.prepare('UPDATE actions SET id = CAST(id AS BLOB) WHERE run_id = ? AND id = ?').run(runId, key).changes;
      if (n !== 1) throw new Error(`checker harness: damaging action ${key} of run ${runId} changed ${n} rows`);
      return;
    }
    const again = db.prepare('SELECT 1 FROM actions WHERE run_id = ? AND id = ?').get(runId, key) !== undefined;
    const sql = again
      ? 'DELETE FROM actions WHERE run_id = ? AND id = CAST(? AS BLOB)'
      : 'UPDATE actions SET id = CAST(id AS TEXT) WHERE run_id = ? AND id = CAST(? AS BLOB)';
    const n = db.prepare(sql).run(runId, key).changes;
    if (n !== 1) throw new Error(`checker harness: restoring action ${key} of run ${runId} changed ${n} rows`);
  } finally {
    db.close();
  }
}

export const DAMAGE_OPERATIONS: Record<string, Operation> = { 'damage-key': damageKey };
