// Forking a run: the new run inherits the origin's checkpointed steps before the fork point, so it replays them.

import type { Db } from './db';
import { ErrorCodes, LogbookError } from '../errors';
import type { JournalReader } from './reader';

/**
 * Attempt number given to inherited step rows: lower than the fork's first attempt (1), so its first attempt
 * replays them like any step an earlier attempt completed.
 */
export const INHERITED_ATTEMPT = 0;

/**
 * Copies steps 0..beforeIdx-1 of `fromRunId` into `toRunId` (which must already exist). Only steps are copied:
 * their actions stay in the origin's journal, because an effect belongs to exactly one run (compensating the fork
 * must not undo the origin's effects). Call inside the transaction that creates the new run.
 */
export function copyStepsForFork(db: Db, reader: JournalReader, fromRunId: string, toRunId: string, beforeIdx: number): number {
  const origin = reader.run(fromRunId);
  if (!origin) {
    throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `Cannot fork run ${fromRunId}: it is not in this journal.`, 'Fork from a run listed by `logbook ls`.', {
      runId: fromRunId,
    });
  }
  if (!Number.isInteger(beforeIdx) || beforeIdx < 0) {
    throw new LogbookError(
      ErrorCodes.USAGE,
      `Cannot fork run ${fromRunId} at step index ${beforeIdx}.`,
      'Fork at a step index of 0 or more (0 replays nothing).',
      { runId: fromRunId },
    );
  }
  const steps = reader.steps(fromRunId, 0, beforeIdx);
  for (let i = 0; i < beforeIdx; i++) {
    const s = steps[i];
    if (s?.idx !== i) {
      throw new LogbookError(
        ErrorCodes.USAGE,
        `Cannot fork run ${fromRunId} at step #${beforeIdx + 1}: its step #${i + 1} was never journaled.`,
        'Fork at a step the origin run has reached.',
        { runId: fromRunId, stepIdx: beforeIdx },
      );
    }
    if (s.status === 'started') {
      throw new LogbookError(
        ErrorCodes.USAGE,
        `Cannot fork run ${fromRunId} at step #${beforeIdx + 1}: step #${i + 1} "${s.name}" has no checkpoint (it was still running).`,
        'Fork at or before the first unfinished step.',
        { runId: fromRunId, stepIdx: beforeIdx },
      );
    }
  }
  const insert = db.prepare('INSERT INTO steps (run_id, idx, name, status, result, error, attempt, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  for (const s of steps) insert.run(toRunId, s.idx, s.name, s.status, s.result, s.error, INHERITED_ATTEMPT, s.started_at, s.ended_at);
  db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)').run(
    toRunId,
    1,
    Date.now(),
    'run.forked',
    JSON.stringify({ from: fromRunId, atStep: beforeIdx, inheritedSteps: steps.length }),
  );
  return steps.length;
}

/** An action of the origin run given to a fork as already committed: a model call (with its answer, or an edited one). */
export interface ForkSeed {
  readonly id: string;
  /** Its id in the fork, when the key names the run (`tool:<run id>:…`); default the same. */
  readonly as?: string;
  /** The result the fork's journal gets instead of the origin's (JSON text); absent, the origin's. */
  readonly result?: string;
}

/**
 * Copies committed actions of the origin into a fork (call inside the transaction that creates it, after its steps):
 * each becomes committed in the fork's first attempt's past (INHERITED_ATTEMPT), so the fork's script finds it and
 * returns its result without executing. Only actions whose effect is nothing outside (model calls, read-only tools)
 * may be seeded: an effect belongs to exactly one run.
 */
export function seedForkActions(db: Db, reader: JournalReader, fromRunId: string, toRunId: string, seeds: readonly ForkSeed[]): void {
  const insert = db.prepare(
    `INSERT INTO actions (run_id, id, seq, step_idx, type, version, effect, args, status, result, executions, attempt, started_at, ended_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'committed', ?, 0, ?, ?, ?)`,
  );
  for (const seed of seeds) {
    const a = reader.action(fromRunId, seed.id);
    if (a?.status !== 'committed' || a.effect === 'non-idempotent') {
      throw new LogbookError(
        ErrorCodes.USAGE,
        `Cannot give action ${seed.id} of run ${fromRunId} to its fork: it is ${a ? `${a.effect} and ${a.status}` : 'not in the journal'}.`,
        'Seed a fork with committed model calls and read-only actions only.',
        { runId: fromRunId, actionId: seed.id },
      );
    }
    insert.run(
      toRunId,
      seed.as ?? a.id,
      a.seq,
      a.step_idx,
      a.type,
      a.version,
      a.effect,
      a.args,
      seed.result ?? a.result,
      INHERITED_ATTEMPT,
      a.started_at,
      a.ended_at,
    );
  }
  if (seeds.length) {
    db.prepare('INSERT INTO events (run_id, attempt, at, kind, data) VALUES (?, ?, ?, ?, ?)').run(
      toRunId,
      1,
      Date.now(),
      'run.fork-seeded',
      JSON.stringify({ from: fromRunId, actions: seeds.map((s) => ({ id: s.id, ...(s.as ? { as: s.as } : {}), edited: s.result !== undefined })) }),
    );
  }
}
