// The tracing row: what sending a run's traces costs per action, against a bracketed action of the same run, and what
// tracing off costs (reading the variables once per attempt). `tsx bench/traceRow.ts` runs this row alone.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { defineAction, defineAgent, openJournal } from '../src/runtime';
import { openStore } from '../src/runtime/store';
import { runSpans } from '../src/runtime/trace/spans';
import { otlpProtobuf } from '../src/runtime/trace/otlp';
import { wantsTraces } from '../src/runtime/trace/env';
import { fmtUs, median } from './measure';
import { judge, type Row } from './report';

const send = defineAction({
  type: 'bench.trace',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ i: z.number().int() }),
  key: (a, run) => `t:${run.id}:${a.i}`,
  execute: (a) => ({ ok: a.i }),
  verify: () => undefined,
});

const agent = defineAgent({
  name: 'bench-trace',
  input: z.object({ n: z.number().int() }),
  async run(run, input) {
    for (let s = 0; s < input.n / 10; s++)
      await run.step(`s${s}`, async () => {
        for (let i = 0; i < 10; i++) await run.do(send, { i: s * 10 + i });
      });
    return { done: input.n };
  },
});

export interface TraceFigures {
  readonly actionUs: number;
  readonly exportUsPerAction: number;
  readonly offUsPerAttempt: number;
}

export async function measureTraces(dir: string, actions = 2000, rounds = 5): Promise<TraceFigures> {
  const journal = path.join(dir, 'trace.db');
  const j = openJournal({ journal, agents: [agent], traces: false });
  const act: number[] = [];
  const exp: number[] = [];
  const off: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const runId = `trace-${r}`;
      const t0 = performance.now();
      await j.start(agent, { n: actions }, { runId });
      act.push(((performance.now() - t0) * 1000) / actions);
      // What the export does after the attempt, on this run: read it back, map it, encode it (the send is in the background).
      const store = openStore(journal, { readonly: true });
      try {
        const t1 = performance.now();
        const mapped = runSpans(store, runId);
        otlpProtobuf(mapped?.spans ?? [], { serviceName: 'bench' });
        exp.push(((performance.now() - t1) * 1000) / actions);
      } finally {
        store.close();
      }
      const env = { ...process.env };
      for (const k of Object.keys(env)) if (k.startsWith('OTEL_')) delete env[k];
      const t2 = performance.now();
      for (let i = 0; i < 10_000; i++) wantsTraces(env);
      off.push(((performance.now() - t2) * 1000) / 10_000);
    }
  } finally {
    j.close();
  }
  return { actionUs: median(act), exportUsPerAction: median(exp), offUsPerAttempt: median(off) };
}

export async function traceRow(work: string): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(work, 'traces-'));
  const f = await measureTraces(dir);
  const share = f.exportUsPerAction / f.actionUs;
  const j = judge(share * 100, 10);
  return {
    id: 'traces.overhead',
    section: 'traces',
    figure: 'tracing on: export cost per action (read back, map, encode OTLP protobuf) vs a bracketed action of the same run',
    value: fmtUs(f.exportUsPerAction),
    ratio: `${(share * 100).toFixed(1)}% of ${fmtUs(f.actionUs)}`,
    budget: '≤ 10% of a bracketed action',
    verdict: j.verdict,
    note: [j.miss, `tracing off: ${fmtUs(f.offUsPerAttempt)} per attempt (two variables read once: the exporter is not loaded), nothing per action`]
      .filter(Boolean)
      .join('; '),
    numbers: { exportUsPerAction: f.exportUsPerAction, actionUs: f.actionUs, offUsPerAttempt: f.offUsPerAttempt },
  };
}

if (require.main === module) {
  void traceRow(fs.mkdtempSync(path.join(os.tmpdir(), 'logbook-bench-'))).then((row) => console.log(JSON.stringify(row, null, 2)));
}
