// The in-process rows: one round of F, the plain call, the action bracket (full, group, read-only) and checkpoints.

import { startRun, type Store } from '../src/runtime';
import type { FsyncFloor, SqliteFloor } from './floor';
import type { RawBracket } from './rawBracket';
import type { RawV2 } from './rawV2';
import { breathe, median } from './measure';
import { actionAgent, checkpointAgent, plainCalls } from './workload';
import { modelCalls, samplesAfterCalls, toolCalls } from './aiRows';

export interface EngineConfig {
  /** fsync-floor samples taken after each probe; pooled, they give the round's F. */
  readonly floorSamples: number;
  readonly plainCalls: number;
  readonly actions: number;
  readonly readOnlyActions: number;
  /** State sizes in bytes, with how many checkpoints of each per round. */
  readonly checkpoints: ReadonlyArray<{ readonly bytes: number; readonly count: number }>;
}

/** One round's medians, µs. Keys are stable: the report and the smoke test read them. */
export type EngineRound = Record<string, number>;

/** Median wall time per run.do, and the median CPU time per run.do into `cpu`. */
async function actions(
  store: Store,
  kind: 'non-idempotent' | 'read-only',
  count: number,
  durability: 'full' | 'group',
  cpu?: { perAction: number },
): Promise<number> {
  const times: number[] = [];
  const cpus: number[] = [];
  const outcome = await startRun(store, actionAgent(kind, count, times, cpus), {
    script: 'bench/workload.ts',
    input: {},
    durability,
    log: () => undefined,
    role: 'bench',
  });
  if (cpu) cpu.perAction = median(cpus);
  if (outcome.status !== 'completed') throw new Error(`bench run ${outcome.runId} ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
  return median(times);
}

async function checkpoints(store: Store, bytes: number, count: number, cpu: { perStep: number }): Promise<number> {
  const times: number[] = [];
  const cpus: number[] = [];
  const outcome = await startRun(store, checkpointAgent(bytes, count, times, cpus), {
    script: 'bench/workload.ts',
    input: {},
    log: () => undefined,
    role: 'bench',
  });
  if (outcome.status !== 'completed') throw new Error(`bench run ${outcome.runId} ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
  cpu.perStep = median(cpus);
  return median(times);
}

/**
 * One interleaved round. The probes run in a rotated order each round so that no figure always follows the same
 * neighbour (a checkpoint of 1 MB leaves dirty pages behind that the next fsync pays for).
 */
export async function engineRound(
  store: Store,
  floor: FsyncFloor,
  sqliteFloor: SqliteFloor,
  raw: RawBracket,
  cfg: EngineConfig,
  round: number,
  /** Format v2's writes in raw SQL (bench/rawV2.ts): what SQLite alone does with them, beside v1's `raw`. */
  v2?: RawV2,
): Promise<EngineRound> {
  const out: EngineRound = {};
  const floorTimes: number[] = [];
  const sTimes: number[] = [];
  const tTimes: number[] = [];

  const probes: Array<[string, () => Promise<number> | number]> = [
    [
      'plain',
      async () => {
        const cpus: number[] = [];
        const times = await plainCalls(cfg.plainCalls, cpus);
        out['plain.cpu'] = median(cpus);
        return median(times);
      },
    ],
    ['action.full', () => actions(store, 'non-idempotent', cfg.actions, 'full')],
    ['bracket.full', () => median(raw.samples(cfg.actions, false))],
    ['action.group', () => actions(store, 'non-idempotent', cfg.actions, 'group')],
    ['bracket.group', () => median(raw.samples(cfg.actions, true))],
    ['ai.model.bare', async () => median(await modelCalls(store, cfg.actions, false))],
    ['ai.model', async () => median(await modelCalls(store, cfg.actions, true))],
    ['bracket.model', () => median(raw.oneCommitSamples(cfg.actions))],
    ['bracket.checkpoint.1024', () => median(raw.checkpointSamples(cfg.actions, 1024))],
    ['bracket.model.afterCall', async () => median(await samplesAfterCalls(() => raw.oneCommitSamples(1), cfg.actions))],
    ['F.afterCall', async () => median(await samplesAfterCalls(() => floor.samples(1), cfg.actions))],
    ...(v2
      ? ([
          ['v2.full', () => median(v2.samples(cfg.actions, false))],
          ['v2.group', () => median(v2.samples(cfg.actions, true))],
          ['v2.model', () => median(v2.oneCommitSamples(cfg.actions))],
        ] as Array<[string, () => number]>)
      : []),
    ['ai.tool.bare', async () => median(await toolCalls(store, cfg.actions, false))],
    ['ai.tool', async () => median(await toolCalls(store, cfg.actions, true))],
    [
      'action.readOnly',
      async () => {
        const cpu = { perAction: Number.NaN };
        const wall = await actions(store, 'read-only', cfg.readOnlyActions, 'full', cpu);
        out['action.readOnly.cpu'] = cpu.perAction;
        return wall;
      },
    ],
    ...cfg.checkpoints.map((c): [string, () => Promise<number>] => [
      `checkpoint.${c.bytes}`,
      async () => {
        const cpu = { perStep: Number.NaN };
        const wall = await checkpoints(store, c.bytes, c.count, cpu);
        out[`checkpoint.${c.bytes}.cpu`] = cpu.perStep;
        return wall;
      },
    ]),
  ];
  const shift = round % probes.length;
  const order = [...probes.slice(shift), ...probes.slice(0, shift)];
  for (const [name, fn] of order) {
    // F is sampled between every two probes, so the round's floor comes from the same minutes as its figures.
    floorTimes.push(...floor.samples(cfg.floorSamples));
    sTimes.push(...sqliteFloor.samples(Math.ceil(cfg.floorSamples / 2), true));
    tTimes.push(...sqliteFloor.samples(Math.ceil(cfg.floorSamples / 2), false));

    out[name] = await fn();
    await breathe();
  }
  floorTimes.push(...floor.samples(cfg.floorSamples));
  out.F = median(floorTimes);
  out.S = median(sTimes);
  out.T = median(tTimes);

  return out;
}
