// A stop as DAP shows it: frames (action → step → run at the user's lines) and the scopes of each frame.

import * as path from 'node:path';
import type { Loc, StopContext } from '../link/runnerProtocol';
import { modelCallView } from '../ai/view';
import { isLibraryFile } from '../runtime/location';
import { durationWords } from '../shared/relativeTime';

export type FrameKind = 'action' | 'step' | 'sleep' | 'run';

export interface FrameView {
  readonly kind: FrameKind;
  /** 0 for the stopped run's frames; n for those of the run n run.child calls above it (StopContext.callers[n - 1]). */
  readonly depth: number;
  readonly name: string;
  readonly location: Loc | undefined;
  readonly subtle: boolean;
  /** Code of agent-logbook or of a package in node_modules (an integration that found no user line): shown
   *  de-emphasised, so the editor focuses the user's frame below it, as js-debug's skipFiles does. */
  readonly library: boolean;
  readonly canRestart: boolean;
}

export function framesOf(ctx: StopContext): FrameView[] {
  const frames: Array<Omit<FrameView, 'depth'> & { depth?: number }> = [];
  const replayed = ctx.step?.replayed === true;
  if (ctx.action) {
    const a = ctx.action;
    frames.push({
      kind: 'action',
      name: `${a.type} ${a.id} (${a.phase})`,
      location: a.location,
      subtle: replayed || a.phase === 'skipped',
      library: false,
      canRestart: false,
    });
  }
  if (ctx.sleep) {
    // The sleep's step is the sleep: one frame, at the run.sleep line, that says until when.
    const z = ctx.sleep;
    frames.push({
      kind: 'sleep',
      name: `sleep "${z.name}" until ${z.wakeAt}${z.leftMs > 0 ? ` (${durationWords(z.leftMs)} left)` : ' (due)'}${z.replayed ? ' (replayed)' : ''}`,
      location: ctx.step?.location,
      subtle: false,
      library: false,
      canRestart: ctx.step !== undefined,
    });
  } else if (ctx.step && !ctx.compensating) {
    const s = ctx.step;
    frames.push({
      kind: 'step',
      name: `step ${s.idx + 1} "${s.name}"${s.replayed ? ' (replayed)' : s.redone ? ' (redone)' : ''}`,
      location: s.location,
      subtle: replayed,
      library: false,
      // Restarting forks the session's run: a child's step is not one of its.
      canRestart: !ctx.callers?.length,
    });
  }
  const r = ctx.run;
  const callers = ctx.callers ?? [];
  // A child run's frame sits at its current step's line (its agent is in another file), or at the call that started it.
  const childAt = ctx.step?.location ?? callers[0]?.step?.location;
  frames.push({
    kind: 'run',
    name: `${callers.length ? 'child ' : ''}run ${r.id} (${r.agent}, attempt ${r.attempt}${ctx.compensating ? ', compensating' : ''})`,
    location: callers.length && childAt ? childAt : (ctx.runLocation ?? { file: ctx.program, line: 1, column: 1 }),
    subtle: false,
    library: false,
    canRestart: false,
  });
  // The runs that called it (run.child), each at the step that made the call: the child's frames stack on theirs.
  callers.forEach((c, i) => {
    const depth = i + 1;
    const outer = callers[i + 1]?.step?.location;
    if (c.step)
      frames.push({
        kind: 'step',
        depth,
        name: `step ${c.step.idx + 1} "${c.step.name}" → child run ${i === 0 ? r.id : (callers[i - 1]?.run.id ?? '')}`,
        location: c.step.location,
        subtle: true,
        library: false,
        canRestart: false,
      });
    frames.push({
      kind: 'run',
      depth,
      name: `${i + 1 < callers.length ? 'child ' : ''}run ${c.run.id} (${c.run.agent}, attempt ${c.run.attempt})`,
      location: i + 1 < callers.length && outer ? outer : (ctx.runLocation ?? { file: ctx.program, line: 1, column: 1 }),
      subtle: true,
      library: false,
      canRestart: false,
    });
  });
  return frames.map((f) => {
    const view: FrameView = { ...f, depth: f.depth ?? 0 };
    return view.location && isLibraryFile(view.location.file) ? { ...view, subtle: true, library: true } : view;
  });
}

/** The stop as a caller frame sees it: that run and its step that called run.child (no action, journal or checkpoint of its own here). */
export function callerContext(ctx: StopContext, depth: number): StopContext {
  const c = ctx.callers?.[depth - 1];
  if (!c) return ctx;
  const { action: _action, step: _step, ...rest } = ctx;
  return { ...rest, run: c.run, ...(c.step ? { step: c.step } : {}), compensating: false };
}

export type ScopeName = 'Action' | 'Step' | 'Sleep' | 'Run' | 'Checkpoint' | 'Journal';

export function scopesOf(kind: FrameKind, ctx: StopContext, depth = 0): ScopeName[] {
  // A caller's frames (run.child) show that run and its step; the journal scopes are the stopped run's.
  if (depth > 0) return kind === 'step' ? ['Step', 'Run'] : ['Run'];
  const base: ScopeName[] = ['Run', 'Checkpoint', 'Journal'];
  if (kind === 'action') return [...(ctx.action ? (['Action'] as ScopeName[]) : []), ...(ctx.step ? (['Step'] as ScopeName[]) : []), ...base];
  if (kind === 'step') return ['Step', ...base];
  if (kind === 'sleep') return ['Sleep', ...base];
  return base;
}

/** The named values of a scope (Journal is paged from the runner instead). */
export function scopeEntries(scope: Exclude<ScopeName, 'Journal'>, ctx: StopContext): Array<[string, unknown]> {
  switch (scope) {
    case 'Run': {
      const r = ctx.run;
      return [
        ['id', r.id],
        ['agent', r.agent],
        ['status', r.status],
        ['attempt', r.attempt],
        ['input', r.input],
        ...(r.forkedFrom ? ([['forkedFrom', r.forkedFrom]] as Array<[string, unknown]>) : []),
        ['script', ctx.program],
      ];
    }
    case 'Step': {
      const s = ctx.step;
      if (!s) return [];
      return [
        ['name', s.name],
        ['index', s.idx],
        ['replayed', s.replayed],
        ['redone', s.redone],
        ...('result' in s ? ([['result', s.result]] as Array<[string, unknown]>) : []),
      ];
    }
    case 'Action': {
      const a = ctx.action;
      if (!a) return [];
      const out: Array<[string, unknown]> = [
        ['type', a.type],
        ['effect', a.effect],
        ['id', a.id],
        ['idempotencyKey', a.id],
        ['args', a.args],
        ['phase', a.phase],
        ['status', a.status],
        ['executions', a.executions],
        ['version', a.version],
        ['hasVerify', a.hasVerify],
        ['hasCompensate', a.hasCompensate],
        ['approval', a.approval],
      ];
      if (a.reconciliation) out.push(['reconciliation', a.reconciliation]);
      const model = modelCallView(a.type, a.args, a.result);
      if (model) out.unshift(['model call', model]);
      if ('result' in a) out.push(['result', a.result]);
      if (a.error !== undefined) out.push(['error', a.error]);
      return out;
    }
    case 'Sleep': {
      const z = ctx.sleep;
      if (!z) return [];
      return [
        ['name', z.name],
        ['wakeAt', z.wakeAt],
        ['left', z.leftMs > 0 ? durationWords(z.leftMs) : 'due'],
        ['leftMs', z.leftMs],
        ['durationMs', z.durationMs],
        ['index', z.stepIdx],
        ['replayed', z.replayed],
      ];
    }
    case 'Checkpoint': {
      const c = ctx.checkpoint;
      return [
        ['stepsJournaled', c.stepsJournaled],
        ['lastCheckpoint', c.lastCheckpoint ?? null],
        ['inDoubt', c.inDoubt],
        ['awaitingApproval', c.awaitingApproval],
      ];
    }
  }
}

/** The expression that names a scope entry in `evaluate`, so watches and "copy as expression" work. */
export function scopeRoot(scope: ScopeName, name: string): string | undefined {
  if (scope === 'Action') return name === 'args' ? 'args' : name === 'model call' ? undefined : `action.${name}`;
  if (scope === 'Step') return name === 'index' ? 'step.index' : `step.${name}`;
  if (scope === 'Run') return name === 'script' ? undefined : `run.${name}`;
  if (scope === 'Sleep') return name === 'left' ? undefined : name === 'index' ? 'sleep.stepIdx' : `sleep.${name}`;
  return undefined;
}

export function sourceName(file: string): string {
  return path.basename(file);
}
