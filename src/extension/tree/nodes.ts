// The tree's node objects: one per run, step, action, detail and "load more", cached by key so reveal finds them.

import type { ActionDto, RunDto, StepDto } from '../../reader/readerProtocol';

interface Base {
  readonly key: string;
  readonly parent: Node | undefined;
}

/** Where a debug session has the run paused: the journal cannot know, the session's DAP events do. */
export interface PauseInfo {
  /** The stop's reason as DAP gives it: breakpoint, step, entry, exception, pause… */
  readonly reason: string;
  /** One line for people: the top frame (step or action) and its source line. */
  readonly where: string;
  readonly file?: string;
  /** 1-based, as the debugger shows it. */
  readonly line?: number;
}

export interface RunNode extends Base {
  readonly kind: 'run';
  run: RunDto;
  stepsShown: number;
  /** Set while a debug session holds this run at a stop. */
  paused?: PauseInfo;
}

export interface StepNode extends Base {
  readonly kind: 'step';
  readonly parent: RunNode;
  step: StepDto;
  actionsShown: number;
}

export interface ActionNode extends Base {
  readonly kind: 'action';
  readonly parent: StepNode;
  action: ActionDto;
}

export interface DetailNode extends Base {
  readonly kind: 'detail';
  readonly parent: ActionNode | RunNode;
  readonly name: string;
  value: string;
}

export interface MoreNode extends Base {
  readonly kind: 'more';
  /** Runs at the root have no parent node. */
  readonly owner: RunNode | StepNode | undefined;
  remaining: number;
}

export interface MessageNode extends Base {
  readonly kind: 'message';
  text: string;
  tooltip: string;
}

export type Node = RunNode | StepNode | ActionNode | DetailNode | MoreNode | MessageNode;

export const runKey = (runId: string): string => `run:${runId}`;
export const stepKey = (runId: string, idx: number): string => `step:${runId}:${idx}`;
export const actionKey = (runId: string, id: string): string => `action:${runId}:${id}`;
