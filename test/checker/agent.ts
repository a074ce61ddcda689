// Builds the checker's agent from its JSON spec: the same spec gives the same script in-process and in a child.

import { z } from 'zod';
import { DefiniteFailure, defineAction, defineAgent, type ActionDefinition, type AgentDefinition, type EffectContext, type RunApi } from 'agent-logbook';
import { actionType, eventName, sleepName, stepName, type ActionJ, type AgentJ, type FieldKind, type When } from './spec';
import { STEP_KINDS } from './steps';
import { graphAgentRun } from './graphStep';
import type { Sabotage, World } from './world';
import { CARRIED_RAW } from '../../src/runtime/store/rowOps';

/** The process a provider call runs in: the schedule may pause a call there (a race), or kill the process (it throws). */
export interface ProcPort {
  readonly name: string;
  point(when: When, call: { readonly type: string; readonly key: string }): Promise<void>;
  /**
   * Between the lease check and the send (the window no process can close): a child process may be held here to be
   * frozen. Absent, nothing is awaited between the two, as the README asks.
   */
  window?(call: { readonly type: string; readonly key: string }): Promise<void> | undefined;
  /** How long this process's script sleeps for a sleep of `ms`: a schedule stretches it to catch the run asleep. */
  sleepMs?(ms: number): number;
}

export interface Host {
  readonly world: World;
  readonly proc: ProcPort;
}

export const AGENT_NAME = 'checker';

const EventData = z.object({ name: z.string(), k: z.number().int() });

const Args = z.object({ n: z.number().int(), amount: z.number(), tag: z.string() });
export type Args = z.infer<typeof Args>;

const FIELDS: Record<FieldKind, { readonly schema: () => z.ZodType; readonly raw: unknown }> = {
  plain: { schema: () => z.number(), raw: 7 },
  // Coerced, then converted: its output is not a valid input of the same meaning (1250 cents is not 1250 dollars).
  dollars: { schema: () => z.coerce.number().transform((d) => Math.round(d * 100)), raw: '12.5' },
  default: { schema: () => z.string().default('usd'), raw: undefined },
  coerce: { schema: () => z.coerce.number().int(), raw: '3' },
};

export function inputSchema(fields: readonly FieldKind[]): z.ZodType {
  return z.object(Object.fromEntries(fields.map((f, i) => [`f${i}`, FIELDS[f].schema()])));
}

/** The input a user passes: strings where the schema coerces, nothing where it has a default. */
export function rawInput(fields: readonly FieldKind[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    if (FIELDS[f].raw !== undefined) out[`f${i}`] = FIELDS[f].raw;
  });
  return out;
}

/**
 * The lease check the README advises right before the request, in both of its forms (even actions read ctx.signal,
 * odd ones call ctx.assertLease()), synchronous with the send that follows it. Returns when it was made.
 */
function leaseCheck(i: number, world: World, ctx: EffectContext): number {
  const checked = Date.now();
  if (world.sabotage.noLeaseCheck) return checked;
  if (i % 2 === 1) ctx.assertLease();
  else if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted: the lease was lost');
  return checked;
}

function checkerAction(a: ActionJ, i: number, host: Host): ActionDefinition {
  const { world, proc } = host;
  const type = actionType(a, i);
  const def = defineAction({
    type,
    version: 1,
    effect: a.effect,
    args: Args,
    key: (x, run) => `${type}:${run.id}:${x.n}`,
    // Results depend on the args only (never on the key, which names the run), so a fork's output can equal its origin's.
    execute: async (x, ctx): Promise<unknown> => {
      const key = ctx.idempotencyKey;
      world.called(key);
      await proc.point('before-effect', { type, key });
      if (a.fail === 'definite') throw new DefiniteFailure(`${type} was refused by its provider`);
      // Once per call of the script, not per run: a fork (same world, its own keys) meets the faults its origin met.
      if (a.fail === 'transient-before' && world.once(`before:${type}:${x.n}`)) throw new Error(`${type}: connection reset before the request was sent`);
      // Every other call's result is long enough that its event carries it after the writes, as it is (CARRIED_RAW), and
      // so is the checkpoint of the step that returns it: the schedules exercise that encoding through every kill.
      const result = { type, n: x.n, amount: x.amount, tag: x.tag, ...(x.n % 2 === 1 ? { receipt: `${type}/${x.n} `.repeat(CARRIED_RAW / 8) } : {}) };
      // As the README advises: a driver that lost its lease sends nothing (the request goes out right after this, with
      // nothing awaited in between, unless this call is the one a child process holds there to be frozen).
      const checked = leaseCheck(i, world, ctx);
      const held = proc.window?.({ type, key });
      if (held) await held;
      const got =
        a.effect === 'read-only' ? result : world.effect(type, key, a.effect === 'idempotent', result, { proc: proc.name, attempt: ctx.attempt, checked });
      await proc.point('after-effect', { type, key });
      if (a.fail === 'transient-after' && world.once(`after:${type}:${x.n}`)) throw new Error(`${type}: 502 Bad Gateway (the request went through)`);
      return got;
    },
    ...(a.verify ? { verify: (_x: Args, ctx: { idempotencyKey: string }) => world.verify(ctx.idempotencyKey) } : {}),
    ...(a.compensate
      ? {
          compensate: async (x: Args, _result: unknown, ctx: EffectContext) => {
            const key = ctx.idempotencyKey;
            await proc.point('before-effect', { type, key });
            const checked = leaseCheck(i, world, ctx);
            const held = proc.window?.({ type, key });
            if (held) await held;
            const got = world.undo(type, key, key.replace(/^compensate:/, ''), { undone: type, n: x.n }, { proc: proc.name, attempt: ctx.attempt, checked });
            await proc.point('after-effect', { type, key });
            return got;
          },
        }
      : {}),
    ...(a.approval !== 'none' ? { approval: true } : {}),
  });
  return def;
}

/** The sleep before step j: run.sleep, or (sabotaged, for the negative controls) a hand-rolled one. */
async function nap(run: RunApi, j: number, ms: number, sabotage: Sabotage): Promise<void> {
  if (!sabotage.sleepNoWait && !sabotage.sleepDeaf) return run.sleep(sleepName(j), ms);
  const { wakeAt } = await run.step(sleepName(j), () => ({ sleep: ms, wakeAt: Date.now() + ms }));
  if (sabotage.sleepDeaf) await new Promise((r) => setTimeout(r, Math.max(0, wakeAt - Date.now())));
}

/** A graph agent's time travel (runGraph's config): the thread and checkpoint it starts from. */
const From = z.object({ thread: z.string(), checkpoint: z.string() });

/** The agent a `child` step starts with run.child: one step making that step's calls, one after another. */
export const CHILD_AGENT_NAME = 'checker-child';

const children = new WeakMap<AgentDefinition, AgentDefinition>();

/** The child agent (run.child) built with `parent`: a host registers both (openJournal's agents). */
export function childAgentOf(parent: AgentDefinition): AgentDefinition {
  const c = children.get(parent);
  if (!c) throw new Error('checker: no child agent built with this agent');
  return c;
}

// `wait`: the event the child waits for (run.waitFor) before its calls, when its step says so (the parent then waits for it).
const ChildInput = z.object({ step: z.number().int(), base: z.number(), tag: z.string(), wait: z.number().int().optional() });

export function buildAgent(spec: AgentJ, host: Host): AgentDefinition {
  const defs = spec.actions.map((a, i) => checkerAction(a, i, host));
  const graph = spec.graph ? graphAgentRun(spec, defs) : undefined;
  const fields = inputSchema(spec.fields);
  // Defined when the script loads, beside the parent, so the CLI and a worker find it in the parent's script too.
  const child = defineAgent({
    name: CHILD_AGENT_NAME,
    input: ChildInput,
    async run(run, input) {
      const calls = spec.steps[input.step]?.calls ?? [];
      const args = (n: number): Args => ({ n, amount: input.base + n, tag: input.tag });
      const seq = STEP_KINDS.seq;
      if (!seq) throw new Error('checker: no step kind seq');
      if (input.wait === undefined) return run.step('c0', () => seq.run({ run, defs, actions: spec.actions, args, calls, index: input.step }));
      const event = (await run.waitFor(eventName(input.wait), { schema: EventData })) ?? null;
      return { event, calls: await run.step('c0', () => seq.run({ run, defs, actions: spec.actions, args, calls, index: input.step })) };
    },
  });
  const parent = defineAgent({
    name: AGENT_NAME,
    input: graph ? (fields as z.ZodObject).extend({ from: From.optional() }) : fields,
    onFailure: spec.onFailure,
    async run(run, parsed) {
      const { from, ...input } = parsed as Record<string, unknown> & { from?: z.infer<typeof From> };
      const values = Object.values(input);
      const base = values.filter((v): v is number => typeof v === 'number').reduce((s, v) => s + v, 0);
      const tag = values.filter((v): v is string => typeof v === 'string').join('+');
      const args = (n: number): Args => ({ n, amount: base + n, tag });
      if (graph) return { input, steps: await graph(run, args, from) };
      const steps: unknown[] = [];
      for (const [j, s] of spec.steps.entries()) {
        // A wait is a step of its own: what it returns (the event's data) is part of the output, as a step's result is.
        if (s.kind === 'wait') {
          steps.push((await run.waitFor(eventName(s.event ?? 0), { schema: EventData })) ?? null);
          continue;
        }
        if (s.kind === 'child') {
          // run.child is a step of its own: the child run makes this step's calls with its own keys.
          const id = host.world.sabotage.childIdPerAttempt ? { id: `${run.id}-c${j}-a${run.attempt}` } : undefined;
          steps.push(await run.child(child, { step: j, base, tag, ...(s.event !== undefined ? { wait: s.event } : {}) }, id));
          continue;
        }
        const kind = STEP_KINDS[s.kind];
        if (!kind) throw new Error(`checker: no step kind ${s.kind}`);
        if (s.sleepMs !== undefined) await nap(run, j, host.proc.sleepMs?.(s.sleepMs) ?? s.sleepMs, host.world.sabotage);
        const c = { run, defs, actions: spec.actions, args, calls: s.calls, index: j };
        steps.push(kind.ownSteps ? await kind.ownSteps(c, stepName(j)) : await run.step(stepName(j), () => kind.run(c)));
      }
      return { input, steps };
    },
  });
  children.set(parent, child);
  return parent;
}
