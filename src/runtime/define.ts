// defineAction / defineAgent: the user-facing declarations, checked eagerly so mistakes surface at load time.

import { ErrorCodes, LogbookError } from './errors';
import { requireWellFormed } from './wellFormed';
import { isStandardSchema, type InferInput, type InferOutput, type StandardSchema } from './schema';

export type Effect = 'read-only' | 'idempotent' | 'non-idempotent';
/** What an error from execute means: the outside system refused it, or it may have happened. */
export type ErrorClass = 'not-happened' | 'in-doubt';
export const EFFECTS: readonly Effect[] = ['read-only', 'idempotent', 'non-idempotent'];

export interface EffectContext {
  /** The action's id, derived from its meaning by `key`: pass it to the outside system so it can refuse a duplicate. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly attempt: number;
  /**
   * Aborted when this process loses the run's lease (another process took it over), or can no longer prove it by its
   * own monotonic clock (the last renewal the journal acknowledged, plus the TTL, minus a margin, has passed: after a
   * freeze, a paused VM, a long GC). Reading `aborted` checks the clock there and then. Pass it to fetch or an SDK so
   * in-flight work stops; the run writes nothing more and starts no new effect.
   */
  readonly signal: AbortSignal;
  /**
   * Throws LB_LEASE_LOST (a LogbookError) unless this process can prove its lease right now, by its own clock. Call it
   * synchronously right before the request that makes the effect, with nothing awaited in between. A pause between
   * this check and the send (a freeze, a GC) cannot be closed by any process: the idempotency key, sent to a provider
   * that refuses a repeated key, is the last line of defence.
   */
  assertLease(): void;
  /** The same check without throwing: false once the lease is lost or can no longer be proven (and then for good). */
  leaseValid(): boolean;
}

export interface ActionSpec<S extends StandardSchema, R> {
  readonly type: string;
  readonly version: number;
  readonly effect: Effect;
  readonly args: S;
  readonly key: (args: InferOutput<S>, run: RunInfo) => string;
  readonly execute: (args: InferOutput<S>, ctx: EffectContext) => R | Promise<R>;
  /** Asks the outside system whether the effect with this key happened: its result if so, `undefined` if not. */
  readonly verify?: (args: InferOutput<S>, ctx: EffectContext) => R | undefined | Promise<R | undefined>;
  /**
   * Says what an error thrown by execute means for a non-idempotent action: 'not-happened' when the outside system
   * refused it (journaled failed, executed again with the same key next time), 'in-doubt' when it may have happened
   * (a timeout, a reset connection, a 502: reconciled like a crash in flight). Unclassified errors are in doubt, unless
   * execute threw a DefiniteFailure.
   */
  readonly failure?: (err: unknown, args: InferOutput<S>) => ErrorClass;
  /** The inverse, run newest-first during compensation with its own idempotency key. */
  readonly compensate?: (args: InferOutput<S>, result: R, ctx: EffectContext) => unknown;
  /**
   * What `run.do` returns for an in-doubt action a person decided happened without giving its result
   * (`--decide <id>=happened` without `--result`): nothing recorded what execute returned. Default: `undefined`.
   * (agent-logbook/ai's tools answer the model with a note that says it happened and its result was not recorded.)
   */
  readonly unrecordedResult?: (args: InferOutput<S>) => R;
  /**
   * How long `verify` may take before the reconciliation gives up with LB_VERIFY_TIMEOUT (the action stays in doubt,
   * nothing is executed). Default 30 000 ms.
   */
  readonly verifyTimeoutMs?: number;
  /**
   * When an idempotent action's `started` is written. 'before-execute' (the default): in its own lazy commit before
   * execute runs. 'with-result': for an action whose only effect is its own answer (a model call, a quote), it is held
   * and written in the same durable commit as the result, or within 50 ms if execute takes longer (so the sidebar
   * still shows it in flight): one commit per call. Lost in a crash, the call is simply made again with its key.
   */
  readonly started?: 'before-execute' | 'with-result';
  /** Pause the run before executing until a person approves. */
  readonly approval?: boolean;
  readonly description?: string;
}

export interface ActionDefinition<S extends StandardSchema = StandardSchema, R = unknown> extends ActionSpec<S, R> {
  readonly [ACTION_BRAND]: true;
}

const ACTION_BRAND = Symbol.for('agent-logbook.action');
const AGENT_BRAND = Symbol.for('agent-logbook.agent');

/**
 * Every action type defined in this process, so compensation can find inverses by the journaled type.
 * Kept on globalThis so a second copy of the runtime (a script that bundled its own) shares it.
 */
const REGISTRY_KEY = Symbol.for('agent-logbook.registry');
const globals = globalThis as { [REGISTRY_KEY]?: Map<string, ActionDefinition> };
const registry = (globals[REGISTRY_KEY] ??= new Map<string, ActionDefinition>());

export function actionRegistry(): ReadonlyMap<string, ActionDefinition> {
  return registry;
}

const PREFIXES_KEY = Symbol.for('agent-logbook.run-time-type-prefixes');
const prefixGlobals = globalThis as { [PREFIXES_KEY]?: Set<string> };
const runTimePrefixes = (prefixGlobals[PREFIXES_KEY] ??= new Set<string>());

/**
 * Says that action types starting with `prefix` are defined while a run runs, not when its script loads (an
 * integration that makes one action per tool the model may call, `tool.<name>`). A `--crash-at` naming such a type
 * cannot be checked up front; one that is never reached is still reported when the run ends.
 */
export function declareRunTimeActionTypes(prefix: string): void {
  if (typeof prefix !== 'string' || prefix.length === 0)
    bad('declareRunTimeActionTypes needs a non-empty prefix.', 'Pass the prefix your action types share, e.g. "tool.".');
  runTimePrefixes.add(prefix);
}

export function runTimeActionTypePrefixes(): ReadonlySet<string> {
  return runTimePrefixes;
}

function bad(what: string, remedy: string): never {
  throw new LogbookError(ErrorCodes.INVALID_DEFINITION, what, remedy);
}

export function defineAction<S extends StandardSchema, R>(spec: ActionSpec<S, R>): ActionDefinition<S, R> {
  const where = `defineAction(${typeof spec?.type === 'string' ? JSON.stringify(spec.type) : '?'})`;
  if (typeof spec !== 'object' || spec === null)
    bad('defineAction was called without a definition object.', 'Pass { type, version, effect, args, key, execute }.');
  if (typeof spec.type !== 'string' || spec.type.length === 0)
    bad(`${where}: "type" must be a non-empty string.`, 'Name the action by what it does, e.g. "email.send".');
  requireWellFormed(spec.type, 'The type of an action');
  if (!Number.isInteger(spec.version) || spec.version < 1)
    bad(`${where}: "version" must be a positive integer.`, 'Start at version: 1 and bump it when the key format or meaning changes.');
  if (!EFFECTS.includes(spec.effect)) bad(`${where}: "effect" is ${JSON.stringify(spec.effect)}.`, `Use one of ${EFFECTS.map((e) => `"${e}"`).join(', ')}.`);
  if (!isStandardSchema(spec.args)) bad(`${where}: "args" is not a schema.`, 'Pass a zod schema, e.g. z.object({ to: z.string() }).');
  for (const fn of ['key', 'execute'] as const) {
    if (typeof spec[fn] !== 'function') bad(`${where}: "${fn}" must be a function.`, `Add ${fn}: (args, ...) => ...`);
  }
  for (const fn of ['verify', 'compensate', 'failure', 'unrecordedResult'] as const) {
    if (spec[fn] !== undefined && typeof spec[fn] !== 'function') bad(`${where}: "${fn}" must be a function when given.`, `Remove it or make it a function.`);
  }
  if (spec.verifyTimeoutMs !== undefined && !(Number.isInteger(spec.verifyTimeoutMs) && spec.verifyTimeoutMs > 0)) {
    bad(
      `${where}: "verifyTimeoutMs" is ${JSON.stringify(spec.verifyTimeoutMs)}.`,
      'Give a positive whole number of milliseconds, e.g. verifyTimeoutMs: 10_000, or leave it out for 30 s.',
    );
  }
  if (spec.started !== undefined && spec.started !== 'before-execute' && spec.started !== 'with-result') {
    bad(`${where}: "started" is ${JSON.stringify(spec.started)}.`, 'Use "before-execute" or "with-result", or leave it out.');
  }
  if (spec.started === 'with-result' && (spec.effect !== 'idempotent' || spec.approval === true)) {
    bad(
      `${where}: started: "with-result" is only for an idempotent action without approval; this one is ${spec.approval === true ? 'gated by approval' : spec.effect}.`,
      'Leave "started" out: a non-idempotent action\'s `started` must be durable before its effect, and an approved one is journaled when it waits.',
    );
  }
  const def = Object.freeze({ ...spec, [ACTION_BRAND]: true as const });
  registry.set(spec.type, def as unknown as ActionDefinition);
  return def;
}

export function isAction(v: unknown): v is ActionDefinition {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[ACTION_BRAND] === true;
}

/** What the outside world recorded, per action type: one idempotency key per effect it saw (repeats = duplicates). */
export type ProbeResult = Record<string, string[]>;

/**
 * One effect a probe reports: its idempotency key, or its key and the result the outside system gave for it. With
 * the result, a rehearsal that must decide an in-doubt action without verify "happened" gives that result too
 * (`--result`), as a person who looked the effect up would, so the script (or the model) sees what it saw uncrashed.
 */
export type ProbeEffect = string | { readonly key: string; readonly result?: unknown };

/** What a probe may return: per action type, one entry per effect the outside system saw. */
export type ProbeRecord = Record<string, ProbeEffect[]>;

export interface AgentSpec<S extends StandardSchema, O> {
  readonly name: string;
  readonly input: S;
  readonly run: (run: RunApi, input: InferOutput<S>) => Promise<O> | O;
  /** A declared policy: 'compensate' runs the inverses when the script fails. Default: leave it failed and resumable. */
  readonly onFailure?: 'stop' | 'compensate';
  /** Reads the providers' own records, for rehearsals: which keys each action type's outside system saw. */
  readonly probe?: () => ProbeRecord | Promise<ProbeRecord>;
}

export interface AgentDefinition<S extends StandardSchema = StandardSchema, O = unknown> extends AgentSpec<S, O> {
  readonly [AGENT_BRAND]: true;
}

/** The input of an agent that declares none: nothing, or `{}`; anything else is refused before the run starts. */
export type NoInput = StandardSchema<Record<string, never> | undefined, Record<string, never>>;

const NO_INPUT: NoInput = {
  '~standard': {
    version: 1,
    vendor: 'agent-logbook',
    validate: (value) =>
      value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)
        ? { value: {} }
        : { issues: [{ message: 'this agent declares no input, so it takes none (or {}); declare `input` with a schema in defineAgent to accept one' }] },
  },
};

/** An agent that takes no input: `input` left out, the script sees `{}`. */
export function defineAgent<O>(spec: Omit<AgentSpec<NoInput, O>, 'input'> & { readonly input?: undefined }): AgentDefinition<NoInput, O>;
export function defineAgent<S extends StandardSchema, O>(spec: AgentSpec<S, O>): AgentDefinition<S, O>;
export function defineAgent(given: unknown): AgentDefinition {
  if (typeof given !== 'object' || given === null) bad('defineAgent was called without a definition object.', 'Pass { name, input, run }.');
  const spec = ((given as { input?: unknown }).input === undefined ? { ...given, input: NO_INPUT } : given) as AgentSpec<StandardSchema, unknown>;
  if (typeof spec.name !== 'string' || spec.name.length === 0)
    bad('defineAgent: "name" must be a non-empty string.', 'Give the agent a name, e.g. "email-campaign".');
  requireWellFormed(spec.name, 'The name of an agent');
  if (!isStandardSchema(spec.input))
    bad(
      `defineAgent(${JSON.stringify(spec.name)}): "input" is not a schema.`,
      'Pass a zod schema, e.g. z.object({}), or leave `input` out for an agent that takes none.',
    );
  if (typeof spec.run !== 'function') bad(`defineAgent(${JSON.stringify(spec.name)}): "run" must be a function.`, 'Add run: async (run, input) => { ... }.');
  if (spec.onFailure !== undefined && spec.onFailure !== 'stop' && spec.onFailure !== 'compensate') {
    bad(`defineAgent(${JSON.stringify(spec.name)}): "onFailure" is ${JSON.stringify(spec.onFailure)}.`, 'Use "stop" or "compensate".');
  }
  const def = Object.freeze({ ...spec, [AGENT_BRAND]: true as const });
  agentsDefined.push(def);
  return def;
}

const AGENTS_KEY = Symbol.for('agent-logbook.agents-defined');
const agentGlobals = globalThis as { [AGENTS_KEY]?: AgentDefinition[] };
/** Every agent defined in this process, in order (on globalThis, as the action registry is). */
const agentsDefined = (agentGlobals[AGENTS_KEY] ??= []);

/**
 * How many agents this process has defined so far, and those defined since `from`: the loader learns the agents a
 * script's bundle defines (its default one and the children it imports), so a child run is resumed by its own.
 */
export function definedAgentCount(): number {
  return agentsDefined.length;
}

export function agentsDefinedSince(from: number): readonly AgentDefinition[] {
  return agentsDefined.slice(from);
}

export function isAgent(v: unknown): v is AgentDefinition {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[AGENT_BRAND] === true;
}

export type { InferInput, InferOutput };

/** run.waitFor's options. */
export interface WaitForOptions<S extends StandardSchema = StandardSchema<unknown>> {
  /** How long to wait at most: ms, or '90s', '15m', '2h', '3d'. Journaled when the wait starts; then waitFor returns `undefined`. */
  readonly timeout?: number | string;
  /** Validates the event's data: an event it refuses is kept as refused (`logbook show` lists it), and the wait goes on. */
  readonly schema?: S;
}

export interface RunInfo {
  readonly id: string;
  readonly agent: string;
  readonly attempt: number;
}

/** The object an agent's `run(run, input)` receives. */
export interface RunApi extends RunInfo {
  /**
   * A named, checkpointed unit: on resume a completed step returns its journaled result without running. An
   * integration that runs steps for the user (a LangGraph node) names the user's line with `{ at }`.
   */
  step<T>(name: string, fn: () => Promise<T> | T, options?: StepOptions): Promise<T>;
  /**
   * One side effect, bracketed in the journal and reconciled on resume. Must be called inside a step.
   * `args` is what the schema accepts (its input type: a field with a default may be left out); the action's
   * key, execute, verify and compensate see the parsed value.
   */
  do<S extends StandardSchema, R>(action: ActionDefinition<S, R>, args: InferInput<S>, options?: DoOptions): Promise<R>;
  /**
   * A durable timer, outside any step: `duration` is milliseconds or '90s', '15m', '2h', '3d'. Its wake time is journaled
   * when it starts (as the checkpoint of a step named `name`); a resumed run waits only what is left, and one resumed
   * after it goes on at once. Under a worker a long sleep releases the run (status `sleeping`) until it is due.
   */
  sleep(name: string, duration: number | string): Promise<void>;
  /**
   * Waits for an outside event, outside any step: `logbook send <run-id> <name> --data JSON`, `journal.send`, the
   * sidebar or the debugger delivers it, exactly once. It returns the event's data (through `schema` when given;
   * `null` when it was sent without data), or `undefined` once the durable `timeout` passed first. An event sent
   * before the run gets here is kept and taken then. With none yet, the run stops `waiting`, holding no process
   * (a foreground `logbook run` exits 3), and `logbook send` or a worker continues it.
   */
  waitFor<S extends StandardSchema = StandardSchema<unknown>>(name: string, options?: WaitForOptions<S>): Promise<InferOutput<S> | undefined>;
  /**
   * Starts `agent` as a run of its own, with its own journal entries, and returns that run's output. Like run.sleep, it
   * is a step of this run (named `child <agent name>`), outside any other step. The child's id is derived from this
   * run's id and the step's place (or is `options.id`): a resumed parent re-attaches to the same child instead of
   * starting another, waits for it while another process drives it, and resumes it when it was interrupted. A child
   * that fails, is cancelled or compensated makes this throw ChildRunFailedError, naming the child's run id.
   */
  child<S extends StandardSchema, O>(agent: AgentDefinition<S, O>, input: InferInput<S>, options?: ChildOptions): Promise<O>;
  /** The step the caller is in (its position and name), or undefined outside a step: integrations key actions by it. */
  currentStep(): StepPlace | undefined;
  /** Journals a note in the current step (what a model had streamed, say): shown by the debugger, never replayed. */
  note(kind: string, data: unknown): void;
  /** A line for the person running the agent (not an error): the CLI prints it on stderr, the debugger in its console. */
  log(line: string): void;
}

/** run.child's options. */
export interface ChildOptions {
  /**
   * The child's run id (letters, digits, `. _ : -`, up to 128 characters). Default: derived from the parent's id and
   * the place of the call, e.g. `run-1.child-3` for a call that is the parent's step #3. A run of that id that is not
   * this parent's child at this place is refused.
   */
  readonly id?: string;
}

/** How an integration tells the debugger where the user asked for an action (see docs/integrations.md). */
export interface DoOptions {
  /** The user's line this action stands for (from `callSite()` at the integration's entry): the debugger shows it
   *  instead of the line that called run.do, which is the integration's own. */
  readonly at?: { readonly file: string; readonly line: number; readonly column: number } | undefined;
}

/** How an integration tells the debugger which of the user's lines a step stands for (a LangGraph node's addNode). */
export interface StepOptions {
  /** The user's line (from `callSite()`): the debugger shows it, and a line breakpoint there stops before the step. */
  readonly at?: { readonly file: string; readonly line: number; readonly column: number } | undefined;
}

export interface StepPlace {
  /** The step's position in the run, from 0: the same on every attempt. */
  readonly index: number;
  readonly name: string;
}
