// Builds what a stop shows: the sentence for each boundary, the steps and actions in flight, and the StopContext sent.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ActionSnapshot, RunSnapshot, StepSnapshot } from '../runtime/hooks';
import type { Decision } from '../runtime/types';
import { fromJournalJson } from '../runtime/json';
import type { StopContext } from '../link/runnerProtocol';
import { actionLines } from '../link/sourceScan';
import { reconciledText } from './boundaryText';
import { sandboxCopy } from './evaluator';
import type { RunnerState } from './jobState';
import type { Boundary, BoundaryKind } from './stopPolicy';
import { actionView, checkpointView, evalScope, runView, sleepView, stepView } from './views';

export class StopContextBuilder {
  /** Steps in flight (parallel steps can be), by index. */
  private readonly steps = new Map<string, StepSnapshot>();
  /** In-doubt actions between their reconcile boundary and the outcome, and decisions given in this session. */
  private readonly reconciling = new Set<string>();
  private readonly decided = new Map<string, Decision>();
  private readonly realpaths = new Map<string, string>();
  /** The program's text and the line of its run function, read once the script is loaded. */
  programText = '';
  runLine = 1;

  constructor(private readonly state: RunnerState) {}

  /** A new job: no step in flight. */
  reset(): void {
    this.steps.clear();
  }

  /** `runId`: a child run's steps (run.child) are kept apart from its parent's, whose indexes they share. */
  trackStep(kind: BoundaryKind, step: StepSnapshot | undefined, runId = ''): void {
    // A sleep's step was checkpointed before it waits: not in flight.
    if (!step || kind === 'sleep:waiting') return;
    const key = `${runId}\u0000${step.idx}`;
    if (kind === 'step:after') this.steps.delete(key);
    else this.steps.set(key, step);
  }

  noteDecision(actionId: string, d: Decision): void {
    this.decided.set(actionId, d);
  }

  /** True when the two paths name the same file (symlinks and relative paths resolved). */
  sameFile(a: string, b: string): boolean {
    return a === b || this.real(a) === this.real(b);
  }

  private real(file: string): string {
    let r = this.realpaths.get(file);
    if (r === undefined) {
      try {
        r = fs.realpathSync.native(file);
      } catch {
        r = path.resolve(file);
      }
      this.realpaths.set(file, r);
    }
    return r;
  }

  /** An inverse has no call site in the run: point at the action's definition (its compensate, else its type). */
  withCompensateLocation(kind: BoundaryKind, action: ActionSnapshot): ActionSnapshot {
    if (!kind.startsWith('compensate:') || action.location) return action;
    const line = actionLines(this.programText, action.type);
    const at = line?.compensateLine ?? line?.typeLine;
    return at === undefined ? action : { ...action, location: { file: this.state.config?.program ?? '', line: at, column: 1 } };
  }

  /**
   * The runtime has no boundary of its own for "verify found nothing" or "re-execute": when an in-doubt action's
   * next boundary is before-start, say which reconciliation led there, so stepping shows the whole path.
   */
  reconciliationDetail(kind: BoundaryKind, action: ActionSnapshot, detail: () => string): () => string {
    if (kind === 'action:reconcile') {
      this.reconciling.add(action.id);
      return detail;
    }
    if (!this.reconciling.delete(action.id) || kind !== 'action:before-start') return detail;
    const decided = this.decided.get(action.id) ?? this.state.config?.decide[action.id];
    return () => reconciledText(action, decided, detail());
  }

  stepFor(runId: string, idx: number): StepSnapshot | undefined {
    const known = this.steps.get(`${runId}\u0000${idx}`);
    if (known) return known;
    const row = this.state.store?.reader.step(runId, idx);
    if (!row) return undefined;
    return {
      idx,
      name: row.name,
      replayed: false,
      redone: false,
      ...(row.result !== null ? { result: fromJournalJson(row.result, () => ({ runId, table: 'steps', idx, name: row.name, column: 'result' })) } : {}),
    };
  }

  entryDetail(run: RunSnapshot, detail: string): string {
    const reader = this.state.store?.reader;
    const current = this.state.current;
    if (!reader || run.attempt <= 1 || current?.job === 'fork') {
      if (current?.job === 'fork' && current.forkedFrom) {
        return `fork of run ${current.forkedFrom.runId}: new run ${run.id} replays its first ${current.forkedFrom.stepIdx} step(s) from the journal, then runs on`;
      }
      return `${detail}; stopped on entry, before the first step`;
    }
    const replay = reader.steps(run.id, 0, reader.stepCount(run.id)).filter((s) => s.status === 'completed').length;
    const inDoubt = reader.inDoubt(run.id);
    const stopsIn = this.state.config?.stopOnReplay
      ? 'the debugger stops in them too (stopOnReplay)'
      : 'the debugger does not stop in them (stopOnReplay is off)';
    const doubt = inDoubt.length
      ? `${inDoubt.length} action(s) in doubt will be reconciled when the script reaches them: ${inDoubt.map((a) => `${a.type} ${a.id}`).join(', ')}`
      : 'no action is in doubt';
    return `${detail}. ${replay} completed step(s) replay their checkpoints without running, and ${stopsIn}; ${doubt}`;
  }

  context(at: Boundary, run: RunSnapshot): StopContext {
    const reader = this.state.store?.reader;
    const program = this.state.config?.program ?? '';
    const callers = (at.callers ?? []).map((c) => ({ run: runView(c.run, undefined), ...(c.step ? { step: stepView(c.step) } : {}) }));
    return {
      ...(callers.length ? { callers } : {}),
      kind: at.kind,
      detail: at.detail,
      run: runView(run, this.state.current?.forkedFrom),
      ...(at.step ? { step: stepView(at.step) } : {}),
      ...(at.action ? { action: actionView(at.action) } : {}),
      ...(at.sleep ? { sleep: sleepView(at.sleep) } : {}),
      compensating: this.state.compensating,
      program,
      runLocation: { file: program, line: this.runLine, column: 1 },
      checkpoint: reader ? checkpointView(reader, run.id) : { stepsJournaled: 0, inDoubt: [], awaitingApproval: [] },
      journalEntries: reader ? reader.eventCount(run.id) : 0,
    };
  }

  /** The names a debugger expression sees at `at` (a sandboxed copy: an expression cannot change the run). */
  scopeAt(at: Boundary, run: RunSnapshot | undefined): Record<string, unknown> {
    const cur = this.state.current;
    const fallback: RunSnapshot = {
      id: cur?.runId ?? '',
      agent: this.state.agent?.name ?? '',
      attempt: cur?.attempt ?? 0,
      status: 'running',
      input: cur?.input,
    };
    return sandboxCopy(evalScope(at.kind, at.detail, run ?? fallback, at.step, at.action, at.sleep)) as Record<string, unknown>;
  }
}
