// The surfaces a schedule drives a run through: the host API (openJournal), the engine as the CLI calls it, the CLI itself.

import { ErrorCodes, LogbookError, compensateRun, openStore, resumeRun, startRun } from '../../src/runtime';
import { openJournal, type Journal } from '../../src/runtime/journal';
import type { DecisionInput } from '../../src/runtime/decisions';
import { main } from '../../src/cli/cliMain';
import { cancelRunAndWait } from '../../src/runtime/cancel';
import { buildAgent, childAgentOf } from './agent';
import { rawInput } from './agent';
import type { AgentDefinition } from '../../src/runtime';
import { eventOf, type AgentJ } from './spec';
import { SimProcess } from './sim';
import type { World } from './world';

/** How a driver call ended, as the schedule sees it. */
export type Ended =
  | { readonly kind: 'outcome'; readonly status: string; readonly output?: unknown; readonly error?: { readonly code?: string; readonly message: string } }
  | { readonly kind: 'refused'; readonly code: string; readonly message: string }
  | { readonly kind: 'crashed'; readonly where: string }
  | { readonly kind: 'error'; readonly message: string };

/** Where the fixture script finds the case when the CLI loads it in this process (see fixture.ts). */
export const HANDOFF = Symbol.for('agent-logbook.checker.handoff');

export interface Target {
  /** The journal: a SQLite file or a postgres:// URL. */
  readonly db: string;
  /** The script the runs record, so the CLI (fork, resume) can load it: test/checker/fixture.ts. */
  readonly script: string;
  readonly agent: AgentJ;
  readonly world: World;
  /** The case's scratch files, without extension: `<base>.spec.json` and `<base>.world.db` for child processes. */
  readonly scratch: string;
}

const quiet = (): void => undefined;

/** One simulated process's view of the target: its agent (its own copy of the script) and its connections. */
export class Driver {
  private agentDef: AgentDefinition | undefined;
  private hostJournal: Journal | undefined;

  constructor(
    readonly t: Target,
    readonly proc: SimProcess,
  ) {}

  agent(): AgentDefinition {
    return (this.agentDef ??= buildAgent(this.t.agent, { world: this.t.world, proc: this.proc }));
  }

  /** The host API journal of this process (one per process, as a server holds one). */
  journal(): Journal {
    return (this.hostJournal ??= this.openJournal());
  }

  /** Another openJournal on the same target in the same process (a second module of one server). */
  openJournal(): Journal {
    // The child agent too (run.child): a host resumes a child run by its own agent.
    return this.proc.own(openJournal({ journal: this.t.db, agents: [this.agent(), childAgentOf(this.agent())], role: this.proc.role, log: quiet }));
  }

  private store() {
    return this.proc.own(openStore(this.t.db));
  }

  async start(via: string, runId: string, extra: Record<string, unknown> = {}): Promise<Ended> {
    return this.ended(async () => {
      if (via === 'api') return this.journal().start(this.agent(), { ...rawInput(this.t.agent.fields), ...extra }, { runId, script: this.t.script });
      return startRun(this.store(), this.agent(), {
        script: this.t.script,
        input: { ...rawInput(this.t.agent.fields), ...extra },
        runId,
        faults: this.proc.faults(),
        role: this.proc.role,
        log: quiet,
      });
    });
  }

  async resume(via: string, runId: string, decisions: Record<string, DecisionInput> = {}, journal?: Journal): Promise<Ended> {
    return this.ended(async () => {
      if (via === 'api') return (journal ?? this.journal()).resume(runId, { decisions });
      return resumeRun(this.store(), this.agent(), runId, { decisions, faults: this.proc.faults(), role: this.proc.role, log: quiet });
    });
  }

  async compensate(via: string, runId: string, decisions: Record<string, DecisionInput> = {}): Promise<Ended> {
    return this.ended(async () => {
      if (via === 'api') return this.journal().compensate(runId, { decisions });
      this.agent(); // defines the action types whose inverses compensation finds by the journaled type
      return compensateRun(this.store(), runId, { decisions, faults: this.proc.faults(), role: this.proc.role, log: quiet });
    });
  }

  /** `logbook cancel` (the engine's call, as the CLI makes it) or journal.cancel; it waits until a live run has stopped. */
  async cancel(via: string, runId: string, compensate: boolean): Promise<Ended> {
    return this.ended(async () => {
      if (via === 'api') return this.journal().cancel(runId, { compensate, reason: 'checker' });
      this.agent(); // defines the action types whose inverses a compensation finds by the journaled type
      return cancelRunAndWait(this.store(), runId, { compensate, reason: 'checker', role: this.proc.role });
    });
  }

  /** journal.send: an event for the run, kept in its inbox; its report's outcome (kept, duplicate) is the status. */
  async send(runId: string, name: string, k: number): Promise<Ended> {
    const ev = eventOf(name, k);
    return this.ended(() => Promise.resolve({ status: this.journal().send(runId, name, ev.data, { id: ev.id }).outcome }));
  }

  async approve(runId: string, actionId: string, approved: boolean): Promise<Ended> {
    return this.ended(() => {
      this.journal().decideApproval(runId, actionId, approved);
      return Promise.resolve({ status: 'approval-recorded' });
    });
  }

  /** `logbook fork` through the CLI's own code, in this process: it loads the fixture script as the CLI would. */
  async fork(from: string, stepIdx: number, runId: string): Promise<Ended> {
    const lines: string[] = [];
    const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l) };
    const g = globalThis as { [HANDOFF]?: unknown };
    g[HANDOFF] = { spec: this.t.agent, world: this.t.world, proc: this.proc };
    try {
      return await this.ended(async () => {
        const code = await main(
          ['fork', from, '--step', String(stepIdx + 1), '--run-id', runId, '--journal', this.t.db, '--script', this.t.script, '--json'],
          io,
        );
        const text = lines.join('\n');
        if (code !== 0 && !text.trimStart().startsWith('{')) {
          const m = /\[(LB_[A-Z_]+)\]/.exec(text);
          if (m?.[1]) throw new LogbookError(m[1] as never, text, '');
          throw new Error(`logbook fork exited ${code}: ${text}`);
        }
        return JSON.parse(text) as { status: string };
      });
    } finally {
      delete g[HANDOFF];
    }
  }

  /** Runs a driver call as this process and says how it ended: a crash of the process, a refusal, or its outcome. */
  private async ended(fn: () => Promise<{ status: string; output?: unknown; error?: { code?: string; message: string } }>): Promise<Ended> {
    try {
      const o = await this.proc.as(fn);
      if (!this.proc.alive) return { kind: 'crashed', where: this.proc.diedAt ?? '?' };
      return { kind: 'outcome', status: o.status, ...(o.output !== undefined ? { output: o.output } : {}), ...(o.error ? { error: o.error } : {}) };
    } catch (err) {
      if (!this.proc.alive) return { kind: 'crashed', where: this.proc.diedAt ?? '?' };
      if (err instanceof LogbookError && err.code !== ErrorCodes.LEASE_LOST) return { kind: 'refused', code: err.code, message: err.message };
      return { kind: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
  }
}

export function describeEnded(e: Ended): string {
  switch (e.kind) {
    case 'outcome':
      return `${e.status}${e.error ? ` (${e.error.code ?? ''} ${e.error.message.slice(0, 160)})` : ''}`;
    case 'refused':
      return `refused [${e.code}] ${e.message.slice(0, 160)}`;
    case 'crashed':
      return `killed ${e.where}`;
    case 'error':
      return `threw ${e.message.split('\n')[0] ?? ''}`;
  }
}
