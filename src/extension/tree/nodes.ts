// The tree's node objects: one per run, step, action, detail and "load more", cached by key so reveal finds them.

import type { ActionDto, RunDto, StepDto } from '../../reader/protocol';

interface Base {
  readonly key: string;
  readonly parent: Node | undefined;
}

export interface RunNode extends Base {
  readonly kind: 'run';
  run: RunDto;
  stepsShown: number;
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
