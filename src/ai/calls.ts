// The journaled model call: the actions it is recorded as, the drift check, and the savings a replay reports.

import { AsyncLocalStorage } from 'node:async_hooks';
import { ErrorCodes, LogbookError, defineAction, type SourceLocation, type StandardSchema } from 'agent-logbook';
import { diffCalls, type ModelCallArgs } from './fingerprint';
import type { AiRunState, CallPlace, PriceTable } from './attemptState';

/** What the model does when a journaled call no longer matches: stop (default), or call it again from there on. */
export type DriftPolicy = 'fail' | 'rerun';

export interface ModelOptions {
  /** Default 'fail': the run stops before any new effect, with a diff. 'rerun': this call and later ones are made again. */
  readonly onDrift?: DriftPolicy;
  /** Prices per million tokens by model id, to report the money a replay saved. */
  readonly prices?: PriceTable;
  /** Say in a line for each call answered from the journal (default true): on stderr from the CLI, in the debugger's
   *  console under the debugger. */
  readonly reportReplays?: boolean;
  /** Send each call's idempotency key (`<run id>:model:<step>.<call>`) in this request header, for gateways that
   *  answer a repeated key from their cache: then a call re-made after a crash in flight is not paid twice. */
  readonly keyHeader?: string;
  /** Tools offered to this model that Logbook need not journal (client-side tools without execute). Any other tool a
   *  call offers that logbookTools or logbookMcpTools did not wrap is warned about once per run attempt: its execute
   *  would run again on every resume. */
  readonly unjournaledTools?: readonly string[];
}

const job = new AsyncLocalStorage<(args: ModelCallArgs) => Promise<unknown>>();

/**
 * A model call's args, checked as a schema of `{ call: string, model: string, params: object }` would, without a
 * copy: logbookModel builds them itself for every call (a whole prompt, in `params`), and a zod object and record
 * parse would rebuild that on each (a quarter of what journaling a call costs, profiled).
 */
const callArgs: StandardSchema<ModelCallArgs> = {
  '~standard': {
    version: 1,
    vendor: 'agent-logbook',
    validate: (v: unknown) =>
      isCallArgs(v) ? { value: v } : { issues: [{ message: 'a model call is journaled with { call: string, model: string, params: an object }' }] },
  },
};

function isCallArgs(v: unknown): v is ModelCallArgs {
  if (typeof v !== 'object' || v === null) return false;
  const { call, model, params } = v as Record<string, unknown>;
  return typeof call === 'string' && typeof model === 'string' && typeof params === 'object' && params !== null && !Array.isArray(params);
}

function runJob(args: ModelCallArgs): Promise<unknown> {
  const fn = job.getStore();
  if (!fn) {
    throw new LogbookError(
      ErrorCodes.INVALID_DEFINITION,
      'A model call action ran outside the model it belongs to (it was called with run.do directly).',
      'Let logbookModel(run, model) make model calls; do not pass its actions to run.do.',
    );
  }
  return fn(args);
}

/** A model call's action: idempotent (re-running it buys a new answer but changes nothing outside), keyed by its place. */
const modelCallAction = (type: 'model.generate' | 'model.stream', description: string) =>
  defineAction({ type, version: 1, effect: 'idempotent', started: 'with-result', args: callArgs, key: (a) => a.call, execute: runJob, description });

/** A doGenerate call. */
export const generateAction = modelCallAction('model.generate', 'A language model call (doGenerate), journaled by logbookModel.');

/** A doStream call: its parts are journaled as a list; `finish` reaches the caller once they are durable. */
export const streamAction = modelCallAction('model.stream', 'A streamed language model call (doStream), journaled by logbookModel.');

const MAX_REVISIONS = 50;

/**
 * Runs `fn` as the journaled call at `place`, or returns its journaled result. A journaled call at that place with
 * other args is drift: a readable diff and a stop, or with 'rerun' the call is made again under the next revision of
 * the key (`model:3.2~1`), which a later resume finds again.
 */
export async function journaledCall(
  state: AiRunState,
  action: typeof generateAction,
  place: CallPlace,
  args: Omit<ModelCallArgs, 'call'>,
  policy: DriftPolicy,
  fn: (args: ModelCallArgs) => Promise<unknown>,
  at: SourceLocation | undefined,
): Promise<{ value: unknown; call: string }> {
  for (let rev = 0; ; rev++) {
    const call = rev === 0 ? place.key : `${place.key}~${rev}`;
    const full: ModelCallArgs = { call, ...args };
    try {
      return { value: await job.run(fn, () => state.run.do(action, full, { at })), call };
    } catch (err) {
      const before = conflicting(err, call);
      if (!before) throw err;
      if (policy === 'rerun' && rev < MAX_REVISIONS) continue;
      throw driftError(state, place, call, before, full, action.type);
    }
  }
}

function conflicting(err: unknown, call: string): { args: ModelCallArgs; type: string } | undefined {
  if (!(err instanceof LogbookError) || err.code !== ErrorCodes.KEY_CONFLICT || err.details.id !== call) return undefined;
  const before = err.details.before;
  if (typeof before !== 'string') return undefined;
  try {
    const parsed = callArgs['~standard'].validate(JSON.parse(before));
    if (parsed instanceof Promise || parsed.issues) return undefined;
    return { args: parsed.value, type: typeof err.details.beforeType === 'string' ? err.details.beforeType : '' };
  } catch {
    return undefined;
  }
}

function driftError(
  state: AiRunState,
  place: CallPlace,
  call: string,
  before: { args: ModelCallArgs; type: string },
  now: ModelCallArgs,
  type: string,
): LogbookError {
  const lines = diffCalls(before.args, now);
  if (before.type && before.type !== type) lines.unshift(`call: ${before.type} → ${type}`);
  if (lines.length === 0) lines.push('(the args differ only in values that print the same)');
  return new LogbookError(
    ErrorCodes.MODEL_DRIFT,
    `Model call ${call} (call ${place.index + 1} of step "${place.step.name}") no longer matches the journal of run ${state.run.id}: what the script asks the model changed since the call was recorded. Nothing new was executed.\n${lines.map((l) => `    ${l}`).join('\n')}\n`,
    `Restore what changed; or pass { onDrift: 'rerun' } to logbookModel to call the model again from this call on (tools with a business key still run once); or start a new run.`,
    { call, step: place.step.index, changes: lines },
  );
}

interface UsageLike {
  inputTokens?: { total?: number | undefined };
  outputTokens?: { total?: number | undefined };
}

/** Counts a call answered from the journal: its tokens, and their price when the table names the model. */
export function countReplay(
  state: AiRunState,
  call: string,
  model: { provider: string; modelId: string },
  usage: UsageLike | undefined,
  options: ModelOptions,
): void {
  const input = usage?.inputTokens?.total ?? 0;
  const output = usage?.outputTokens?.total ?? 0;
  const price = options.prices?.[`${model.provider}/${model.modelId}`] ?? options.prices?.[model.modelId];
  const cost = price ? (input * price.inputPerMillion + output * price.outputPerMillion) / 1e6 : 0;
  state.saved.calls++;
  state.saved.inputTokens += input;
  state.saved.outputTokens += output;
  state.saved.cost += cost;
  if (options.reportReplays !== false) {
    const money = price ? `, ${cost.toFixed(4)} saved` : '';
    const line = `logbook/ai: ${call} (${model.modelId}) answered from the journal: ${input + output} tokens not bought again${money}`;
    // Information, not an error: the run's own log says it in the voice of where it runs (the debugger's console).
    if (typeof state.run.log === 'function') state.run.log(line);
    else process.stderr.write(`${line}\n`);
  }
}
