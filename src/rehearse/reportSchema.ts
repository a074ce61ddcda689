// The rehearsal's data: fault points, campaign results and the report, as zod schemas shared by parent and children.

import * as z from 'zod/mini';

export const Point = z.object({
  /** Which driving process of the uncrashed run hit it (1 = `run`; later ones resume after an approval or a stop). */
  process: z.int().check(z.positive()),
  /** The --crash-at spec, e.g. `payments.charge#1@after-execute`. */
  spec: z.string(),
  /** The fault point, e.g. `action:after-execute`. */
  point: z.string(),
  target: z.string(),
  occurrence: z.int().check(z.positive()),
});
export type Point = z.infer<typeof Point>;

const Outcome = z.enum(['verified', 'verified-absent', 're-executed', 'decided-happened', 'decided-not-happened']);

export const CampaignResult = z.object({
  index: z.int(),
  point: Point,
  /** Crash specs that fired, in order (the first is the campaign's point; more with --depth). */
  kills: z.array(z.string()),
  processes: z.int(),
  status: z.string(),
  finished: z.boolean(),
  sameOutput: z.boolean(),
  sameEffects: z.nullable(z.boolean()),
  effectsDiff: z.array(z.string()),
  duplicates: z.array(z.object({ type: z.string(), key: z.string(), count: z.int(), source: z.enum(['journal', 'provider']) })),
  settled: z.array(z.object({ type: z.string(), id: z.string(), how: Outcome })),
  decisions: z.array(
    z.object({
      type: z.string(),
      id: z.string(),
      decision: z.enum(['happened', 'not-happened']),
      source: z.enum(['provider record', 'assumed']),
      withResult: z.optional(z.boolean()),
      phase: z.string(),
    }),
  ),
  unsettled: z.array(z.object({ type: z.string(), id: z.string() })),
  approvals: z.array(z.object({ type: z.string(), id: z.string() })),
  stepsRedoneMax: z.int(),
  /** Per action type: effects already committed when a kill struck, which the resume did not repeat. */
  saved: z.record(z.string(), z.int()),
  error: z.nullable(z.string()),
  /** The `logbook` commands the campaign ran, in order (argv without --journal and --json), to reproduce it by hand. */
  commands: z.array(z.array(z.string())),
  ms: z.number(),
});
export type CampaignResult = z.infer<typeof CampaignResult>;

export const Baseline = z.object({
  status: z.string(),
  output: z.unknown(),
  probe: z.nullable(z.record(z.string(), z.array(z.string()))),
  processes: z.int(),
  steps: z.int(),
  actions: z.int(),
  approvals: z.array(z.object({ type: z.string(), id: z.string() })),
  ms: z.number(),
});
export type Baseline = z.infer<typeof Baseline>;

/** What a campaign child needs to run campaigns: everything but the point. */
export const CampaignSetup = z.object({
  cli: z.string(),
  script: z.string(),
  input: z.unknown(),
  runId: z.string(),
  root: z.string(),
  depth: z.int().check(z.positive()),
  seed: z.string(),
  keep: z.boolean(),
  /** A PostgreSQL server the campaigns keep their journals on (a schema each), or null for a SQLite file each. */
  db: z.nullable(z.string()),
  baseline: Baseline,
  /** The events a waiting run is sent (--event NAME=JSON), by name: the k-th wait for a name gets the k-th (or the last). */
  events: z.optional(z.record(z.string(), z.array(z.unknown()))),
});
export type CampaignSetup = z.infer<typeof CampaignSetup>;

export const ToCampaignChild = z.discriminatedUnion('type', [
  z.object({ type: z.literal('setup'), setup: CampaignSetup }),
  z.object({ type: z.literal('campaign'), index: z.int(), point: Point }),
  z.object({ type: z.literal('exit') }),
]);
export type ToCampaignChild = z.infer<typeof ToCampaignChild>;

export const FromCampaignChild = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('result'), result: CampaignResult }),
  z.object({ type: z.literal('failed'), index: z.int(), message: z.string() }),
]);
export type FromCampaignChild = z.infer<typeof FromCampaignChild>;
