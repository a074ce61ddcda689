// The exception-style filters the adapter offers: which runtime boundary each one stops at, and its default.

import type { ExceptionFilter } from './runnerProtocol';

export interface FilterInfo {
  readonly filter: ExceptionFilter;
  readonly label: string;
  readonly description: string;
  readonly default: boolean;
  /** The boundary kind it stops at. */
  readonly kind: string;
}

export const FILTERS: readonly FilterInfo[] = [
  { filter: 'actionFailed', label: 'Action failed', description: "Stop when an action's execute throws.", default: true, kind: 'action:failed' },
  {
    filter: 'inDoubt',
    label: 'In-doubt action being reconciled',
    description: 'Stop before reconciling an action a crash left between started and committed.',
    default: true,
    kind: 'action:reconcile',
  },
  {
    filter: 'nonIdempotent',
    label: 'Non-idempotent action about to execute',
    description: 'Stop before every non-idempotent action starts.',
    default: false,
    kind: 'action:before-start',
  },
  {
    filter: 'approval',
    label: 'Approval gate',
    description: 'Stop at approval gates, to approve or reject from the debugger.',
    default: true,
    kind: 'action:approval',
  },
  {
    filter: 'compensation',
    label: 'Compensation step',
    description: 'Stop before each inverse runs during compensation.',
    default: false,
    kind: 'compensate:before',
  },
  {
    filter: 'sleep',
    label: 'Durable sleep (run.sleep)',
    description: 'Stop when a run.sleep starts to wait: its wake time is journaled; Variables show it and what is left.',
    default: false,
    kind: 'sleep:waiting',
  },
  {
    filter: 'eventWait',
    label: 'Event wait',
    description: 'Stop where run.waitFor finds no event yet, to send one from the debugger (or go on, and the run stops waiting).',
    default: true,
    kind: 'event:wait',
  },
];

export const DEFAULT_FILTERS: readonly ExceptionFilter[] = FILTERS.filter((f) => f.default).map((f) => f.filter);
