// How an attempt gets its input: a user's raw input is parsed by the agent's schema once, when the run is created;
// every later attempt (resume, fork, a worker's claim, the host API, the debugger) takes the parsed value the journal
// holds, read back together with what the attempt reads before it writes, so a damaged journal is refused first.

import { ErrorCodes, LogbookError } from './errors';
import type { AgentDefinition } from './define';
import { damageAt, fromJournalJson, journalInvalid, journalTextDamage, toJournalJson, type JournalPlace } from './json';
import { validate } from './schema';
import { warnSecretFields } from './warnings';
import type { ReadScope, JournalReader } from './store';
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
    throw new LogbookError(
      ErrorCodes.USAGE,
      `The run id ${JSON.stringify(runId)} is not usable.`,
      'Use letters, digits, and . _ : - (up to 128 characters), starting with a letter or digit.',
    );
  }
}

/** The run id and a user's raw input, checked before anything is written; the input parsed by the agent's schema. */
export async function parseRawInput(agent: AgentDefinition, runId: string, raw: unknown, log?: (line: string) => void): Promise<ParsedInput> {
  checkRunId(runId);
  const v = await validate(agent.input, raw ?? {});
  if (!v.ok) {
    throw new LogbookError(
      ErrorCodes.INVALID_INPUT,
      `The input for agent ${agent.name} is invalid: ${v.message}.`,
      "Pass --input with JSON that matches the agent's input schema.",
      { agent: agent.name },
    );
  }
  const json = toJournalJson(v.value, `The input of agent ${agent.name}`, 'Pass plain JSON as input.');
  if (log) warnSecretFields(v.value, 'input', `the input of run ${runId} (agent ${agent.name})`, log);
  // The first attempt gets the journal's value too: a later one can only get that, and both must see the same.
  return parsed(json, json === null ? undefined : (JSON.parse(json) as unknown));
}

const inputPlace = (row: RunRow): JournalPlace => ({ runId: row.id, table: 'runs', column: 'input' });

/** The parsed input a run's row holds, used as it is (the schema is not applied again); damaged, LB_JOURNAL_INVALID. */
export function journaledInput(row: RunRow): ParsedInput {
  return parsed(
    row.input,
    fromJournalJson(row.input, () => inputPlace(row)),
  );
}

/**
 * Before a command writes to a run (resume, compensate, fork, a worker's attempt): its input and every journaled value
 * in `scope` read back and checked, so a damaged one is LB_JOURNAL_INVALID before the attempt counter moves, not a
 * SyntaxError the script, or its declared compensation, takes for a failure. Returns the attempt's input.
 */
export function readBackFirst(reader: JournalReader, row: RunRow, scope: ReadScope, nothingWritten = true): ParsedInput {
  const damaged = journalTextDamage(row.input, () => inputPlace(row), nothingWritten);
  if (damaged) throw damaged;
  const place = reader.firstDamage(row.id, scope);
  if (place) throw journalInvalid(place, damageAt(place), nothingWritten);
  return journaledInput(row);
}
