// What journal.send and `logbook send` take and answer: public types kept apart from send.ts, which needs the store.

import type { RunStatus } from './types';

export interface SendOptions {
  /** The dedupe id: a second event with it is a no-op that says so. Default: a new random id (every send is kept). */
  readonly id?: string;
  /** Who sends it, as `show` names the sender: cli, api, vscode, debugger. */
  readonly role?: string;
  /** Names the caller in messages (`logbook send`, `journal.send`). */
  readonly what?: string;
  /** Where a warning goes (a data field named like a secret): stderr unless given. */
  readonly log?: (line: string) => void;
}

/** What became of an event sent before under the same id. */
export interface SentBefore {
  readonly status: 'pending' | 'delivered' | 'refused';
  /** The step (0-based) of the wait that took it, when one did. */
  readonly step: number | null;
  readonly sentAt: number;
  readonly name: string;
}

/**
 * What a send did and what the run will do with it, as the journal says at the moment it was kept:
 * - `waiting-now`: the run waits for this event now: `logbook send` continues it, else a worker or `logbook resume`;
 * - `late`: its wait for this name timed out before the event came (`timedOutAt`): kept, and taken only if the run
 *   waits for this name again;
 * - `later`: the run does not wait for it now (it runs, sleeps, or waits for another event): kept until it does; one
 *   never taken is listed by `show` once the run ends;
 * - `taken`: (a duplicate only) the event sent before under this id was taken already.
 */
export interface SendReport {
  readonly runId: string;
  readonly name: string;
  readonly id: string;
  /** `kept`: stored in the run's inbox; `duplicate`: an event with this id was sent before, and nothing was written. */
  readonly outcome: 'kept' | 'duplicate';
  readonly expect: 'waiting-now' | 'late' | 'later' | 'taken';
  /** The run's status when the event was sent. */
  readonly status: RunStatus;
  /** The event the run waits for now, if it waits for one. */
  readonly waitingFor: string | null;
  /** For `late`: when the wait it came too late for timed out (ms since the epoch). */
  readonly timedOutAt?: number;
  /** For a duplicate: the event sent before under this id. */
  readonly before?: SentBefore;
}
