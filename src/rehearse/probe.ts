// Asks an agent's `probe` what the outside world recorded, with the providers pointed at one scratch directory.

import * as z from 'zod/mini';
import type { AgentDefinition, ProbeResult } from '../runtime/define';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';

const Record = z.record(z.string(), z.array(z.union([z.string(), z.object({ key: z.string(), result: z.optional(z.unknown()) })])));

/** What a probe saw: the keys per action type (what the invariants compare), and the results it gave for some. */
export interface ProbeSeen {
  readonly keys: ProbeResult;
  /** Per action type, by key: the result the outside system gave, for the effects the probe reported with one. */
  readonly results: Readonly<Record<string, ReadonlyMap<string, unknown>>>;
}

/**
 * The example providers read $LOGBOOK_STATE_DIR on every call, so one process can probe many scratch directories
 * in turn (campaigns in a child run one at a time).
 */
export function prober(agent: AgentDefinition): (dir: string) => Promise<ProbeSeen | undefined> {
  return async (dir) => {
    if (!agent.probe) return undefined;
    process.env.LOGBOOK_STATE_DIR = dir;
    let raw: unknown;
    try {
      raw = await agent.probe();
    } catch (err) {
      throw new LogbookError(
        ErrorCodes.USAGE,
        `The probe of agent ${agent.name} threw: ${describe(err)}.`,
        "Make probe() read the providers' records without side effects.",
      );
    }
    const parsed = Record.safeParse(raw);
    if (!parsed.success) {
      throw new LogbookError(
        ErrorCodes.USAGE,
        `The probe of agent ${agent.name} returned ${JSON.stringify(raw)?.slice(0, 80)}, not { [action type]: idempotency keys[] }.`,
        'Return, per action type, the keys the outside system saw (one per effect), each a string or { key, result }.',
      );
    }
    const keys: Record<string, string[]> = {};
    const results: Record<string, Map<string, unknown>> = {};
    for (const [type, effects] of Object.entries(parsed.data)) {
      keys[type] = effects.map((e) => (typeof e === 'string' ? e : e.key));
      for (const e of effects) if (typeof e !== 'string' && 'result' in e && e.result !== undefined) (results[type] ??= new Map()).set(e.key, e.result);
    }
    return { keys, results };
  };
}
