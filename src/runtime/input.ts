// How an attempt gets its input: a user's raw input is parsed by the agent's schema once, when the run is created;
// every later attempt (resume, fork, a worker's claim, the host API, the debugger) takes the parsed value the journal holds.

import { ErrorCodes, LogbookError } from './errors';
import type { AgentDefinition } from './define';
import { fromJournalJson, toJournalJson } from './json';
import { validate } from './schema';
import type { RunRow } from './store/rows';

declare const PARSED: unique symbol;

/**
 * A run's input as its agent's schema made it (transforms, defaults and coercions applied once), with the text the journal
 * holds. Only parseRawInput and journaledInput make one, and an attempt is driven only with one, so the schema never
 * sees a value it already made (a dollars-to-cents transform applied twice charges 100 times the amount).
 */
export interface ParsedInput {
  /** What the script receives: the journal text parsed, the same value in the first attempt as in every later one. */
  readonly value: unknown;
  readonly json: string | null;
  readonly [PARSED]: true;
}

function parsed(json: string | null, value: unknown): ParsedInput {
  return { json, value } as ParsedInput;
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A new run's id, checked before anything is written. */
export function checkRunId(runId: string): void {
  if (!RUN_ID.test(runId)) {
    throw new LogbookError(ErrorCodes.USAGE, `The run id ${JSON.stringify(runId)} is not usable.`, 'Use letters, digits, and . _ : - (up to 128 characters), starting with a letter or digit.');
  }
}

/** The run id and a user's raw input, checked before anything is written; the input parsed by the agent's schema. */
export async function parseRawInput(agent: AgentDefinition, runId: string, raw: unknown): Promise<ParsedInput> {
  checkRunId(runId);
  const v = await validate(agent.input, raw ?? {});
  if (!v.ok) {
    throw new LogbookError(ErrorCodes.INVALID_INPUT, `The input for agent ${agent.name} is invalid: ${v.message}.`, "Pass --input with JSON that matches the agent's input schema.", { agent: agent.name });
  }
  const json = toJournalJson(v.value, `The input of agent ${agent.name}`, 'Pass plain JSON as input.');
  // The first attempt gets the journal's value too: a later one can only get that, and both must see the same.
  return parsed(json, json === null ? undefined : (JSON.parse(json) as unknown));
}

/** The parsed input a run's row holds, used as it is (the schema is not applied again). */
export function journaledInput(row: RunRow): ParsedInput {
  return parsed(row.input, fromJournalJson(row.input));
}
