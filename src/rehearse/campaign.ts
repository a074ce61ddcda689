// One campaign: fresh scratch files, a real SIGKILL at its point (more with --depth), resumes to the end, invariants.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProbeSeen } from './probe';
import { drive, journalOf, type ProcessContext } from './driver';
import { childEnv, runCli } from './child';
import { readSummary } from './campaignReadout';
import { readTrace, rng } from './points';
import { checkInvariants } from './invariants';
import type { CampaignResult, CampaignSetup, Point } from './reportSchema';

export type Prober = (dir: string) => Promise<ProbeSeen | undefined>;

/** Picks the next kill for a resume (--depth): rehearses that very process on a copy with tracing, then draws a point. */
async function nextKill(setup: CampaignSetup, dir: string, ctx: ProcessContext, seed: string): Promise<string | undefined> {
  const copy = `${dir}.trace`;
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(dir, copy, { recursive: true });
  try {
    // Only a file can be copied like this: --depth above 1 is refused on PostgreSQL (rehearse/rehearseCommand.ts).
    const db = journalOf(dir);
    const args = ctx.args.map((a) => (a === db ? journalOf(copy) : a));
    const trace = path.join(copy, 'trace.jsonl');
    await runCli(setup.cli, [ctx.command, ...args], childEnv(copy, { LOGBOOK_TRACE_FAULTS: trace }), copy);
    const points = readTrace(trace, ctx.index);
    if (points.length === 0) return undefined;
    return points[Math.floor(rng(seed)() * points.length)]?.spec;
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

export async function runCampaign(setup: CampaignSetup, index: number, point: Point, probe: Prober): Promise<CampaignResult> {
  const started = performance.now();
  const dir = path.join(setup.root, `campaign-${String(index + 1).padStart(4, '0')}`);
  fs.mkdirSync(dir, { recursive: true });
  try {
    const d = await drive({
      cli: setup.cli,
      script: setup.script,
      input: setup.input,
      ...(setup.events ? { events: setup.events } : {}),
      runId: setup.runId,
      dir,
      db: setup.db,
      probe: () => probe(dir),
      arm: (ctx) => {
        if (ctx.kills === 0) return ctx.index === point.process ? point.spec : undefined;
        if (ctx.kills >= setup.depth) return undefined;
        return nextKill(setup, dir, ctx, `${setup.seed}:${index}:${ctx.kills}`);
      },
    });
    const summary = readSummary(journalOf(dir, setup.db), setup.runId);
    const world = (await probe(dir))?.keys;
    const checked = checkInvariants(setup.baseline, summary, world, d.uncounted);
    let error = d.error;
    if (!error && d.kills.length === 0) error = `the crash point ${point.spec} was never reached: the script did not repeat the uncrashed run's path`;
    return {
      index,
      point,
      kills: d.kills,
      processes: d.processes,
      status: summary?.status ?? d.status,
      ...checked,
      finished: checked.finished && error === null,
      decisions: d.decisions.map((x) => ({ ...x, phase: point.point })),
      approvals: d.approvals,
      saved: d.saved,
      error,
      commands: d.commands,
      ms: performance.now() - started,
    };
  } finally {
    if (!setup.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}
