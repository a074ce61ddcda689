// The Logbook side of the peer comparison, in its own process like the LangGraph side: N steps checkpointing a state.
// Modes: `steps` (time per step), `crash` (exit inside step K, like a killed process), `resume` (time to step K again).

import * as fs from 'node:fs';
import { z } from 'zod';
import { defineAgent, openStore, resumeRun, startRun } from '../src/runtime';
import { median, nowUs } from './measure';
import { deliver, makeState } from './workload';
import { sqliteOf } from '../src/runtime/store/sqlite';
import { dbOf } from '../src/runtime/store/db';

const [mode, db, nodesArg, bytesArg, atArg] = process.argv.slice(2);
const N = Number(nodesArg);
const BYTES = Number(bytesArg);
const AT = Number(atArg);
const RUN_ID = 'peer-run';

function out(obj: Record<string, unknown>): void {
  fs.writeSync(1, `${JSON.stringify(obj)}\n`);
}

const store = openStore(db ?? 'peer.db');
const settings = (): Record<string, unknown> => ({
  synchronous: sqliteOf(store.db).pragma('synchronous', { simple: true }),
  journalMode: sqliteOf(store.db).pragma('journal_mode', { simple: true }),
  sqlite: (dbOf(store.db).prepare('select sqlite_version() AS v').get() as { v: string }).v,
  durability: 'full',
});

const entries: number[] = [];
let tResume = 0;

const agent = defineAgent({
  name: 'bench-peer',
  input: z.object({ nodes: z.number().int(), bytes: z.number().int() }),
  async run(run, input) {
    for (let k = 0; k < input.nodes; k++) {
      await run.step(`n${k}`, () => {
        const now = nowUs();
        if (mode === 'resume' && k === AT) {
          out({ ok: true, resumeUs: now - tResume, maxRssKb: process.resourceUsage().maxRSS, ...settings() });
          process.exit(0);
        }
        if (mode === 'crash' && k === AT) process.exit(0);
        entries.push(now);
        const sent = deliver({ to: `user${k}@example.com`, body: '' }, `send:peer:${k}`);
        return { state: makeState(input.bytes, k), sent };
      });
    }
    return { nodes: input.nodes };
  },
});

async function main(): Promise<void> {
  if (mode === 'resume') {
    tResume = nowUs();
    const outcome = await resumeRun(store, agent, RUN_ID, { log: () => undefined, role: 'bench' });
    out({ ok: false, error: `the run ended ${outcome.status} without reaching step ${AT}` });
    return;
  }
  const t0 = nowUs();
  const outcome = await startRun(store, agent, {
    script: 'bench/peerChild.ts',
    input: { nodes: N, bytes: BYTES },
    runId: RUN_ID,
    log: () => undefined,
    role: 'bench',
  });
  const totalMs = (nowUs() - t0) / 1000;
  const deltas = entries.slice(1).map((t, i) => t - (entries[i] as number));
  out({ ok: outcome.status === 'completed', perStepUs: median(deltas), totalMs, stateBytes: JSON.stringify(makeState(BYTES, 0)).length, ...settings() });
}

main().catch((err: unknown) => out({ ok: false, error: String(err) }));
