// LangGraph.js savers side by side: Logbook's (synchronous=FULL) and LangGraph's SqliteSaver (its NORMAL), per
// superstep against F and in journal growth over a long thread. `tsx bench/langgraphRows.ts` prints just these rows.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnJson } from './children';
import { FsyncFloor } from './floor';
import { fmtRatio, fmtUs, median } from './measure';
import type { Row } from './report';

const CHILD = path.join(__dirname, 'langgraphSaver.mjs');
const SECTION = 'LangGraph.js savers: agent-logbook/langgraph vs SqliteSaver';

interface SaverRun {
  readonly ok: boolean;
  readonly perStepUs: number;
  readonly bytes: number;
  readonly synchronous: number;
  readonly steps: number;
}

export interface LangGraphConfig {
  /** Supersteps per thread for the write cost. */
  readonly steps: number;
  /** Supersteps of the growth row (the issue asks for 1,000). */
  readonly growthSteps: number;
  readonly rounds: number;
}

const mib = (b: number): string => `${(b / (1024 * 1024)).toFixed(1)} MiB`;

export async function langgraphRows(work: string, cfg: LangGraphConfig, log: (line: string) => void): Promise<Row[]> {
  const floor = new FsyncFloor(work);
  const F: number[] = [];
  const lb: number[] = [];
  const lg: number[] = [];
  const rg: number[] = [];
  try {
    for (let r = 0; r < cfg.rounds; r++) {
      const dir = fs.mkdtempSync(path.join(work, 'lg-saver-'));
      try {
        F.push(floor.sample(50));
        const a = (await spawnJson<SaverRun>(CHILD, ['logbook', path.join(dir, 'lb.db'), String(cfg.steps)])).json;
        const b = (await spawnJson<SaverRun>(CHILD, ['sqlite', path.join(dir, 'lg.db'), String(cfg.steps)])).json;
        const c = (await spawnJson<SaverRun>(CHILD, ['rungraph', path.join(dir, 'rg.db'), String(cfg.steps)])).json;
        lb.push(a.perStepUs);
        lg.push(b.perStepUs);
        rg.push(c.perStepUs);
        log(
          `  langgraph savers round ${r + 1}/${cfg.rounds}: logbook ${fmtUs(a.perStepUs)}/superstep (FULL), SqliteSaver ${fmtUs(b.perStepUs)} (NORMAL), runGraph ${fmtUs(c.perStepUs)}`,
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    const dir = fs.mkdtempSync(path.join(work, 'lg-growth-'));
    let growth: { lb: SaverRun; lg: SaverRun };
    try {
      growth = {
        lb: (await spawnJson<SaverRun>(CHILD, ['logbook', path.join(dir, 'lb.db'), String(cfg.growthSteps)], { timeoutMs: 900_000 })).json,
        lg: (await spawnJson<SaverRun>(CHILD, ['sqlite', path.join(dir, 'lg.db'), String(cfg.growthSteps)], { timeoutMs: 900_000 })).json,
      };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const f = median(F);
    const mLb = median(lb);
    const mLg = median(lg);
    const mRg = median(rg);
    return [
      {
        id: 'langgraph.superstep',
        section: SECTION,
        figure: `per superstep, ${cfg.steps} supersteps appending to a message list: Logbook's saver at FULL vs SqliteSaver at NORMAL`,
        value: `${fmtUs(mLb)} vs ${fmtUs(mLg)}`,
        ratio: `${(mLb / f).toFixed(2)} F vs ${(mLg / f).toFixed(2)} F`,
        budget: 'report',
        verdict: 'info',
        note: `Logbook's saver commits every checkpoint and its writes at synchronous=FULL (fsynced before the next superstep); LangGraph's SqliteSaver runs at synchronous=NORMAL (read back: ${growth.lg.synchronous}), so its commits are not fsynced and a power loss can lose its latest checkpoints. Both with durability "sync", in fresh processes; Logbook = ${fmtRatio(mLb / mLg)} SqliteSaver. F = ${fmtUs(f)}. Medians of ${lb.length} rounds.`,
        numbers: { logbookUs: mLb, sqliteSaverUs: mLg, F: f },
      },
      {
        id: 'langgraph.rungraph',
        section: SECTION,
        figure: `per superstep, the same graph driven by runGraph as a Logbook run (each node execution a journaled step) vs the saver alone`,
        value: `${fmtUs(mRg)} vs ${fmtUs(mLb)}`,
        ratio: `${(mRg / f).toFixed(2)} F vs ${(mLb / f).toFixed(2)} F`,
        budget: 'report',
        verdict: 'info',
        note: `runGraph adds the node's step (started and checkpointed, each durable) to the saver's writes; both at synchronous=FULL, durability "sync". runGraph = ${fmtRatio(mRg / mLb)} the saver alone. F = ${fmtUs(f)}. Medians of ${rg.length} rounds.`,
        numbers: { runGraphUs: mRg, saverUs: mLb, F: f },
      },
      {
        id: 'langgraph.growth',
        section: SECTION,
        figure: `journal growth over ${cfg.growthSteps} supersteps of a growing message list (and a 16 KB document written once)`,
        value: `${mib(growth.lb.bytes)} vs ${mib(growth.lg.bytes)}`,
        ratio: `${fmtRatio(growth.lb.bytes / growth.lg.bytes)} SqliteSaver`,
        budget: 'report',
        verdict: 'info',
        note: "File size after a WAL checkpoint. Logbook's saver stores a channel's value once per version, so the unchanged document is stored once; SqliteSaver stores every channel in every checkpoint. The message list changes every superstep, so both store it whole each time: its cost grows with the square of the thread's length on both.",
        numbers: { logbookBytes: growth.lb.bytes, sqliteSaverBytes: growth.lg.bytes },
      },
    ];
  } finally {
    floor.close();
  }
}

if (require.main === module) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-bench-lg-'));
  void langgraphRows(work, { steps: 200, growthSteps: 1000, rounds: 3 }, (l) => void process.stderr.write(`${l}\n`))
    .then((rows) => {
      for (const r of rows) process.stdout.write(`${r.id}\t${r.figure}\n  ${r.value}  (${r.ratio})\n  ${r.note ?? ''}\n`);
    })
    .finally(() => fs.rmSync(work, { recursive: true, force: true }));
}
