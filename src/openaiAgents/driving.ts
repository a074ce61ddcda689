// What logbookRunAgent shares with the tools of the run it drives: that the SDK asks their approvals, and their calls.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunApi } from 'agent-logbook';

/** A tool call a logbookAgentsTool journaled while a segment ran: its action's key and how the journal left it. */
export interface JournaledCall {
  readonly tool: string;
  readonly key: string;
  readonly status: 'committed' | 'failed';
}

export interface Driving {
  readonly run: RunApi;
  /** By the SDK's call id, the tool calls Logbook journaled in this segment (what the paused state is checked against). */
  readonly calls: Map<string, JournaledCall>;
}

const driving = new AsyncLocalStorage<Driving>();

/** Runs `fn` as a segment logbookRunAgent drives for `run`: its tools leave approval to the SDK's interruptions. */
export function drive<T>(run: RunApi, fn: (d: Driving) => Promise<T>): Promise<T> {
  const d: Driving = { run, calls: new Map() };
  return driving.run(d, () => fn(d));
}

/** The segment of `run` being driven here, if logbookRunAgent drives one (nested agents' runners included). */
export function drivenSegment(run: RunApi): Driving | undefined {
  const d = driving.getStore();
  return d?.run === run ? d : undefined;
}

/** How a logbookAgentsTool keys a call: so the gate of an interruption names the same business key as the tool. */
export type ToolKeyOf = (input: unknown, callId: string) => Promise<string>;

/** The tools logbookAgentsTool made, with their key: any other function tool is one Logbook does not journal. */
export const journaledTools = new WeakMap<object, ToolKeyOf>();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- agents of any context and output type, as the SDK's Runner takes them
export type AnyAgent = import('@openai/agents').Agent<any, any>;
