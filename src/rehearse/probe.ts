// Asks an agent's `probe` what the outside world recorded, with the providers pointed at one scratch directory.

import * as z from 'zod/mini';
import type { AgentDefinition, ProbeResult } from '../runtime/define';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';

const Record = z.record(z.string(), z.array(z.string()));

/**
 * The example providers read $LOGBOOK_STATE_DIR on every call, so one process can probe many scratch directories
 * in turn (campaigns in a worker run one at a time).
 */
export function prober(agent: AgentDefinition): (dir: string) => Promise<ProbeResult | undefined> {
  return async (dir) => {
    if (!agent.probe) return undefined;
    process.env.LOGBOOK_STATE_DIR = dir;
    let raw: unknown;
    try {
      raw = await agent.probe();
    } catch (err) {
      throw new LogbookError(ErrorCodes.USAGE, `The probe of agent ${agent.name} threw: ${describe(err)}.`, 'Make probe() read the providers\' records without side effects.');
    }
    const parsed = Record.safeParse(raw);
    if (!parsed.success) {
      throw new LogbookError(ErrorCodes.USAGE, `The probe of agent ${agent.name} returned ${JSON.stringify(raw)?.slice(0, 80)}, not { [action type]: idempotency keys[] }.`, 'Return, per action type, the keys the outside system saw (one per effect).');
    }
    return parsed.data;
  };
}
