// The checker's vocabulary: a generated agent and schedule as plain JSON, so one case runs in-process or in a child.

export type Effect = 'read-only' | 'idempotent' | 'non-idempotent';

/**
 * How the provider behind an action misbehaves. `definite`: it refuses every request (a DefiniteFailure, before the
 * effect). `transient-before`: the first request of a call fails before it is sent (an unclassified error: in doubt,
 * though nothing happened). `transient-after`: the first request of a call lands, then its answer is lost (a 502).
 * "First" is per action and n in the world of a run and its forks, so a fork meets the faults its origin met.
 */
export type Failure = 'none' | 'definite' | 'transient-before' | 'transient-after';

export interface ActionJ {
  readonly effect: Effect;
  readonly verify: boolean;
  readonly compensate: boolean;
  /** An approval gate, and what the schedule's person answers at it. */
  readonly approval: 'none' | 'approve' | 'reject';
  readonly fail: Failure;
}

/** What the script does with a call's outcome: uses its result, catches and ignores any error, or catches and reports it. */
export type Mode = 'use' | 'ignore' | 'catch';

export interface CallJ {
  /** Index into the agent's actions. */
  readonly action: number;
  /** Part of the key and args: two calls with the same action and n are the same effect. */
  readonly n: number;
  readonly mode: Mode;
}

export interface StepJ {
  /** A key of STEP_KINDS (steps.ts): how the step makes its calls; or `wait`: a run.waitFor of its own, no calls. */
  readonly kind: string;
  readonly calls: readonly CallJ[];
  /** A durable sleep (`run.sleep`) of this many ms before the step, named sleepName(j). */
  readonly sleepMs?: number;
  /** For a `wait`: which event it waits for (eventName). Two waits may wait for the same name: each takes one event. */
  readonly event?: number;
}

/** The event a `wait` step waits for. */
export function eventName(n: number): string {
  return `e${n}`;
}

/** The events the agent's runs wait for: its wait steps', and those its child steps' runs wait for. */
export function eventsWaitedFor(agent: AgentJ): string[] {
  return agent.steps.filter((s) => s.kind === 'wait' || (s.kind === 'child' && s.event !== undefined)).map((s) => eventName(s.event ?? 0));
}

/**
 * The data of the k-th event of a name (its dedupe id says the same): whoever sends it, the operator, an early send or
 * a race, sends the same, so a run takes the same events in the same order (first in, first out) on every schedule.
 */
export function eventOf(name: string, k: number): { readonly id: string; readonly data: { readonly name: string; readonly k: number } } {
  return { id: `${name}#${k}`, data: { name, k } };
}

/**
 * An input field's schema. `dollars`: a coerced number transformed to cents (applying it twice is wrong); `default`: a
 * string with a default (left out of the raw input); `coerce`: a number coerced from a string; `plain`: a number.
 */
export type FieldKind = 'plain' | 'dollars' | 'default' | 'coerce';

export interface AgentJ {
  readonly fields: readonly FieldKind[];
  readonly onFailure: 'stop' | 'compensate';
  readonly actions: readonly ActionJ[];
  readonly steps: readonly StepJ[];
  /**
   * The whole run is one LangGraph graph that runGraph drives (agent-logbook/langgraph), a node per step whose
   * executions are the run's steps; `nodes-raw-first` is its negative control (the first node's first effect is made
   * by the node itself, not through logbookDo).
   */
  readonly graph?: 'nodes' | 'nodes-raw-first';
}

/** One non-idempotent action with verify, called once in one step: the smallest run whose charge a crash can repeat. */
export function oneChargeAgent(fields: readonly FieldKind[] = []): AgentJ {
  return {
    fields,
    onFailure: 'stop',
    actions: [{ effect: 'non-idempotent', verify: true, compensate: false, approval: 'none', fail: 'none' }],
    steps: [{ kind: 'seq', calls: [{ action: 0, n: 0, mode: 'use' }] }],
  };
}

/**
 * A crash of the simulated process: at the n-th fault point the driver passes (runtime/faults.ts), or in the n-th
 * call it makes to a provider, before or after the effect lands.
 */
export type Crash = { readonly at: 'fault'; readonly n: number } | { readonly at: 'provider'; readonly n: number; readonly when: When };
export type When = 'before-effect' | 'after-effect';

/** One operation of a schedule: a key of OPERATIONS (operations.ts) and its parameters. */
export interface OpJ {
  readonly op: string;
  readonly [param: string]: unknown;
}

export interface ScheduleJ {
  /** The first operation starts the run; the rest follow in order; then the run is driven to its end. */
  readonly ops: readonly OpJ[];
  /** After the end: fork the finished run at this step (0-based) and drive the fork to its end. */
  readonly fork?: number;
  /**
   * A graph agent's time travel, after the end: a new run started from the finished run's thread at the checkpoint its
   * node step #travel (0-based, among its node steps) ran from, driven to its end; then `logbook fork` of that run at
   * its last node step (a fork of a fork), driven to its end.
   */
  readonly travel?: number;
}

export interface CaseJ {
  readonly agent: AgentJ;
  readonly schedule: ScheduleJ;
}

export function actionType(a: ActionJ, i: number): string {
  return `${a.effect === 'read-only' ? 'lookup' : a.effect === 'idempotent' ? 'reserve' : 'charge'}.${i}`;
}

export function stepName(j: number): string {
  return `s${j}`;
}

/** The name of the sleep before step j (its own step in the journal). */
export function sleepName(j: number): string {
  return `nap${j}`;
}

/** The case as a person reads it: the agent's script in words, then the schedule. */
export function describeCase(c: CaseJ, describeOp: (op: OpJ, agent: AgentJ) => string): string {
  const a = c.agent;
  const lines: string[] = [];
  lines.push(
    `agent: input fields ${a.fields.map((f, i) => `f${i}:${f}`).join(', ') || '(none)'}; onFailure ${a.onFailure}${a.graph ? `; one LangGraph graph driven by runGraph, a node per step${a.graph === 'nodes-raw-first' ? ' (the first node makes its first effect itself)' : ''}` : ''}`,
  );
  a.actions.forEach((x, i) => {
    const traits = [
      x.effect,
      x.verify ? 'verify' : '',
      x.compensate ? 'compensate' : '',
      x.approval !== 'none' ? `approval(${x.approval})` : '',
      x.fail !== 'none' ? `fails:${x.fail}` : '',
    ].filter(Boolean);
    lines.push(`  action ${actionType(x, i)}: ${traits.join(', ')}`);
  });
  a.steps.forEach((s, j) => {
    if (s.kind === 'wait') {
      lines.push(`  step ${stepName(j)}: run.waitFor("${eventName(s.event ?? 0)}")`);
      return;
    }
    const calls = s.calls.map(
      (k) => `${actionType(a.actions[k.action] ?? ({ effect: 'read-only' } as ActionJ), k.action)}(n=${k.n}${k.mode !== 'use' ? `, ${k.mode}` : ''})`,
    );
    if (s.sleepMs !== undefined) lines.push(`  sleep ${sleepName(j)}: run.sleep of ${s.sleepMs} ms`);
    lines.push(`  step ${stepName(j)} [${s.kind}]: ${calls.join(', ') || '(no calls)'}`);
  });
  lines.push('schedule:');
  c.schedule.ops.forEach((op, i) => lines.push(`  ${i + 1}. ${describeOp(op, a)}`));
  lines.push(`  ${c.schedule.ops.length + 1}. drive the run to its end (resume, approve, decide from the provider's record, send the event it waits for)`);
  if (c.schedule.fork !== undefined)
    lines.push(`  ${c.schedule.ops.length + 2}. fork the finished run at step #${c.schedule.fork + 1} (logbook fork) and drive the fork to its end`);
  if (c.schedule.travel !== undefined)
    lines.push(
      `  then time travel: a new run from the finished run's thread at the checkpoint its node step #${c.schedule.travel + 1} ran from (runGraph's config), driven to its end, and a logbook fork of it at its last node step`,
    );
  return lines.join('\n');
}

export function describeCrash(c: Crash | undefined): string {
  if (!c) return '';
  return c.at === 'fault' ? `, killed at its fault point #${c.n + 1}` : `, killed in its provider call #${c.n + 1} ${c.when}`;
}
