// What a command was invoked on: a tree node, a run id, or an object naming a run and action (tests, the timeline).

import type { Node } from './tree/nodes';

export interface RunRef {
  readonly runId: string;
}

export interface ActionRef extends RunRef {
  readonly actionId: string;
  readonly stepIdx?: number;
}

export interface StepRef extends RunRef {
  readonly stepIdx: number;
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && 'kind' in v && 'key' in v;
}

export function runRef(arg: unknown): RunRef | undefined {
  if (typeof arg === 'string' && arg) return { runId: arg };
  if (isNode(arg)) {
    switch (arg.kind) {
      case 'run':
        return { runId: arg.run.id };
      case 'step':
        return { runId: arg.step.runId };
      case 'action':
        return { runId: arg.action.runId };
      case 'detail':
        return arg.parent.kind === 'run' ? { runId: arg.parent.run.id } : { runId: arg.parent.action.runId };
      default:
        return undefined;
    }
  }
  if (typeof arg === 'object' && arg !== null && typeof (arg as { runId?: unknown }).runId === 'string') return { runId: (arg as RunRef).runId };
  return undefined;
}

export function actionRef(arg: unknown): ActionRef | undefined {
  if (isNode(arg)) {
    if (arg.kind === 'action') return { runId: arg.action.runId, actionId: arg.action.id, stepIdx: arg.action.stepIdx };
    if (arg.kind === 'detail' && arg.parent.kind === 'action')
      return { runId: arg.parent.action.runId, actionId: arg.parent.action.id, stepIdx: arg.parent.action.stepIdx };
    return undefined;
  }
  const o = arg as { runId?: unknown; actionId?: unknown; stepIdx?: unknown } | null;
  if (typeof o === 'object' && o !== null && typeof o.runId === 'string' && typeof o.actionId === 'string') {
    return { runId: o.runId, actionId: o.actionId, ...(typeof o.stepIdx === 'number' ? { stepIdx: o.stepIdx } : {}) };
  }
  return undefined;
}

export function stepRef(arg: unknown): StepRef | undefined {
  if (isNode(arg) && arg.kind === 'step') return { runId: arg.step.runId, stepIdx: arg.step.idx };
  const o = arg as { runId?: unknown; stepIdx?: unknown; actionId?: unknown } | null;
  if (!isNode(arg) && typeof o === 'object' && o !== null && typeof o.runId === 'string' && typeof o.stepIdx === 'number' && o.actionId === undefined) {
    return { runId: o.runId, stepIdx: o.stepIdx };
  }
  return undefined;
}

/** Options a caller may pass as the second argument (tests skip the confirmation dialogs with them). */
export interface CommandOptions {
  readonly confirm?: boolean;
  readonly note?: string;
  /** Resume through the CLI instead of a debug session. */
  readonly via?: 'cli' | 'debugger';
  /** The edited answer's text for a what-if fork, instead of asking for it. */
  readonly answer?: string;
  /** The result (JSON text) of an in-doubt action decided happened, instead of asking for it; '' for none. */
  readonly result?: string;
  /** Cancel Run: compensate after the cancel (instead of asking), and the reason to journal. */
  readonly compensate?: boolean;
  readonly reason?: string;
}

export function options(arg: unknown): CommandOptions {
  return typeof arg === 'object' && arg !== null && !isNode(arg) ? arg : {};
}
