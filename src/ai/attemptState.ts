// What the AI integration keeps per run attempt: call positions per step, tool-call owners, replay savings, halts.

import { ErrorCodes, LogbookError, isInDoubtError, type RunApi } from 'agent-logbook';

/** Token prices per million, by model id (or provider/model id), to report the money a replay saved. */
export type PriceTable = Readonly<Record<string, { readonly inputPerMillion: number; readonly outputPerMillion: number }>>;

export interface ReplaySavings {
  /** Model calls answered from the journal instead of the provider. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** In the price table's currency; 0 when no price table names the model. */
  cost: number;
}

interface StepCalls {
  next: number;
  /** Calls that failed in this attempt: the SDK's retry of the same params takes the same place again. */
  readonly failed: Array<{ readonly index: number; readonly fingerprint: string }>;
}

export interface CallPlace {
  readonly key: string;
  readonly step: { readonly index: number; readonly name: string };
  readonly index: number;
  readonly fingerprint: string;
}

export class AiRunState {
  private readonly steps = new Map<number, StepCalls>();
  private readonly owners = new Map<string, string>();
  readonly saved: ReplaySavings = { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
  /** The names of the tools this attempt made durable (logbookTools, logbookMcpTools): any other a model call offers
   *  is not journaled, and its execute, if it has one, runs again on every resume. */
  private readonly journaled = new Set<string>();
  private readonly warnedTools = new Set<string>();
  /** A Logbook error a tool raised that the SDK turned into a tool result: the next model call rethrows it. */
  halt: Error | undefined;

  constructor(readonly run: RunApi) {}

  /** The call's place in the run: step and call index within the step, in the order calls start. */
  place(fingerprint: string, what: string): CallPlace {
    const step = this.run.currentStep();
    if (!step) {
      throw new LogbookError(
        ErrorCodes.ACTION_OUTSIDE_STEP,
        `${what} was called outside a step of run ${this.run.id}: a journaled model call needs a step to belong to.`,
        'Call generateText / streamText inside a step: await run.step("answer", () => generateText({ model, … })).',
      );
    }
    let calls = this.steps.get(step.index);
    if (!calls) this.steps.set(step.index, (calls = { next: 0, failed: [] }));
    const retry = calls.failed.findIndex((f) => f.fingerprint === fingerprint);
    const index = retry >= 0 ? (calls.failed.splice(retry, 1)[0]?.index ?? calls.next++) : calls.next++;
    return { key: `model:${step.index + 1}.${index + 1}`, step, index, fingerprint };
  }

  failed(place: CallPlace): void {
    this.steps.get(place.step.index)?.failed.push({ index: place.index, fingerprint: place.fingerprint });
  }

  /** Remembers which model call chose each tool call, so the tool's default key names it. */
  ownTools(modelKey: string, content: ReadonlyArray<{ type: string; toolCallId?: string }>): void {
    for (const c of content) if (c.type === 'tool-call' && c.toolCallId) this.owners.set(c.toolCallId, modelKey);
  }

  ownerOf(toolCallId: string): string | undefined {
    return this.owners.get(toolCallId);
  }

  journals(toolName: string): void {
    this.journaled.add(toolName);
  }

  /** Warns, once per tool name in this attempt, of each tool a model call offers that no Logbook wrapper journals. */
  warnUnjournaled(
    offered: ReadonlyArray<{ readonly type: string; readonly name: string }> | undefined,
    call: string,
    known: readonly string[] | undefined,
  ): void {
    for (const t of offered ?? []) {
      // Provider tools (web search, code execution) run at the provider, not in this process: nothing to repeat here.
      if (t.type !== 'function' || this.journaled.has(t.name) || known?.includes(t.name) || this.warnedTools.has(t.name)) continue;
      this.warnedTools.add(t.name);
      this.run.log(
        `warning: the model call ${call} of run ${this.run.id} offers the tool ${JSON.stringify(t.name)}, which Logbook does not journal: if it has an execute, that runs again on every resume. Wrap it: logbookTools(run, { ${t.name}: { tool, effect: 'read-only' | 'idempotent' | 'non-idempotent' } }); if it has no execute (a client-side tool), name it in logbookModel's unjournaledTools option.`,
      );
    }
  }

  throwIfHalted(): void {
    if (this.halt !== undefined) throw this.halt;
  }
}

const states = new WeakMap<RunApi, AiRunState>();

export function stateOf(run: RunApi): AiRunState {
  if (typeof run !== 'object' || run === null || typeof run.currentStep !== 'function') {
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      'The first argument is not the run object of an agent.',
      "Pass the `run` your agent's run(run, input) received, e.g. logbookModel(run, model).",
    );
  }
  let s = states.get(run);
  if (!s) states.set(run, (s = new AiRunState(run)));
  return s;
}

/** Tokens and money that replaying model calls from the journal saved in this attempt of the run. */
export function replaySavings(run: RunApi): Readonly<ReplaySavings> {
  return { ...stateOf(run).saved };
}

/**
 * Errors that must stop the run rather than be shown to the model as a failed tool: suspension (approval, decision),
 * lost lease, journal errors. A rejected approval and a definite failure are answers the model may act on.
 */
export function isControlError(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  // A tool whose effect may have happened is not a failed tool: told so, the model would act as if it had not.
  if (isInDoubtError(err)) return true;
  if (err.name === 'RunSuspended') return true;
  if (!(err instanceof LogbookError)) return false;
  return err.code !== ErrorCodes.APPROVAL_REJECTED && err.code !== ErrorCodes.ACTION_FAILED;
}
