// The programmatic API for hosts (a server, a queue worker): open a journal, start, resume, compensate, list runs.

import { childOfWait } from './childWait';
import type { AgentDefinition } from './define';
import { ErrorCodes, LogbookError, describe } from './errors';
import { startRun, resumeRun, recordApproval } from './engine';
import { compensateRun } from './compensate';
import { cancelRunAndWait } from './cancel';
import { sendEvent } from './send';
import type { SendReport } from './sendReport';
import type { CancelOptions, CancelReport } from './cancelOptions';
import type { CompensationReport, RunOutcome } from './outcomes';
import type { InferInput, StandardSchema } from './schema';
import { openStore, resolveTarget, DEFAULT_DB, type Store } from './store';
import type { RunRow } from './store/rows';
import { runFacts } from './runFacts';
import { deprecationLine, warnOnce } from '../shared/journalNames';
import type { RunStatus } from './types';
import type { DecisionInput } from './decisions';
import type { OnDriving } from './hooks';
import type { TraceExportConfig } from './trace/config';
import { loadExporter } from './trace/load';
import type { TraceOptions } from './trace/options';

/** An agent of any input and output, as a host registers it for resuming. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- agents differ in input and output; a host holds them in one list
export type AnyAgent = AgentDefinition<any, any>;

export interface JournalOptions {
  /**
   * The journal: a SQLite file (created if missing) or a `postgres://` URL. Default: `.logbook/journal.db` under the
   * working directory. The name `--journal`, `$LOGBOOK_JOURNAL` and the `journal` setting give it elsewhere.
   */
  readonly journal?: string;
  /** @deprecated The old name of `journal` (same meaning); it still works, and `log` says so once. */
  readonly file?: string;
  /** The agents this host can resume and compensate, found by the name each run journaled. */
  readonly agents?: readonly AnyAgent[];
  /** Where the runtime's warnings go (a version change, a declared compensation). Default: stderr. */
  readonly log?: (line: string) => void;
  /** Shown to anyone who finds a run held by this process, e.g. "orders-api". Default: "api". */
  readonly role?: string;
  /**
   * OpenTelemetry traces of every attempt, sent from the journal in the background after it (OTLP/HTTP): `true` or
   * options to send them, `false` never. Default: when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set.
   */
  readonly traces?: boolean | TraceOptions;
}

export interface StartOptions {
  /** The run's id (letters, digits, `. _ : -`); default: a generated one. An id already journaled is refused. */
  readonly runId?: string;
  /**
   * The file that defines the agent, recorded so `logbook resume` and VS Code can resume the run too.
   * Default: `api:<agent name>` (then the CLI needs `--script` to resume it).
   */
  readonly script?: string;
  /** Called once this call drives the run (it holds the run's lease), before the script runs: answer a request here. */
  readonly onDriving?: OnDriving;
  /** The caller's W3C trace context (an incoming request's `traceparent` header): the run's spans join that trace. */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`. */
  readonly tracestate?: string;
}

export interface ResumeOptions {
  /**
   * Decisions for in-doubt actions that have no `verify`, by action id: `'happened'`, `'not-happened'`, or
   * `{ decision: 'happened', result }` with the result the effect had (then `run.do` returns it). Checked before
   * anything is written: a bad one is refused (LB_BAD_DECISION, or LB_INVALID_ARGS for a result that is not plain JSON).
   */
  readonly decisions?: Readonly<Record<string, DecisionInput>>;
  /**
   * Called once this call drives the run (it holds the run's lease), before anything runs. A run another call is
   * driving (in this process or another) is refused with LB_LEASE_HELD instead, and this is never called.
   */
  readonly onDriving?: OnDriving;
}

/** A run as the journal holds it. */
export interface RunSummary {
  readonly id: string;
  readonly agent: string;
  /** `interrupted`: journaled as running (or compensating) but the process that drove it is gone. */
  readonly status: RunStatus;
  /** What an interrupted run was doing when its process died: resume it, or finish its compensation. */
  readonly interruptedWhile?: 'running' | 'compensating';
  readonly attempt: number;
  readonly script: string;
  readonly input: unknown;
  readonly output: unknown;
  readonly error: unknown;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** A `waiting` run (run.waitFor): the event it waits for, and when its wait times out (null: never). */
  readonly waitingFor?: { readonly event: string; readonly until: Date | null; readonly runId?: string };
  /** The cancel asked of the run (journal.cancel, `logbook cancel`), once one was. */
  readonly cancel?: { readonly reason: string | null; readonly compensate: boolean; readonly by: string; readonly at: Date };
  /**
   * Values of the run's row that were edited or damaged (LB_JOURNAL_INVALID, each naming the column and the remedy):
   * they read as undefined above, and resume and compensate refuse the run before writing anything.
   */
  readonly damaged?: readonly LogbookError[];
}

/** What `recoverInterrupted` did with one run. */
export type Recovered =
  | { readonly runId: string; readonly action: 'resumed'; readonly outcome: RunOutcome }
  | { readonly runId: string; readonly action: 'compensated'; readonly report: CompensationReport }
  | { readonly runId: string; readonly action: 'failed'; readonly error: LogbookError | Error };

/**
 * One driving session per run: each start, resume and compensate is a session with its own lease. A call on a run that
 * another session drives (another call in this process, another journal on the same file, another process) is refused
 * with LB_LEASE_HELD naming the holder, and writes nothing; it never joins or takes over the run in flight.
 */
export interface Journal {
  /** The journal's target: the absolute path of its file, or its connection string without the password. */
  readonly target: string;
  /** @deprecated The old name of `target`. */
  readonly file: string;
  /** Starts a new run of `agent` with `input` (validated by its schema) and drives it until it stops. */
  start<S extends StandardSchema, O>(agent: AgentDefinition<S, O>, input: InferInput<S>, opts?: StartOptions): Promise<RunOutcome>;
  /** Resumes a run: committed actions are skipped, in-doubt ones reconciled, then the script goes on. */
  resume(runId: string, opts?: ResumeOptions): Promise<RunOutcome>;
  /** Applies the inverses of a run's committed actions, newest-first (resumes an interrupted compensation). */
  compensate(runId: string, opts?: ResumeOptions): Promise<CompensationReport>;
  /**
   * Cancels a run: one nobody drives (queued, interrupted, stopped for a person) at once; a live one (in this process or
   * another) has its actions' ctx.signal aborted and stops at its next boundary, and this waits for that unless
   * `wait: false`. With `compensate`, its committed actions are then compensated, newest first. A run that has ended
   * is refused with LB_RUN_NOT_CANCELLABLE, and nothing is written. A cancelled run is never resumed.
   */
  cancel(runId: string, opts?: Pick<CancelOptions, 'reason' | 'compensate' | 'wait'>): Promise<CancelReport>;
  /** Journals an approval or rejection for an action waiting at its gate; then `resume` the run. */
  decideApproval(runId: string, actionId: string, approved: boolean, note?: string): void;
  /**
   * Sends event `name` with `data` (plain JSON; leave it out for none) to a run: kept in its inbox until its
   * run.waitFor(name) takes it, exactly once, whether the run waits for it now or gets there later. `id` dedupes: a
   * second send with it writes nothing and says so. A run that ended is refused (LB_EVENT_REFUSED). It does not drive
   * the run: `resume` it (when the report says `waiting-now`), or let a worker continue it.
   */
  send(runId: string, name: string, data?: unknown, opts?: { readonly id?: string }): SendReport;
  /** One run, or undefined. */
  run(runId: string): RunSummary | undefined;
  /** Runs, newest first. */
  runs(opts?: { readonly limit?: number; readonly offset?: number }): RunSummary[];
  /** Runs whose process died while driving them (a crash, a deploy, a SIGKILL): call at boot. */
  interrupted(): RunSummary[];
  /** Resumes every interrupted run (or finishes its compensation), one after another; one failure does not stop the rest. */
  recoverInterrupted(): Promise<Recovered[]>;
  /** Closes the journal file. Runs still being driven fail with a storage error: await them first. */
  close(): void;
}

const START_KEYS = new Set(['runId', 'script', 'onDriving', 'traceparent', 'tracestate']);
const RESUME_KEYS = new Set(['decisions', 'onDriving']);
const CANCEL_KEYS = new Set(['reason', 'compensate', 'wait']);
const SEND_KEYS = new Set(['id']);

/** Rejects options the API does not have; crash injection in particular is only for the CLI, the debugger and rehearsals. */
function checkOptions(what: string, opts: object | undefined, allowed: ReadonlySet<string>): void {
  for (const k of Object.keys(opts ?? {})) {
    if (allowed.has(k)) continue;
    const remedy = /crash|fault/i.test(k)
      ? 'Crash injection is a rehearsal tool: use `logbook run --crash-at` or `logbook rehearse`; a host process is never killed unless it runs those.'
      : `Use only ${[...allowed].join(', ')}.`;
    throw new LogbookError(ErrorCodes.USAGE, `${what}: unknown option ${JSON.stringify(k)}.`, remedy);
  }
}

/** Opens (creating if needed) a journal for a host that drives runs itself, without the CLI. */
export function openJournal(opts: JournalOptions = {}): Journal {
  const agents = new Map<string, AgentDefinition>();
  for (const a of opts.agents ?? []) {
    const seen = agents.get(a.name);
    if (seen && seen !== a)
      throw new LogbookError(
        ErrorCodes.INVALID_DEFINITION,
        `openJournal: two different agents are named ${JSON.stringify(a.name)}.`,
        'Give each agent its own name: runs find their agent by it.',
      );
    agents.set(a.name, a as AgentDefinition);
  }
  if (opts.journal !== undefined && opts.file !== undefined) {
    throw new LogbookError(ErrorCodes.USAGE, 'openJournal: both "journal" and its deprecated name "file" are set.', 'Keep "journal" and remove "file".');
  }
  if (opts.file !== undefined)
    warnOnce('openJournal.file', deprecationLine('openJournal\'s option "file"', '"journal"'), opts.log ?? ((l) => process.stderr.write(`${l}\n`)));
  const store: Store = openStore(resolveTarget(opts.journal ?? opts.file ?? DEFAULT_DB));
  const role = opts.role ?? 'api';
  const traces = opts.traces === undefined ? undefined : hostTraces(opts.traces, opts.log);
  const engine = { role, ...(opts.log ? { log: opts.log } : {}), ...(traces !== undefined ? { traces } : {}) };

  const agentOf = (runId: string): AgentDefinition => {
    const row = store.reader.run(runId);
    if (!row) throw new LogbookError(ErrorCodes.RUN_NOT_FOUND, `There is no run ${runId} in ${store.target}.`, 'List the runs with journal.runs().');
    const agent = agents.get(row.agent);
    if (!agent) {
      throw new LogbookError(
        ErrorCodes.RUN_NOT_RESUMABLE,
        `Run ${runId} belongs to agent ${row.agent}, which this journal was not opened with.`,
        `Pass it in openJournal({ agents: [...] }) (known: ${[...agents.keys()].join(', ') || 'none'}).`,
        { runId, agent: row.agent },
      );
    }
    return agent;
  };

  // A damaged value is reported, not thrown: one damaged run must not hide the others (recoverInterrupted lists them all).
  // A parent waiting for its child's event (childWait.ts): the event, and the child that waits for it.
  const waitedFor = (row: RunRow, name: string): NonNullable<RunSummary['waitingFor']> => {
    const until = row.wake_at == null ? null : new Date(row.wake_at);
    const leaf = childOfWait(name) === undefined ? undefined : store.waitingLeaf(row);
    return leaf ? { event: leaf.event, until, runId: leaf.runId } : { event: name, until };
  };
  const summary = (row: RunRow): RunSummary => {
    const f = runFacts(store, row);
    return {
      id: f.id,
      agent: f.agent,
      status: f.status,
      ...(f.interruptedWhile ? { interruptedWhile: f.interruptedWhile } : {}),
      attempt: f.attempt,
      script: f.script,
      input: f.input,
      output: f.output,
      error: f.error,
      createdAt: new Date(f.createdAt),
      updatedAt: new Date(f.updatedAt),
      ...(row.status === 'waiting' && row.waiting_for != null ? { waitingFor: waitedFor(row, row.waiting_for) } : {}),
      ...(f.cancel ? { cancel: { reason: f.cancel.reason, compensate: f.cancel.compensate, by: f.cancel.by, at: new Date(f.cancel.at) } } : {}),
      ...(f.damaged.length ? { damaged: f.damaged.map((d) => d.error) } : {}),
    };
  };

  const journal: Journal = {
    target: store.target,
    file: store.target,
    async start(agent, input, o = {}) {
      checkOptions('journal.start', o, START_KEYS);
      const registered = agent as unknown as AgentDefinition;
      const known = agents.get(agent.name);
      if (known && known !== registered)
        throw new LogbookError(
          ErrorCodes.INVALID_DEFINITION,
          `journal.start: another agent named ${JSON.stringify(agent.name)} was registered.`,
          'Start the agent you registered, or rename one.',
        );
      agents.set(agent.name, registered);
      return startRun(store, registered, {
        ...engine,
        script: o.script ?? `api:${agent.name}`,
        input,
        ...(o.runId !== undefined ? { runId: o.runId } : {}),
        ...(o.onDriving ? { onDriving: o.onDriving } : {}),
        ...(o.traceparent ? { traceContext: { traceparent: o.traceparent, ...(o.tracestate ? { tracestate: o.tracestate } : {}) } } : {}),
      });
    },
    async resume(runId, o = {}) {
      checkOptions('journal.resume', o, RESUME_KEYS);
      return resumeRun(store, agentOf(runId), runId, { ...engine, decisions: { ...o.decisions }, ...(o.onDriving ? { onDriving: o.onDriving } : {}) });
    },
    async compensate(runId, o = {}) {
      checkOptions('journal.compensate', o, RESUME_KEYS);
      agentOf(runId); // its module defined the action types whose inverses compensation looks up
      return compensateRun(store, runId, { ...engine, decisions: { ...o.decisions }, ...(o.onDriving ? { onDriving: o.onDriving } : {}) });
    },
    async cancel(runId, o = {}) {
      checkOptions('journal.cancel', o, CANCEL_KEYS);
      if (o.compensate === true) agentOf(runId); // its module defined the action types whose inverses compensation looks up
      return cancelRunAndWait(store, runId, { ...o, role });
    },
    decideApproval(runId, actionId, approved, note) {
      recordApproval(store, runId, actionId, approved, note ?? null, role);
    },
    send(runId, name, data, o = {}) {
      checkOptions('journal.send', o, SEND_KEYS);
      return sendEvent(store, runId, name, data, {
        ...(o.id !== undefined ? { id: o.id } : {}),
        role,
        what: 'journal.send',
        ...(opts.log ? { log: opts.log } : {}),
      });
    },
    run(runId) {
      const row = store.reader.run(runId);
      return row ? summary(row) : undefined;
    },
    runs(o = {}) {
      return store.reader.runs(o.limit ?? 100, o.offset ?? 0).map(summary);
    },
    interrupted() {
      const out: RunSummary[] = [];
      for (let offset = 0; ; offset += 500) {
        const page = store.reader.runs(500, offset);
        for (const row of page) {
          if ((row.status === 'running' || row.status === 'compensating') && store.reader.view(row).effectiveStatus === 'interrupted') out.push(summary(row));
        }
        if (page.length < 500) return out;
      }
    },
    async recoverInterrupted() {
      const done: Recovered[] = [];
      for (const r of journal.interrupted()) {
        try {
          done.push(
            r.interruptedWhile === 'compensating'
              ? { runId: r.id, action: 'compensated', report: await journal.compensate(r.id) }
              : { runId: r.id, action: 'resumed', outcome: await journal.resume(r.id) },
          );
        } catch (err) {
          done.push({ runId: r.id, action: 'failed', error: err instanceof Error ? err : new Error(describe(err)) });
        }
      }
      return done;
    },
    close() {
      store.close();
    },
  };
  return journal;
}

/** openJournal's `traces`: false is off; true or options, the variables filling in what the options leave out. */
function hostTraces(t: boolean | TraceOptions, log: ((line: string) => void) | undefined): TraceExportConfig | false {
  if (t === false) return false;
  const cfg = loadExporter().traceConfig(process.env, t === true ? {} : t, log);
  if (cfg) return cfg;
  throw new LogbookError(
    ErrorCodes.USAGE,
    'openJournal: traces are asked for, but no OTLP endpoint is known.',
    'Pass traces: { endpoint: "http://collector:4318/v1/traces" }, or set OTEL_EXPORTER_OTLP_ENDPOINT.',
  );
}
