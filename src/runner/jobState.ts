// What the runner's parts share about the job in hand: its config, journal, agent, stop policy and the run it drives.

import type { AgentDefinition } from '../runtime/define';
import type { Store } from '../runtime/store';
import type { Breakpoints, FromRunner, RunnerConfig } from '../link/runnerProtocol';
import type { StopPolicy } from './stopPolicy';

export type JobKind = 'launch' | 'resume' | 'compensate' | 'fork';

/** The run of the job in hand; `announced` once the adapter was told it started. */
export interface CurrentRun {
  runId: string;
  attempt: number;
  input: unknown;
  readonly job: JobKind;
  readonly forkedFrom?: { runId: string; stepIdx: number };
  announced: boolean;
}

export class RunnerState {
  config: RunnerConfig | undefined;
  store: Store | undefined;
  agent: AgentDefinition | undefined;
  /** A new one per job; undefined before the first. */
  policy: StopPolicy | undefined;
  breakpoints: Breakpoints = { lines: [], functions: [], filters: [] };
  current: CurrentRun | undefined;
  compensating = false;
  /** True while runs are driven (script loaded, journal open): a lost adapter then stops the run gracefully. */
  driving = false;
  /** Asked to stop (terminate, or a follow-up job): the run stops gracefully at its next boundary. */
  stopRequested = false;

  constructor(readonly send: (m: FromRunner) => void) {}

  output(text: string, category: 'console' | 'important' = 'console'): void {
    this.send({ type: 'output', category, text: text.endsWith('\n') ? text : `${text}\n` });
  }
}
