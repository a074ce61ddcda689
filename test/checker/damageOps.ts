// Damaged-journal operations: a row damaged on disk between two commands, which a resume must refuse, not replay.

import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Operation } from './operations';
import { isPgUrl } from './pgdb';
import { Observer } from './observer';
import { runAllows } from '../../src/runtime/policy';

const VIA = { api: 'host API', engine: 'the engine, as the CLI calls it' } as const;

/** How often the damage operation found a row to damage, and how its resumes ended: the suite prints it. */
const NO_DAMAGE = { ops: 0, damaged: 0, refused: 0, logOps: 0, logDamaged: 0, logRefused: 0 };
export const DAMAGE_STATS = { ...NO_DAMAGE };

export function resetDamageStats(): void {
  Object.assign(DAMAGE_STATS, NO_DAMAGE);
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

/** How the newest unfolded event's writes are damaged: not JSON, a write Logbook does not make, a long value cut off. */
const LOG_DAMAGE = {
  'not-json': () => 'not json',
  'unknown-write': (fold: string) => fold.replace(/^\[\["[A-Za-z]+"/, '[["dropTable"'),
  'value-cut': (fold: string) => (fold.includes('\n') ? fold.slice(0, fold.indexOf('\n')) : `${fold}\n{}`),
} as const;

/** The run's newest event past its watermark that carries writes (format 2, SQLite): what a killed writer left unfolded. */
function newestUnfolded(file: string, runId: string): { seq: number; fold: string } | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT e.seq, e.fold FROM events e JOIN runs r ON r.id = e.run_id WHERE e.run_id = ? AND e.seq > r.folded_seq AND e.fold IS NOT NULL ORDER BY e.seq DESC LIMIT 1',
      )
      .get(runId) as { seq: number; fold: string } | undefined;
  } finally {
    db.close();
  }
}

/** What a refused command must not change, read raw (a reader would fold, and the damage stops it): the log and the rows. */
function rawImage(file: string, runId: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return JSON.stringify([
      db.prepare('SELECT seq, kind, data, fold FROM events WHERE run_id = ? ORDER BY seq').raw(true).all(runId),
      db.prepare('SELECT folded_seq, status, lease_epoch, attempt FROM runs WHERE id = ?').raw(true).all(runId),
      db.prepare('SELECT * FROM steps WHERE run_id = ? ORDER BY idx').raw(true).all(runId),
      db.prepare('SELECT * FROM actions WHERE run_id = ? ORDER BY seq').raw(true).all(runId),
    ]);
  } finally {
    db.close();
  }
}

function setFold(file: string, seq: number, fold: string | null): void {
  const db = new Database(file);
  try {
    if (fold === null) db.prepare('DELETE FROM events WHERE seq = ?').run(seq);
    else db.prepare('UPDATE events SET fold = ? WHERE seq = ?').run(fold, seq);
  } finally {
    db.close();
  }
}

/**
 * Journal format 2: a driver killed mid-run leaves its last transitions unfolded (their writes only in the log). Before
 * anything reads them, the newest one's writes are damaged on disk. A resume (a compensation, for a run compensating)
 * must be refused as a damaged journal (LB_JOURNAL_INVALID) before it writes anything or runs an effect, not take the
 * missing rows for a script that failed or an action never started; then the writes are put back (a backup restored)
 * and the schedule goes on. Negative control (`sabotage.logDamageLost`): the event deleted instead, which no reader can
 * tell from a transaction the kill took, so the resume goes on and the operation must say so. `first`: the killed
 * command starts the run or resumes it.
 */
const damageLog = (first: 'start' | 'resume'): Operation => ({
  starts: first === 'start',
  weight: 1,
  arbitrary: () =>
    fc.record({
      op: fc.constant(first === 'start' ? 'start-damage-log' : 'damage-log'),
      via: fc.constantFrom<'api' | 'engine'>('api', 'engine'),
      n: fc.nat(5),
      when: fc.constantFrom('before-effect', 'after-effect'),
      how: fc.constantFrom<keyof typeof LOG_DAMAGE>('not-json', 'unknown-write', 'value-cut'),
    }),
  describe: (op) =>
    `${first} (${VIA[op.via as 'api']}) killed at provider call #${Number(op.n) + 1} (${String(op.when)}); damage its newest unfolded event's writes (${String(op.how)}; SQLite), resume again, then put them back`,
  run: async (x, op) => {
    DAMAGE_STATS.logOps++;
    const before = x.observer.snapshot(x.runId);
    const d = x.driver();
    d.proc.arm({ at: 'provider', n: Number(op.n), when: op.when as 'before-effect' });
    const label = `${first} (${VIA[op.via as 'api']})`;
    const ended = await (first === 'start' ? d.start(String(op.via), x.runId) : d.resume(String(op.via), x.runId, x.decisions(x.runId)));
    const target = ended.kind === 'crashed' && !isPgUrl(x.target.db) ? newestUnfolded(x.target.db, x.runId) : undefined;
    if (target === undefined) {
      x.log.push(`damage-log: ${ended.kind === 'crashed' ? 'nothing unfolded' : `the ${first} was not killed`}: nothing damaged`);
      x.after(label, x.runId, ended, before);
      return;
    }
    x.log.push(`${label}: crashed, leaving event #${target.seq} unfolded`);
    x.retire();
    // The command the run's status calls for, read without folding (the runs row, and its newest driving event): a
    // compensation reads the log back as a resume does, and must refuse the damage as well.
    const row = x.observer.run(x.runId);
    const allows = row ? runAllows(row.status, false, x.observer.store.reader.view(row).compensationStopped) : undefined;
    const command = allows?.resumeBlocker === null ? 'resume' : allows?.resumeBlocker === 'compensation' && allows.canCompensate ? 'compensate' : undefined;
    if (command === undefined) {
      x.log.push(`damage-log: the run is ${row?.status ?? 'missing'}, which neither a resume nor a compensation takes: nothing damaged`);
      x.after(label, x.runId, ended, before);
      return;
    }
    const lost = x.target.world.sabotage.logDamageLost === true;
    setFold(x.target.db, target.seq, lost ? null : LOG_DAMAGE[op.how as keyof typeof LOG_DAMAGE](target.fold));
    DAMAGE_STATS.logDamaged++;
    const image = rawImage(x.target.db, x.runId);
    const landed = x.target.world.all().length;
    const again = `${command} (${VIA[op.via as 'api']}) with event #${target.seq}'s writes damaged (${lost ? 'lost' : String(op.how)})`;
    const refused = await x.driver()[command](String(op.via), x.runId, {});
    x.log.push(`${again}: ${refused.kind === 'refused' ? `refused [${refused.code}]` : refused.kind}`);
    if (refused.kind === 'refused' && refused.code === 'LB_JOURNAL_INVALID') DAMAGE_STATS.logRefused++;
    else
      x.violation(
        'damage-not-refused',
        `${again} ended ${refused.kind}${refused.kind === 'refused' ? ` [${refused.code}]` : ''}, not refused as a damaged journal`,
      );
    if (x.target.world.all().length !== landed) x.violation('effect-on-damaged-journal', `${again}: an effect landed while the journal was damaged`);
    if (!lost && rawImage(x.target.db, x.runId) !== image) x.violation('refusal-changed-run', `${again} wrote to run ${x.runId}'s log or rows`);
    x.retire();
    if (!lost) setFold(x.target.db, target.seq, target.fold);
    // The crash's own checks, now that the log reads again.
    x.after(`${label}, checked once the writes were put back`, x.runId, ended, before);
  },
});

export const DAMAGE_OPERATIONS: Record<string, Operation> = {
  'damage-key': damageKey,
  'damage-log': damageLog('resume'),
  'start-damage-log': damageLog('start'),
};
