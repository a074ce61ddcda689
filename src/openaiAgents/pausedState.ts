// The SDK's paused run (RunState) as the journal keeps it: without the run context, secrets masked by value, hashed; and
// read back checked, so a damaged one is LB_JOURNAL_INVALID and never runs.

import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { RunContext, RunState, Usage, type RunToolApprovalItem } from '@openai/agents';
import { ErrorCodes, LogbookError } from 'agent-logbook';
import { SecretMask, isSecretFieldName } from '../shared/secrets';
import type { AnyAgent, JournaledCall } from './driving';

/** One interruption of a paused run: the tool call waiting for a person, and the Logbook gate that asks them. */
const Interruption = z.object({
  agent: z.string(),
  tool: z.string(),
  callId: z.string(),
  input: z.unknown(),
  /** The gate's key (`approval:…`), and the tool's own action key it is named by, for a logbookAgentsTool's call. */
  gate: z.string(),
  of: z.optional(z.string()),
});
export type Interruption = z.infer<typeof Interruption>;

/**
 * A tool call as the paused state holds it, beside the journal's word on it: what the SDK's schema 1.22 fields say
 * (`completedToolInvocations` → completed, its interruptions → awaiting approval, `ambiguousToolInvocationCallIds` →
 * unsure) and, for a call a logbookAgentsTool made in this segment, its action's key and status.
 */
const Call = z.object({
  agent: z.string(),
  callId: z.string(),
  tool: z.string(),
  sdk: z.enum(['completed', 'awaiting approval', 'unsure']),
  journal: z.nullable(z.object({ key: z.string(), status: z.enum(['committed', 'failed']) })),
});
export type Call = z.infer<typeof Call>;

/** What a segment that paused journals as its step's result. */
export const PausedRun = z.object({
  /** The SDK's `$schemaVersion` of `state`. */
  schemaVersion: z.string(),
  /** sha256 of `state`: a state damaged in the journal is refused before the SDK reads it. */
  sha256: z.string(),
  /** `RunState.toString()` with the run context left out and secrets masked. */
  state: z.string(),
  /** The segment's step (from 1): the gates of calls without a Logbook key are named by it. */
  step: z.number(),
  interruptions: z.array(Interruption),
  /** Which journaled model call chose each waiting tool call (`model:1.2`), so its default key names it on resume. */
  owners: z.record(z.string(), z.string()),
  calls: z.array(Call),
});
export type PausedRun = z.infer<typeof PausedRun>;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The string values of the run context's fields named like secrets (`apiKey`, `token`): masked by value like the environment's. */
export function contextSecrets(context: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (typeof v !== 'object' || v === null || depth > 8) return;
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === 'string' && isSecretFieldName(k)) out.push(x);
      else walk(x, depth + 1);
    }
  };
  walk(context, 0);
  return out;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The run context is the script's live object, given again on every resume: it never goes to the journal. Nested
 * agent-tool runs waiting inside (`pendingAgentToolRuns`) carry it too, each as a serialised state of its own.
 */
function withoutContext(state: Json): Json {
  const context = isObject(state.context) ? { ...state.context, context: {} } : state.context;
  const pending = isObject(state.pendingAgentToolRuns)
    ? Object.fromEntries(
        Object.entries(state.pendingAgentToolRuns).map(([k, v]) => {
          if (typeof v !== 'string') return [k, v];
          try {
            const inner: unknown = JSON.parse(v);
            return [k, isObject(inner) ? JSON.stringify(withoutContext(inner)) : v];
          } catch {
            return [k, v];
          }
        }),
      )
    : state.pendingAgentToolRuns;
  return { ...state, context, ...(pending !== undefined ? { pendingAgentToolRuns: pending } : {}) };
}

/** The call id of an interruption's tool call (a function call's, or a hosted MCP approval request's id). */
export function callIdOf(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { callId?: unknown; id?: unknown; providerData?: { id?: unknown } };
  const id = raw.callId ?? raw.providerData?.id ?? raw.id;
  return typeof id === 'string' ? id : '';
}

function argsOf(item: RunToolApprovalItem): unknown {
  const text = item.arguments;
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The tool a fingerprint names (the SDK's `["bare","refund"]`), as a person reads it. */
function toolOfFingerprint(fingerprint: string): string {
  try {
    const name = (JSON.parse(fingerprint) as { toolName?: unknown }).toolName;
    const parts = typeof name === 'string' ? (JSON.parse(name) as unknown) : undefined;
    return Array.isArray(parts) ? String(parts[parts.length - 1]) : String(name);
  } catch {
    return '?';
  }
}

function callsOf(state: Json, interruptions: readonly Interruption[], journaled: ReadonlyMap<string, JournaledCall>): Call[] {
  const journal = (callId: string): Call['journal'] => {
    const j = journaled.get(callId);
    return j ? { key: j.key, status: j.status } : null;
  };
  const out: Call[] = [];
  for (const r of Array.isArray(state.completedToolInvocations) ? (state.completedToolInvocations as unknown[]) : []) {
    if (!isObject(r) || !isObject(r.invocations)) continue;
    for (const [callId, fp] of Object.entries(r.invocations))
      out.push({ agent: String(r.agentIdentity), callId, tool: toolOfFingerprint(String(fp)), sdk: 'completed', journal: journal(callId) });
  }
  for (const i of interruptions) out.push({ agent: i.agent, callId: i.callId, tool: i.tool, sdk: 'awaiting approval', journal: journal(i.callId) });
  for (const r of Array.isArray(state.ambiguousToolInvocationCallIds) ? (state.ambiguousToolInvocationCallIds as unknown[]) : []) {
    if (!isObject(r) || !Array.isArray(r.callIds)) continue;
    for (const callId of r.callIds as unknown[])
      out.push({ agent: String(r.agentIdentity), callId: String(callId), tool: '?', sdk: 'unsure', journal: journal(String(callId)) });
  }
  return out;
}

export interface KeepInput {
  readonly agent: AnyAgent;
  readonly state: RunState<unknown, AnyAgent>;
  readonly context: unknown;
  readonly step: number;
  readonly gateOf: (item: RunToolApprovalItem, input: unknown) => Promise<{ readonly key: string; readonly of?: string }>;
  readonly ownerOf: (callId: string) => string | undefined;
  readonly journaled: ReadonlyMap<string, JournaledCall>;
}

/**
 * The paused run as the journal keeps it: `state.toString()` (never the tracing API key) without the run context,
 * with every secret of the environment, and every secret-named string of the run context, masked by value. It is
 * read back before it is kept: a state the SDK could not resume from is refused now, while the script can say why.
 */
export async function keepPaused(k: KeepInput): Promise<PausedRun> {
  const raw = withoutContext(k.state.toJSON());
  const mask = SecretMask.ofEnv(process.env, contextSecrets(k.context));
  const masked = mask.deep(raw);
  const text = JSON.stringify(masked);
  try {
    await RunState.fromStringWithContext(k.agent, text, new RunContext(k.context), { contextStrategy: 'merge' });
  } catch (err) {
    const plain = JSON.stringify(raw) !== text;
    throw new LogbookError(
      ErrorCodes.INVALID_ARGS,
      plain
        ? `The Agents SDK run paused for approval, but its state cannot be kept: a secret is in it where the SDK checks it (a tool call's arguments or id), and the masked state no longer resumes (${errorText(err)}).`
        : `The Agents SDK run paused for approval, but the SDK cannot read back its own state (${errorText(err)}).`,
      plain
        ? 'Keep secrets out of what the model sees and says: read them inside the tool (process.env, the run context) instead of passing them through the conversation.'
        : 'Check that the agents given to logbookRunAgent are the ones the run uses (the SDK resolves the state against them).',
    );
  }
  const items = k.state.getInterruptions();
  const interruptions: Interruption[] = [];
  for (const item of items) {
    const gate = await k.gateOf(item, argsOf(item));
    interruptions.push({
      agent: item.agent.name,
      tool: item.name ?? item.toolName ?? item.rawItem.type,
      callId: callIdOf(item),
      input: mask.deep(argsOf(item)),
      gate: gate.key,
      ...(gate.of !== undefined ? { of: gate.of } : {}),
    });
  }
  const owners: Record<string, string> = {};
  for (const i of interruptions) {
    const o = k.ownerOf(i.callId);
    if (o !== undefined) owners[i.callId] = o;
  }
  return {
    schemaVersion: String(masked.$schemaVersion),
    sha256: sha256(text),
    state: text,
    step: k.step,
    interruptions,
    owners,
    calls: callsOf(masked, interruptions, k.journaled),
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface RestoreInput {
  readonly agent: AnyAgent;
  /** The step result that held it, as the journal gave it back. */
  readonly value: unknown;
  readonly context: unknown;
  readonly runId: string;
  /** The step that journaled it, for the messages. */
  readonly stepName: string;
}

function damaged(r: Pick<RestoreInput, 'runId' | 'stepName'>, what: string): LogbookError {
  return new LogbookError(
    ErrorCodes.JOURNAL_INVALID,
    `The paused Agents SDK run that step "${r.stepName}" of run ${r.runId} journaled is damaged (${what}): it was edited or corrupted after it was written. Nothing was run from it.`,
    `Restore the journal from a backup and resume; or start that part again in a new run: logbook fork ${r.runId} --step "${r.stepName}".`,
    { runId: r.runId, step: r.stepName },
  );
}

/** The paused run a step journaled, as the journal gave it back: its shape and its hash checked before anything reads it. */
export function checkPaused(r: Omit<RestoreInput, 'agent' | 'context'>): PausedRun {
  const parsed = PausedRun.safeParse(r.value);
  if (!parsed.success)
    throw damaged(r, `not the shape Logbook writes: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'} ${i.message}`).join('; ')}`);
  const paused = parsed.data;
  if (sha256(paused.state) !== paused.sha256) throw damaged(r, 'its sha256 does not match the state');
  return paused;
}

/** The paused run a step journaled, checked (shape, hash) and read back by the SDK with the live run context. */
export async function restorePaused(r: RestoreInput): Promise<{ paused: PausedRun; state: RunState<unknown, AnyAgent> }> {
  const paused = checkPaused(r);
  let state: RunState<unknown, AnyAgent>;
  const context = new RunContext(r.context);
  try {
    state = await RunState.fromStringWithContext(r.agent, paused.state, context, { contextStrategy: 'merge' });
  } catch (err) {
    // The bytes are the ones Logbook wrote (the hash says so): what changed is the script's agents.
    throw new LogbookError(
      ErrorCodes.NONDETERMINISM,
      `Run ${r.runId} paused in step "${r.stepName}" with agents the script no longer has: the Agents SDK cannot resume the state it kept then (${errorText(err)}). Nothing was run from it.`,
      `Give logbookRunAgent the agents as they were when the run paused (names, tools, handoffs), then resume; or start that part again in a new run: logbook fork ${r.runId} --step "${r.stepName}".`,
      { runId: r.runId, step: r.stepName },
    );
  }
  // The SDK leaves a caller's context its own usage: the run's so far is the state's.
  const usage = (JSON.parse(paused.state) as { context?: { usage?: unknown } }).context?.usage;
  if (isObject(usage)) context.usage = Usage.fromJSON(usage);
  const ids = state.getInterruptions().map(callIdOf);
  const kept = paused.interruptions.map((i) => i.callId);
  if (ids.join('\n') !== kept.join('\n')) throw damaged(r, `its interruptions (${kept.join(', ')}) are not the state's (${ids.join(', ')})`);
  return { paused, state };
}
