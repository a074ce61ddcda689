// Bench configurations: the full one behind `npm run bench`, and a tiny one for the smoke test (structure, not speed).

export interface BenchConfig {
  readonly name: 'full' | 'quick';
  readonly rounds: number;
  readonly floorSamples: number;
  readonly plainCalls: number;
  readonly actions: number;
  readonly readOnlyActions: number;
  readonly checkpoints: ReadonlyArray<{ readonly bytes: number; readonly count: number }>;
  /**
   * Committed actions of one unfinished step, skipped on resume: two sizes, each resumed in a fresh process; the
   * replay row is the cost per action between them. (Replay per step comes the same way from the resume sizes.)
   */
  readonly replayActionSizes: readonly [number, number];
  /** Journal sizes (actions) of the resume rows; each is resumed in a child process. */
  readonly resumeSizes: readonly number[];
  /** Actions per child for the fsync counts under strace. */
  readonly fsyncCountActions: number;
  readonly rehearsalRecipients: number;
  readonly dapSteps: number;
  readonly dapRecipients: number;
  /** A longer run of the same example, so that the fixed start-up of the adapter process counts for less. */
  readonly dapLongRecipients: number;
  readonly dapRounds: number;
  readonly sidebarRuns: number;
  readonly peerNodes: number;
  readonly peerBytes: readonly number[];
  readonly peerRounds: number;
}

export const FULL: BenchConfig = {
  name: 'full',
  rounds: 5,
  floorSamples: 40,
  plainCalls: 2000,
  actions: 60,
  readOnlyActions: 300,
  checkpoints: [
    { bytes: 1024, count: 40 },
    { bytes: 100 * 1024, count: 15 },
    { bytes: 1024 * 1024, count: 5 },
  ],
  replayActionSizes: [10_000, 50_000],
  resumeSizes: [10_000, 100_000, 1_000_000],
  fsyncCountActions: 300,
  rehearsalRecipients: 5,
  dapSteps: 1000,
  dapRecipients: 50,
  dapLongRecipients: 500,
  dapRounds: 5,
  sidebarRuns: 10_000,
  peerNodes: 100,
  peerBytes: [1024, 100 * 1024],
  peerRounds: 5,
};

export const QUICK: BenchConfig = {
  name: 'quick',
  rounds: 2,
  floorSamples: 5,
  plainCalls: 50,
  actions: 5,
  readOnlyActions: 10,
  checkpoints: [
    { bytes: 1024, count: 3 },
    { bytes: 100 * 1024, count: 2 },
    { bytes: 1024 * 1024, count: 1 },
  ],
  replayActionSizes: [100, 400],
  resumeSizes: [300, 1000, 3000],
  fsyncCountActions: 20,
  rehearsalRecipients: 2,
  dapSteps: 20,
  dapRecipients: 3,
  dapLongRecipients: 6,
  dapRounds: 1,
  sidebarRuns: 200,
  peerNodes: 10,
  peerBytes: [1024],
  peerRounds: 1,
};
