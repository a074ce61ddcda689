// run.child: a step of the parent that starts another agent as a run of its own, or re-attaches to the one the journal
// already has there (waiting for it while another process drives it, resuming it when nobody does), and returns its output.

import { createHash } from 'node:crypto';
import { ChildRunFailedError, ErrorCodes, LogbookError, RunSuspended } from './errors';
import { isAgent, type AgentDefinition } from './define';
import type { Faults } from './faults';
import type { PauseEvent, StepSnapshot } from './hooks';
import { checkRunId, parseRawInput, type ParsedInput } from './input';
import { fromJournalJson } from './json';
import type { AttemptHost } from './attemptHost';
import { endSession, withNewSession, type Lease, type RunWriter, type Store } from './store';
import type { RunRow } from './store/rows';
import { journaledError } from './settle';
import { waitUntil } from './sleep';
import { childWaitName } from './childWait';
import type { RunOutcome } from './outcomes';
import type { RunStatus } from './types';

/** How often a parent waiting for a child that another process drives looks at the child's row (ms). */
const WAIT_POLL_MS = 200;

/** What the engine lends a session for its run.child calls (engine.ts builds it: this module must not import the engine). */
export interface ChildEngine {
  readonly store: Store;
  readonly role: string;
  readonly log: (line: string) => void;
  readonly faults: Faults;
  /** Drives a new child's first attempt with the lease RunWriter.childStarted took for it. */
  start(agent: AgentDefinition, lease: Lease, input: ParsedInput, caller: PauseEvent): Promise<RunOutcome>;
  /** Resumes a child nobody drives: LB_LEASE_HELD when someone does, LB_RUN_NOT_RESUMABLE when it cannot go forward. */
  resume(agent: AgentDefinition, runId: string, caller: PauseEvent): Promise<RunOutcome>;
}

/** The parent's side of a call: its attempt, its writer, and how it stops. */
export interface ChildParent {
  readonly host: AttemptHost;
  readonly writer: RunWriter;
  /** The parent's own caller, when the parent is itself a child (the debugger's stack goes on below it). */
  readonly caller: PauseEvent | undefined;
  /** Stops the parent (and every branch of it) with this suspension. */
  suspend(s: RunSuspended): never;
  /** A read of the journal inside the attempt: a damaged row stops the attempt as a journal failure. */
  read<T>(fn: () => T): T;
}

export interface ChildCall {
  /** The parent's step the call is, as the host sees it (its place names the child). */
  readonly step: StepSnapshot;
  readonly agent: AgentDefinition;
  readonly input: unknown;
  readonly id: string | undefined;
}

/** How a child ended, as far as its parent is concerned: an attempt's outcome, or what the journal holds of it. */
type ChildEnd = Pick<RunOutcome, 'status' | 'output' | 'error' | 'waitingOn' | 'wakeAt' | 'waitingFor'>;

/**
 * The id of the child started at step `stepIdx` of run `parentId`: from the run and the place, never a counter or a
 * random value, so every attempt of the parent names the same child. An id past the 128 characters a run id may have
 * (a deep chain of children) is a hash of the same two things.
 */
export function childRunId(parentId: string, stepIdx: number): string {
  const id = `${parentId}.child-${stepIdx + 1}`;
  if (id.length <= 128) return id;
  return `child-${createHash('sha256').update(`${parentId}\u0000${stepIdx}`).digest('hex').slice(0, 40)}`;
}

/** run.child's arguments, checked before anything happens; the step name names the agent, so replay checks it too. */
export function checkChildCall(agent: unknown, options: unknown): { agent: AgentDefinition; id: string | undefined } {
  if (!isAgent(agent))
    throw new LogbookError(
      ErrorCodes.STEP_MISUSE,
      'run.child needs an agent made with defineAgent as its first argument.',
      'Import the child agent (its module default-exports defineAgent(...)) and pass it: run.child(drafter, input).',
    );
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
    throw new LogbookError(ErrorCodes.STEP_MISUSE, `run.child(${agent.name}): options must be an object.`, 'Pass { id } or leave options out.');
  const o = (options ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'id') throw new LogbookError(ErrorCodes.STEP_MISUSE, `run.child(${agent.name}): unknown option ${JSON.stringify(k)}.`, 'The only option is id.');
  if (o.id !== undefined) {
    if (typeof o.id !== 'string')
      throw new LogbookError(ErrorCodes.STEP_MISUSE, `run.child(${agent.name}): id must be a string.`, 'Pass a run id, or leave it out for a derived one.');
    checkRunId(o.id);
  }
  return { agent, id: o.id };
}

export class ChildCalls {
  constructor(
    private readonly e: ChildEngine,
    private readonly p: ChildParent,
  ) {}

  private get parentId(): string {
    return this.p.host.runId;
  }

  /** One run.child call, inside its step: the child's output, or it throws (ChildRunFailedError, or the parent stops). */
  async call(c: ChildCall): Promise<unknown> {
    const h = this.p.host;
    const childId = c.id ?? childRunId(this.parentId, c.step.idx);
    const found = this.p.read(() => this.e.store.reader.run(childId));
    if (found) this.checkOwn(found, c);
    const how = found ? 'attach' : 'start';
    const child = { runId: childId, agent: c.agent.name, how } as const;
    const caller: PauseEvent = { kind: 'child:start', run: h.runSnapshot(), step: c.step, child, ...(this.p.caller ? { caller: this.p.caller } : {}) };
    let end: ChildEnd;
    if (!found) {
      // The input is checked by the child's schema before anything of it is written.
      const input = await parseRawInput(c.agent, childId, c.input, this.e.log);
      h.boundary({ stopFirst: true });
      const lease = this.startChild(c, childId, input);
      let driven = false;
      try {
        const paused = h.boundary({ fault: { point: 'child:after-start', target: c.agent.name }, event: () => ({ kind: 'child:start', step: c.step, child }) });
        if (paused) await paused;
        driven = true;
        end = await this.e.start(c.agent, lease, input, caller);
      } finally {
        // A host that stopped the parent at child:start leaves the child interrupted, held by no one: resumable.
        if (!driven) this.letGo(lease);
      }
    } else {
      const paused = h.boundary({
        event: () => ({ kind: 'child:start', step: c.step, child: { ...child, status: this.e.store.reader.view(found).effectiveStatus } }),
      });
      if (paused) await paused;
      end = await this.attach(c, childId, caller);
    }
    const paused = h.boundary({
      fault: { point: 'child:after-end', target: c.agent.name },
      event: () => ({
        kind: 'child:end',
        step: c.step,
        child: { ...child, status: end.status, ...(end.status === 'completed' ? { output: end.output } : {}) },
      }),
    });
    if (paused) await paused;
    return this.settle(c, childId, end);
  }

  /** The child's row and the parent's record of it, in one transaction of the parent's writer. */
  private startChild(c: ChildCall, childId: string, input: ParsedInput): Lease {
    const parent = this.p.read(() => this.e.store.reader.run(this.parentId));
    return withNewSession(this.e.role, (owner) =>
      this.p.writer.childStarted(
        c.step.idx,
        {
          id: childId,
          agent: c.agent.name,
          script: parent?.script ?? `api:${c.agent.name}`,
          scriptVersion: parent?.script_version ?? null,
          input: input.json,
          parentId: this.parentId,
          parentStep: c.step.idx,
        },
        owner,
      ),
    );
  }

  private letGo(lease: Lease): void {
    try {
      this.e.store.releaseLease(lease);
    } catch {
      // A lease left behind is known dead by this process once its session ends, and expires for the others.
    } finally {
      endSession(lease.token);
    }
  }

  /** A run of that id the journal holds must be this parent's child at this place (or a given id was reused). */
  private checkOwn(row: RunRow, c: ChildCall): void {
    if (row.parent_id === this.parentId && row.parent_step === c.step.idx && row.agent === c.agent.name) return;
    const whose =
      row.parent_id === this.parentId
        ? `the child of step #${(row.parent_step ?? 0) + 1} of this run (agent ${row.agent})`
        : row.parent_id
          ? `a child of run ${row.parent_id}`
          : `a run of agent ${row.agent} started on its own`;
    throw new LogbookError(
      ErrorCodes.RUN_EXISTS,
      `run.child(${c.agent.name}) at step #${c.step.idx + 1} of run ${this.parentId} names the child ${row.id}, but that run is ${whose}. Nothing was started.`,
      c.id === undefined
        ? `Run ${row.id} took the id this call derives; delete or rename it, or pass run.child(agent, input, { id }) with an id of its own.`
        : 'Give each run.child call an id of its own (or leave id out for one derived from the parent and the place of the call).',
      { runId: this.parentId, childRunId: row.id },
    );
  }

  /**
   * Re-attaches to a child the journal holds: its output if it completed; a wait while a live process drives it (this
   * run's own lease kept alive meanwhile); a resume here when nobody does (interrupted, failed, sleeping, stopped for a
   * person). Another process taking it first is waited for, never raced.
   */
  private async attach(c: ChildCall, childId: string, caller: PauseEvent): Promise<ChildEnd> {
    const reader = this.e.store.reader;
    for (;;) {
      const row = this.p.read(() => reader.run(childId));
      if (!row)
        throw new LogbookError(
          ErrorCodes.CHILD_FAILED,
          `Run ${this.parentId} started child run ${childId} at step #${c.step.idx + 1}, but the journal no longer has it (it was deleted). Nothing was started in its place.`,
          `Compensate or delete the parent (\`logbook compensate ${this.parentId}\`): a child started once is never started again at the same place.`,
          { runId: this.parentId, childRunId: childId },
        );
      const view = reader.view(row);
      if (view.leaseLive || row.status === 'queued') {
        await this.waitAWhile();
        continue;
      }
      switch (row.status) {
        case 'completed':
          return { status: 'completed', output: this.p.read(() => fromJournalJson(row.output, () => ({ runId: childId, table: 'runs', column: 'output' }))) };
        case 'cancelled':
        case 'compensating':
        case 'compensated':
        case 'compensation-failed':
          return { status: view.effectiveStatus, ...(row.error ? { error: journaledError(row.error) } : {}) };
        default:
          break;
      }
      let out: RunOutcome;
      try {
        out = await this.e.resume(c.agent, childId, caller);
      } catch (err) {
        // Taken by another process between the read and the lease, or ended meanwhile: look again.
        if (err instanceof LogbookError && (err.code === ErrorCodes.LEASE_HELD || err.code === ErrorCodes.RUN_NOT_RESUMABLE)) {
          await this.waitAWhile();
          continue;
        }
        throw err;
      }
      // Another process took the child over while this one drove it: that one goes on with it, and this waits.
      if (out.status === 'interrupted' && out.error?.code === ErrorCodes.LEASE_LOST) {
        this.p.host.boundary({ stopFirst: true });
        continue;
      }
      return out;
    }
  }

  /** Waits a moment for a child another process drives; a cancel, a lost lease or the host's stop ends the wait and stops the parent. */
  private async waitAWhile(): Promise<void> {
    this.p.host.boundary({ stopFirst: true });
    await waitUntil(Date.now() + WAIT_POLL_MS, this.p.writer.leaseChecks.signal);
    this.p.host.boundary({ stopFirst: true });
  }

  /** What the parent's step does with how the child ended. */
  private settle(c: ChildCall, childId: string, end: ChildEnd): unknown {
    const h = this.p.host;
    const status: RunStatus = end.status;
    switch (status) {
      case 'completed':
        return end.output;
      case 'failed':
        throw new ChildRunFailedError(this.parentId, childId, c.agent.name, 'failed', end.error);
      case 'needs-decision':
      case 'awaiting-approval': {
        // The parent cannot go on without the child's output: it stops as the child did, naming it; resuming the
        // parent resumes the child, which goes on once a person has decided (or approved) there.
        const reason = `child run ${childId} ${status === 'needs-decision' ? 'needs a decision' : 'waits for approval'}: ${end.waitingOn?.reason ?? status}`;
        h.status = status;
        this.p.writer.runStatus(status, { data: { childRunId: childId, actionId: end.waitingOn?.actionId ?? null, reason } });
        return this.p.suspend(new RunSuspended(status, reason, end.waitingOn?.actionId, undefined, undefined, childId));
      }
      case 'waiting': {
        // The child waits for an event: so does the parent, for its child (not for the event: one sent to the parent is
        // not the child's), until the child's wait times out; a send to the child continues both, and a worker claims
        // the parent once the child moves (store/queue.ts).
        const w = end.waitingFor;
        const leaf = w?.runId ?? childId;
        const until = w?.until ?? null;
        const reason = `child run ${leaf} waits for event ${JSON.stringify(w?.event ?? '?')}`;
        this.p.writer.waiting('waiting', childWaitName(childId), until, { childRunId: childId, waitingRunId: leaf, event: w?.event ?? null, until, reason });
        h.status = 'waiting';
        return this.p.suspend(new RunSuspended('waiting', reason, undefined, until ?? undefined, w?.event, leaf));
      }
      case 'sleeping':
        // Released by a worker until it is due: the parent too, until the same time (a worker then claims both).
        return this.p.suspend(
          new RunSuspended(
            'sleeping',
            `waits for child run ${childId}, sleeping until ${new Date(end.wakeAt ?? Date.now()).toISOString()}`,
            undefined,
            end.wakeAt,
            undefined,
            childId,
          ),
        );
      case 'interrupted':
        // The parent's own stop first (a lost lease, a cancel, the host): that is why the child stopped.
        h.boundary({ stopFirst: true });
        return this.p.suspend(
          new RunSuspended(
            'interrupted',
            `child run ${childId} stopped before its end${end.error ? ` ([${end.error.code ?? end.error.name}] ${end.error.message})` : ''}; both are resumable`,
            undefined,
            undefined,
            undefined,
            childId,
          ),
        );
      default:
        // Cancelled (perhaps with this parent, whose own stop comes first), compensated, or being compensated.
        h.boundary({ stopFirst: true });
        throw new ChildRunFailedError(this.parentId, childId, c.agent.name, status, end.error);
    }
  }
}
