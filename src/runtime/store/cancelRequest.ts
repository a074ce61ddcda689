// A cancel request as the run's row keeps it (runs.cancel_requested): its shape, and reading it back.

import * as z from 'zod/mini';

/** What `logbook cancel` asks, as the run's row keeps it (runs.cancel_requested, JSON) until the run has stopped. */
export interface CancelRequest {
  readonly reason: string | null;
  /** Compensate the committed actions, newest first, once the run has stopped. */
  readonly compensate: boolean;
  /** When it was asked (ms since the epoch, the asker's clock). */
  readonly at: number;
  /** Who asked (the process's label), for the timeline. */
  readonly by: string;
}

const CancelJson = z.object({ reason: z.nullable(z.string()), compensate: z.boolean(), at: z.number(), by: z.string() });

/**
 * Reads a cancel request back. A damaged one still stops the run (stopping starts no effect), but never compensates
 * it: undoing effects is only done when the journal says, intact, that it was asked for.
 */
export function parseCancelRequest(raw: string): CancelRequest {
  try {
    const r = CancelJson.safeParse(JSON.parse(raw));
    if (r.success) return r.data;
  } catch {
    // Not JSON: handled as damaged below.
  }
  return { reason: null, compensate: false, at: 0, by: 'unknown (the journaled request is damaged)' };
}
