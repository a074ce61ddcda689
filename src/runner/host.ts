// The runner's driver: routes the adapter's messages to the job loop, the stop gate and the request handler.

import type { FromRunner, ToRunner } from '../link/runnerProtocol';
import { BoundaryQueue } from './boundaries';
import { errorFields } from './errorText';
import { Evaluator } from './evaluator';
import { JobLoop } from './jobs';
import { Mailbox, StopGate } from './mailbox';
import { RequestHandler } from './requests';
import { RunnerState } from './jobState';
import { StopContextBuilder } from './stopContext';
import { secretValues } from '../shared/secrets';

/**
 * Tells the adapter of every secret in this process's environment before a message that may show one: the script may
 * have loaded its own .env after the adapter started it. Stops, responses and outcomes are paced by a person or a run's
 * end, so reading the environment before each costs nothing that matters.
 */
function withSecrets(send: (m: FromRunner) => void): (m: FromRunner) => void {
  const told = new Set<string>();
  return (m) => {
    if (m.type !== 'ready' && m.type !== 'secrets') {
      const fresh = secretValues(process.env).filter((v) => !told.has(v));
      if (fresh.length) {
        for (const v of fresh) told.add(v);
        send({ type: 'secrets', values: fresh });
      }
    }
    send(m);
  };
}

export class RunnerHost {
  private readonly state: RunnerState;
  private readonly gate = new StopGate();
  private readonly jobs: JobLoop;
  private readonly requests: RequestHandler;

  constructor(
    send: (m: FromRunner) => void,
    private readonly done: (code: number) => void,
  ) {
    this.state = new RunnerState(withSecrets(send));
    const evaluator = new Evaluator();
    const mailbox = new Mailbox();
    const builder = new StopContextBuilder(this.state);
    // The queue announces a run at its entry boundary; the job loop owns announcing (it also announces compensations).
    const queue = new BoundaryQueue(this.state, builder, this.gate, (run) => this.jobs.announce(run.id, run.agent, run.attempt));
    this.jobs = new JobLoop(this.state, queue, builder, mailbox, evaluator, (reason) => this.cancelled(reason, 'elsewhere (logbook cancel)'));
    this.requests = new RequestHandler(this.state, this.gate, mailbox, builder, evaluator, () => this.requestStop());
  }

  /** True while a run is being driven (so a lost adapter stops it gracefully rather than abandoning it). */
  get running(): boolean {
    return this.state.driving;
  }

  onMessage(m: ToRunner): void {
    switch (m.type) {
      case 'start':
        this.jobs.start(m.config, m.breakpoints).then(
          (code) => this.done(code),
          (err: unknown) => {
            this.state.send({ type: 'failed', ...errorFields(err) });
            this.done(2);
          },
        );
        return;
      case 'breakpoints':
        this.state.breakpoints = m.breakpoints;
        this.state.policy?.setBreakpoints(m.breakpoints);
        return;
      case 'resume':
        this.gate.release(m.mode);
        return;
      case 'pause':
        if (this.state.policy && !this.gate.current) {
          this.state.policy.pauseRequested = true;
          this.state.interruptSleep();
        }
        return;
      case 'stop':
        this.requestStop();
        return;
      case 'request':
        this.requests.answer(m.id, m.request);
        return;
    }
  }

  requestStop(): void {
    this.state.stopRequested = true;
    this.state.interruptSleep();
    this.gate.release('continue');
  }

  /** The run was cancelled: it runs to its next boundary, where the runtime stops it `cancelled`; no stop on the way. */
  cancelled(reason: string | null, by: string): void {
    if (this.state.cancelling) return;
    this.state.cancelling = true;
    this.state.output(
      `run ${this.state.current?.runId ?? ''} was cancelled ${this.state.cancelSource ?? by}${reason ? ` (${reason})` : ''}: it stops at its next boundary`,
      'important',
    );
    this.state.interruptSleep();
    this.gate.release('continue');
  }
}
