// logbookRunAgent: an Agents SDK run driven as Logbook steps; its interruptions kept as the SDK's RunState and answered
// by `logbook approve` / `logbook reject` (CLI, sidebar, debugger).
//
// Each segment of the SDK's run (up to its end or to an interruption) is one step. A segment that stops at
// interruptions journals, as its step's result, the SDK's serialised RunState (pausedState.ts); the next step waits at a
// Logbook gate per interruption; the step after restores the state with RunState.fromStringWithContext, approves or
// rejects each call as the person said, and runs on. Across the pause nothing is replayed: the completed step gives the
// state back. Inside a segment a crash resumes as any agent-logbook/openai-agents step does: the step runs again, its
// model calls answered from the journal and its tools' committed calls returning their journaled results.

import { Agent, type AgentInputItem, type RunResult, type RunState, type RunToolApprovalItem, type Runner } from '@openai/agents';
import * as z from 'zod/mini';
import { ErrorCodes, LogbookError, callSite, defineAction, type RunApi, type SourceLocation } from 'agent-logbook';
import { encode, decode, stateOf } from './shared';
import { drive, journaledTools, type AnyAgent } from './driving';
import { callIdOf, checkPaused, keepPaused, restorePaused, type PausedRun } from './pausedState';

const GateArgs = z.object({
  agent: z.string(),
  tool: z.string(),
  input: z.unknown(),
  /** The key of the tool's own action (a logbookAgentsTool's): the gate is `approval:<it>`. */
  of: z.optional(z.string()),
  /** Else the segment's step and the SDK's call id name it. */
  step: z.optional(z.number()),
  callId: z.optional(z.string()),
});

/** The gate an interruption waits at: approved, the SDK runs the tool call; rejected, it tells the model no. */
export const agentsApproval = defineAction({
  type: 'agents.approval',
  version: 1,
  // Its only effect is to hear the person's answer, which the journal keeps.
  effect: 'idempotent',
  approval: true,
  args: GateArgs,
  key: (a, run) => (a.of !== undefined ? `approval:${a.of}` : `approval:${run.id}:${a.step ?? 0}:${a.callId ?? ''}`),
  description: 'An Agents SDK tool call that needs approval (needsApproval): logbook approve lets the SDK run it; logbook reject --note tells the model no.',
  execute: () => ({ approved: true }),
});

export interface RunAgentOptions<TContext = unknown> {
  /** The steps' name: the first segment's, then `<name>: approval` and `<name>: resume <n>`. Default `agent <agent name>`. */
  readonly name?: string;
  /** The SDK's run context: given live to every segment, resumed ones included, and never journaled. */
  readonly context?: TContext;
  readonly maxTurns?: number;
  /** Run each segment streamed (the journaled model's stream events pass as they come); default false. */
  readonly stream?: boolean;
}

export interface AgentRunOutcome {
  /** The last agent's final output, as the journal holds it (JSON). */
  readonly finalOutput: unknown;
  readonly lastAgent: string | undefined;
  /** How many times the run paused at interruptions before it ended. */
  readonly pauses: number;
}

type Answer = { readonly approved: true } | { readonly approved: false; readonly reason?: string };
const Done = z.object({ finalOutput: z.unknown(), lastAgent: z.optional(z.string()) });
const Segment = z.union([z.object({ done: Done }), z.object({ paused: z.unknown() })]);

/** The function tools of the agents reachable from `agent` (its tools, its handoffs' agents) that Logbook does not journal. */
function unjournaled(agent: AnyAgent, seen = new Set<AnyAgent>()): Array<{ agent: string; tool: string; approval: boolean }> {
  if (seen.has(agent)) return [];
  seen.add(agent);
  const out: Array<{ agent: string; tool: string; approval: boolean }> = [];
  for (const t of agent.tools) {
    // An agent used as a tool (agent.asTool(), which has `on`) is journaled through its own model calls and tools.
    if (t.type !== 'function' || journaledTools.has(t) || typeof (t as { on?: unknown }).on === 'function') continue;
    const approval = (t as { needsApproval?: unknown }).needsApproval;
    out.push({ agent: agent.name, tool: t.name, approval: approval !== undefined && approval !== false });
  }
  for (const h of agent.handoffs) out.push(...unjournaled(h instanceof Agent ? h : h.agent, seen));
  return out;
}

const warned = new WeakMap<RunApi, Set<string>>();

/** Warns, once per tool per run attempt, of each tool whose execute Logbook does not journal: it runs again on resume. */
function warnUnjournaled(run: RunApi, agent: AnyAgent): void {
  let told = warned.get(run);
  if (!told) warned.set(run, (told = new Set()));
  for (const t of unjournaled(agent)) {
    if (told.has(t.tool)) continue;
    told.add(t.tool);
    run.log(
      `warning: the tool ${JSON.stringify(t.tool)} of agent ${JSON.stringify(t.agent)} in run ${run.id} is not journaled by Logbook: its execute runs again if the run resumes after it ran${
        t.approval ? ' (its needsApproval is: the run waits for `logbook approve`, but the effect itself is not recorded)' : ''
      }. Make it with logbookAgentsTool(run, { name, description, parameters, effect, execute }).`,
    );
  }
}

/** The Logbook gate of an interruption: `approval:<the tool's key>` for a logbookAgentsTool, else named by step and call. */
async function gateArgs(item: RunToolApprovalItem, input: unknown, step: number): Promise<z.infer<typeof GateArgs>> {
  const tool = item.agent.tools.find((t) => t.type === 'function' && t.name === item.name);
  const keyOf = tool ? journaledTools.get(tool) : undefined;
  const base = { agent: item.agent.name, tool: item.name ?? item.toolName ?? item.rawItem.type, input };
  if (keyOf) {
    try {
      return { ...base, of: await keyOf(input, callIdOf(item)) };
    } catch {
      // Arguments its key cannot take (the SDK will refuse them too): named by the call instead.
    }
  }
  return { ...base, step, callId: callIdOf(item) };
}

/** Asks each interruption's gate, in order: a gate that waits stops the run there (`awaiting-approval`). */
async function askAll(run: RunApi, paused: PausedRun, at: SourceLocation | undefined): Promise<Record<string, Answer>> {
  const out: Record<string, Answer> = {};
  for (const i of paused.interruptions) {
    try {
      await run.do(
        agentsApproval,
        {
          agent: i.agent,
          tool: i.tool,
          input: i.input,
          ...(i.of !== undefined ? { of: i.of } : { step: paused.step, callId: i.callId }),
        },
        { at },
      );
      out[i.callId] = { approved: true };
    } catch (err) {
      if (!(err instanceof LogbookError) || err.code !== ErrorCodes.APPROVAL_REJECTED) throw err;
      const reason = err.details.reason;
      out[i.callId] = typeof reason === 'string' && reason ? { approved: false, reason } : { approved: false };
    }
  }
  return out;
}

function journalInvalid(run: RunApi, stepName: string, what: string): LogbookError {
  return new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `Step "${stepName}" of run ${run.id} holds ${what}, not what logbookRunAgent journals: it was edited or corrupted after it was written. Nothing was run from it.`,
    `Restore the journal from a backup and resume; or start that part again in a new run: logbook fork ${run.id} --step "${stepName}".`,
    { runId: run.id, step: stepName },
  );
}

type SdkRunResult = Pick<RunResult<unknown, AnyAgent>, 'interruptions' | 'state' | 'finalOutput' | 'lastAgent'>;

async function segment(
  runner: Runner,
  agent: AnyAgent,
  input: string | AgentInputItem[] | RunState<unknown, AnyAgent>,
  o: RunAgentOptions,
): Promise<SdkRunResult> {
  const common = {
    ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
    ...(typeof input === 'object' && !Array.isArray(input) ? {} : { context: o.context }),
  };
  if (!o.stream) return runner.run(agent, input, common);
  const s = await runner.run(agent, input, { ...common, stream: true });
  for await (const _event of s) {
    // Events pass through the journaled model as they come; the segment's result is what the run ends with.
  }
  await s.completed;
  return s;
}

/**
 * Runs `agent` on `input` with `runner` as steps of `run`, to its end, and returns its final output. Call it in the
 * agent's `run(run, input)`, outside any step (it makes its own). A tool that needs approval (the SDK's needsApproval,
 * a logbookAgentsTool's or a plain `tool()`'s) pauses the SDK's run: its state goes to the journal, the run waits
 * `awaiting-approval` at a gate per call (`approval:<the tool's key>`), and once a person answers, the resumed run
 * restores the state and goes on. The runner's model provider should be logbookModelProvider(run, …).
 */
export async function logbookRunAgent<TContext = unknown>(
  run: RunApi,
  runner: Runner,
  agent: AnyAgent,
  input: string | AgentInputItem[],
  options: RunAgentOptions<TContext> = {},
): Promise<AgentRunOutcome> {
  const inside = run.currentStep();
  if (inside) {
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      `logbookRunAgent was called inside step ${JSON.stringify(inside.name)}; it makes steps of its own (the run, its approvals, its resumes), and steps do not nest.`,
      `Call it in run(run, input) outside any step: const out = await logbookRunAgent(run, runner, agent, input, { name: ${JSON.stringify(inside.name)} }).`,
    );
  }
  const top = agent;
  // The gates are shown at the user's call of logbookRunAgent.
  const at = callSite();
  const name = options.name ?? `agent ${top.name}`;
  const o = options as RunAgentOptions;
  warnUnjournaled(run, top);
  let paused: { value: unknown; stepName: string } | undefined;
  let answers: Record<string, Answer> | undefined;
  for (let round = 0; ; round++) {
    const stepName = round === 0 ? name : `${name}: resume ${round}`;
    const from = paused;
    const given = answers;
    const value: unknown = await run.step(stepName, () =>
      drive(run, async (d) => {
        const ai = stateOf(run);
        let result: SdkRunResult;
        if (!from) result = await segment(runner, top, input, o);
        else {
          const { paused: p, state } = await restorePaused({ agent: top, value: from.value, context: o.context, runId: run.id, stepName: from.stepName });
          for (const [callId, call] of Object.entries(p.owners)) ai.ownTools(call, [{ type: 'tool-call', toolCallId: callId }]);
          // What the journal said of the calls the state holds stays said: the next pause's summary names them too.
          for (const c of p.calls) if (c.journal) d.calls.set(c.callId, { tool: c.tool, ...c.journal });
          for (const item of state.getInterruptions()) {
            const a = given?.[callIdOf(item)];
            if (!a) throw journalInvalid(run, `${name}: approval`, `no answer for the tool call ${callIdOf(item)}`);
            if (a.approved) state.approve(item);
            else state.reject(item, a.reason ? { message: `A person rejected this call: ${a.reason}` } : {});
          }
          result = await segment(runner, top, state, o);
        }
        // A Logbook error a tool met (a doubt, a lost lease) that the SDK turned into an answer stops the run here.
        ai.throwIfHalted();
        if (result.interruptions.length === 0) {
          return { done: { finalOutput: encode(result.finalOutput), ...(result.lastAgent ? { lastAgent: result.lastAgent.name } : {}) } };
        }
        const step = (run.currentStep()?.index ?? 0) + 1;
        const kept = await keepPaused({
          agent: top,
          state: result.state,
          context: o.context,
          step,
          gateOf: async (item, args) => {
            const g = await gateArgs(item, args, step);
            return { key: agentsApproval.key(g, run), ...(g.of !== undefined ? { of: g.of } : {}) };
          },
          ownerOf: (callId) => ai.ownerOf(callId),
          journaled: d.calls,
        });
        return { paused: kept };
      }),
    );
    const seg = Segment.safeParse(value);
    if (!seg.success) throw journalInvalid(run, stepName, 'a value that is neither a finished nor a paused Agents SDK run');
    if ('done' in seg.data) return { finalOutput: decode(seg.data.done.finalOutput), lastAgent: seg.data.done.lastAgent, pauses: round };
    const pausedRun = checkPaused({ value: seg.data.paused, runId: run.id, stepName });
    paused = { value: pausedRun, stepName };
    answers = await run.step(`${name}: approval`, () => askAll(run, pausedRun, at));
  }
}
