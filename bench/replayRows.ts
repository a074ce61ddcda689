// Replay cost in-process: resuming a run replays its journal; time per completed step returned, per committed action skipped.

import { resumeRun, type Store } from '../src/runtime';
import { journalAgent, probe } from './journalAgent';
import { cpuUs, nowUs } from './measure';

class ProbeReached extends Error {
  constructor() {
    super('bench probe reached');
    this.name = 'ProbeReached';
  }
}

/**
 * Resumes `runId` (journaled by the builder with `done` committed actions) up to its first new action and returns µs
 * per journaled item, wall clock and CPU. The probe throws, so the run ends failed and the next round resumes the same
 * journal again.
 */
export async function replayOnce(store: Store, runId: string, done: number, items: number): Promise<{ wallUs: number; cpuUs: number }> {
  let t1 = 0;
  let c1 = 0;
  probe.at = done;
  probe.executed = 0;
  probe.hit = () => {
    t1 = nowUs();
    c1 = cpuUs();
    throw new ProbeReached();
  };
  const c0 = cpuUs();
  const t0 = nowUs();
  const outcome = await resumeRun(store, journalAgent, runId, { log: () => undefined, role: 'bench' });
  probe.hit = () => undefined;
  probe.at = -1;
  if (t1 === 0 || outcome.error?.name !== 'ProbeReached') {
    throw new Error(`replay of ${runId} did not reach action ${done}: ${outcome.status} ${outcome.error?.message ?? ''}`);
  }
  if (probe.executed !== 0) throw new Error(`replay of ${runId} executed ${probe.executed} journaled effects again: the synthetic journal does not match the engine's`);
  return { wallUs: (t1 - t0) / items, cpuUs: (c1 - c0) / items };
}
