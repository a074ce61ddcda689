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
  /** The run was cancelled (from the debugger or elsewhere): it goes to its next boundary, where it stops, without stops. */
  cancelling = false;
  /** Who the next cancel heard comes from, when this runner asked it itself (a debugger request). */
  cancelSource: string | undefined;
  /** Aborted when the adapter wants the run's attention (pause, stop, cancel): a run.sleep stops waiting and shows itself. */
  private attention = new AbortController();

  constructor(readonly send: (m: FromRunner) => void) {}

  /** The signal a run.sleep waits on besides its wake time: a fresh one, unless the run's attention is still wanted. */
  sleepSignal(): AbortSignal {
    const wanted = this.stopRequested || this.cancelling || this.policy?.pauseRequested === true;
    if (this.attention.signal.aborted && !wanted) this.attention = new AbortController();
    return this.attention.signal;
  }

  /** Wakes a sleep that is waiting, so the run passes a boundary (where it pauses or stops). */
  interruptSleep(): void {
    this.attention.abort();
  }

  output(text: string, category: 'console' | 'important' = 'console'): void {
    this.send({ type: 'output', category, text: text.endsWith('\n') ? text : `${text}\n` });
  }
}
